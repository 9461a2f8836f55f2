"""PyTorch's argument parser takes NumPy spellings for every op: axis= for dim=, keepdims=
for keepdim=, x=/a=/x1= for input=, x2= for other=. Each case runs in torch first; the ones
torch accepts must give torch's result here."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

_X = np.arange(1.0, 13.0).reshape(3, 4)
_Y = np.linspace(-1.0, 2.0, 12).reshape(3, 4)

# (function name, positional args, keywords); "X"/"Y" stand for the two tensors
_FUNCTION_CASES = [
    ("sum", ("X",), {"axis": 1}), ("sum", ("X",), {"axis": 1, "keepdims": True}),
    ("sum", (), {"input": "X", "axis": 0}), ("sum", (), {"a": "X"}),
    ("mean", ("X",), {"axis": 0}), ("mean", ("X",), {"axis": 1, "keepdims": True}),
    ("prod", ("X",), {"axis": 1}), ("cumsum", ("X",), {"axis": 0}),
    ("cumprod", ("X",), {"axis": 1}), ("max", ("X",), {"axis": 0}),
    ("min", ("X",), {"axis": 1, "keepdims": True}), ("argmax", ("X",), {"axis": 0}),
    ("argmin", ("X",), {"axis": 1}), ("amax", ("X",), {"axis": 0}),
    ("amin", ("X",), {"axis": 1, "keepdims": True}), ("std", ("X",), {"axis": 0}),
    ("var", ("X",), {"axis": 1, "keepdims": True}), ("logsumexp", ("X",), {"axis": 1}),
    ("softmax", ("X",), {"axis": 1}), ("log_softmax", ("X",), {"axis": 0}),
    ("squeeze", ("X",), {"axis": 0}), ("unsqueeze", ("X",), {"axis": 1}),
    ("flip", ("X",), {"axis": [0]}), ("all", ("X",), {"axis": 0}), ("any", ("X",), {"axis": 1}),
    ("sort", ("X",), {"axis": 0}), ("argsort", ("X",), {"axis": 1}),
    ("topk", ("X", 2), {"axis": 0}), ("cat", (["X", "Y"],), {"axis": 1}),
    ("stack", (["X", "Y"],), {"axis": 0}), ("median", ("X",), {"axis": 1}),
    ("count_nonzero", ("X",), {"axis": 0}),
    ("add", (), {"x1": "X", "x2": "Y"}), ("add", ("X",), {"other": "Y"}),
    ("add", (), {"input": "X", "other": "Y", "alpha": 2}), ("mul", ("X",), {"x2": "Y"}),
    ("sub", (), {"x1": "X", "x2": "Y"}), ("maximum", (), {"x1": "X", "x2": "Y"}),
    ("eq", ("X",), {"x2": "Y"}), ("matmul", (), {"x1": "X", "x2": "T"}),
    ("abs", (), {"x": "X"}), ("exp", (), {"a": "X"}), ("neg", (), {"input": "X"}),
    ("transpose", ("X",), {"dim0": 0, "dim1": 1}), ("diff", ("X",), {"axis": 0}),
    ("sum", ("X",), {"dim": 0, "axis": 0}), ("cumsum", ("X",), {"axes": 0}),
]
_METHOD_CASES = [
    ("sum", (), {"axis": 0}), ("mean", (), {"axis": 1, "keepdims": True}),
    ("max", (), {"axis": 1}), ("cumsum", (), {"axis": 1}), ("cumprod", (), {"axis": 0}),
    ("std", (), {"axis": 1}), ("softmax", (), {"axis": 0}), ("unsqueeze", (), {"axis": 0}),
    ("squeeze", (), {"axis": 0}), ("add", (), {"x2": "Y"}), ("add", (), {"other": "Y"}),
    ("narrow", (), {"axis": 0, "start": 1, "length": 2}), ("argmax", (), {"axis": 1}),
    ("amax", (), {"axis": 0, "keepdims": True}), ("flip", (), {"axis": [1]}),
    ("sum", (), {"input": "Y"}),
]


def _value(lib, v, device=None):
    if isinstance(v, list):
        return [_value(lib, e, device) for e in v]
    if v in ("X", "Y", "T"):
        data = {"X": _X, "Y": _Y, "T": _Y.T.copy()}[v]
        t = lib.tensor(data)
        return t.to(device) if device is not None else t
    return v


def _same(ours, theirs):
    if isinstance(theirs, tuple):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
        return
    np.testing.assert_allclose(ours.cpu().numpy(), theirs.numpy(), rtol=1e-6)


def _compare(call_torch, call_ours):
    try:
        theirs = call_torch()
    except TypeError:
        with pytest.raises(TypeError):
            call_ours()
        return
    _same(call_ours(), theirs)


@pytest.mark.parametrize("name,args,kwargs", _FUNCTION_CASES,
                         ids=[f"{n}-{'-'.join(k)}" for n, _, k in _FUNCTION_CASES])
def test_function_keywords_match_torch(name, args, kwargs, device):
    def call(lib, dev=None):
        return getattr(lib, name)(*_value(lib, list(args), dev),
                                  **{k: _value(lib, v, dev) for k, v in kwargs.items()})
    _compare(lambda: call(torch), lambda: call(tl, device))


@pytest.mark.parametrize("name,args,kwargs", _METHOD_CASES,
                         ids=[f"{n}-{'-'.join(k)}" for n, _, k in _METHOD_CASES])
def test_method_keywords_match_torch(name, args, kwargs, device):
    def call(lib, dev=None):
        self = _value(lib, "X", dev)
        return getattr(self, name)(*args, **{k: _value(lib, v, dev) for k, v in kwargs.items()})
    _compare(lambda: call(torch), lambda: call(tl, device))


def test_aliases_keep_autograd_and_out():
    x = tl.tensor(_X, requires_grad=True)
    tl.cumsum(x, axis=1).sum().backward()
    assert x.grad.tolist() == [[4.0, 3.0, 2.0, 1.0]] * 3
    out = tl.empty(3, 4, dtype=tl.float64)
    assert tl.cumsum(tl.tensor(_X), axis=0, out=out) is out


def test_an_alias_and_its_name_together_are_refused():
    with pytest.raises(TypeError, match="multiple values"):
        tl.sum(tl.ones(2), dim=0, axis=0)
    with pytest.raises(TypeError):
        tl.ones(2).sum(keepdim=True, keepdims=True)


def test_overload_keywords_of_the_split_family():
    """PyTorch's tensor_split/hsplit... overloads name their argument indices=, sections= or
    tensor_indices_or_sections=; torchvision calls tensor_split(x, indices=(-1,), dim=-3)."""
    x = tl.arange(12.0).reshape(2, 6)
    parts = tl.tensor_split(x, indices=(-1,), dim=1)
    assert [tuple(p.shape) for p in parts] == [(2, 5), (2, 1)]
    assert [tuple(p.shape) for p in x.tensor_split(sections=3, dim=1)] == [(2, 2)] * 3
    assert [tuple(p.shape) for p in tl.tensor_split(x, tensor_indices_or_sections=tl.tensor(2),
                                                     dim=0)] == [(1, 6)] * 2
    assert [tuple(p.shape) for p in tl.hsplit(x, indices=[4])] == [(2, 4), (2, 2)]
    assert [tuple(p.shape) for p in tl.vsplit(x, sections=2)] == [(1, 6)] * 2
    with pytest.raises(TypeError):
        tl.tensor_split(x, 2, indices=(1,))
