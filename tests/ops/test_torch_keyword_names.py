"""Ops called with PyTorch's own parameter names as keywords (torch.pow(x, exponent=2),
torch.mm(input=a, mat2=b), x.reshape(shape=...), x.uniform_(from=0, to=1)): real programs
pass them, and our functions once named their parameters otherwise. Each call runs in torch
first; the result here must equal torch's."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

_DATA = {"X": np.arange(1.0, 13.0).reshape(3, 4) / 7, "T": np.arange(12.0).reshape(4, 3) / 5,
         "S": np.array([[2.0, 0.5, 0.1], [0.5, 3.0, 0.2], [0.1, 0.2, 1.5]]),
         "V": np.linspace(-1.0, 2.0, 4), "W": np.linspace(0.5, 1.5, 3),
         "B": np.arange(18.0).reshape(2, 3, 3) / 9}

_FUNCTION_CASES = [
    ("pow", ("X",), {"exponent": 2}), ("pow", (), {"input": "X", "exponent": "X"}),
    ("float_power", ("X",), {"exponent": 3}), ("lerp", (), {"input": "X", "end": "X",
                                                            "weight": 0.25}),
    ("mm", ("X",), {"mat2": "T"}), ("mm", (), {"input": "X", "mat2": "T"}),
    ("bmm", ("B",), {"mat2": "B"}), ("mv", ("X",), {"vec": "V"}),
    ("dot", ("V",), {"tensor": "V"}), ("vdot", ("V",), {"other": "V"}),
    ("outer", ("V",), {"vec2": "W"}), ("ger", ("V",), {"vec2": "W"}),
    ("det", (), {"input": "S"}), ("slogdet", (), {"input": "S"}),
    ("matrix_power", (), {"input": "S", "n": 3}), ("logdet", (), {"input": "S"}),
    ("addmm", (), {"input": "S", "mat1": "S", "mat2": "S", "beta": 0.5}),
    ("addmv", (), {"input": "W", "mat": "S", "vec": "W", "alpha": 2}),
    ("baddbmm", (), {"input": "B", "batch1": "B", "batch2": "B"}),
    ("addr", (), {"input": "S", "vec1": "W", "vec2": "W"}),
    ("max", ("X",), {"other": "X"}), ("min", ("X",), {"other": "X"}),
]
_METHOD_CASES = [
    ("X", "pow", {"exponent": 2}), ("X", "float_power", {"exponent": 2}),
    ("X", "lerp", {"end": "X", "weight": 0.75}), ("X", "mm", {"mat2": "T"}),
    ("B", "bmm", {"mat2": "B"}), ("X", "mv", {"vec": "V"}), ("V", "dot", {"tensor": "V"}),
    ("V", "outer", {"vec2": "W"}), ("S", "addmm", {"mat1": "S", "mat2": "S"}),
    ("X", "max", {"other": "X"}), ("X", "reshape", {"shape": (4, 3)}),
    ("V", "repeat", {"repeats": (2, 2)}), ("X", "tile", {"dims": (2,)}),
    ("S", "matrix_power", {"n": 2}),
]


def _value(lib, v):
    if isinstance(v, str) and v in _DATA:
        return lib.tensor(_DATA[v])
    return v


def _same(ours, theirs):
    if isinstance(theirs, tuple):
        for a, b in zip(ours, theirs, strict=True):
            _same(a, b)
        return
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name,args,kwargs", _FUNCTION_CASES,
                         ids=[f"{n}-{'-'.join(k)}" for n, _, k in _FUNCTION_CASES])
def test_functions_take_torch_keyword_names(name, args, kwargs):
    def call(lib):
        return getattr(lib, name)(*[_value(lib, a) for a in args],
                                  **{k: _value(lib, v) for k, v in kwargs.items()})
    _same(call(tl), call(torch))


@pytest.mark.parametrize("self_name,name,kwargs", _METHOD_CASES,
                         ids=[f"{n}-{'-'.join(k)}" for _, n, k in _METHOD_CASES])
def test_methods_take_torch_keyword_names(self_name, name, kwargs):
    def call(lib):
        return getattr(_value(lib, self_name), name)(
            **{k: _value(lib, v) for k, v in kwargs.items()})
    _same(call(tl), call(torch))


def test_random_fills_take_from_and_to():
    x = tl.empty(1000, dtype=tl.float64).uniform_(**{"from": 2.0, "to": 3.0})
    assert 2.0 <= x.min().item() and x.max().item() < 3.0
    ints = tl.empty(1000, dtype=tl.int64).random_(**{"from": 5, "to": 8})
    assert set(ints.tolist()) == {5, 6, 7}


def test_wrong_keywords_still_fail_like_torch():
    x = tl.ones(2, 2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'mat3'"):
        tl.addmm(x, x, mat3=x)
    with pytest.raises(TypeError, match="missing .*'mat2'"):
        tl.addmm(x, mat1=x)
    with pytest.raises(TypeError, match="multiple values"):
        x.reshape(4, shape=(4,))
    with pytest.raises(TypeError, match="unexpected keyword argument 'size'"):
        x.repeat(size=(2,))
