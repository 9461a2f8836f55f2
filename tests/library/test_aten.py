"""torch.ops.aten's overloads: each takes its ATen schema's arguments and gives PyTorch's
result; packets, overloads and missing names behave (and are named) as PyTorch's."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")


def _both(fn):
    """fn(lib, aten) for tensorlib and for PyTorch."""
    return fn(tl, tl.ops.aten), fn(torch, torch.ops.aten)


def _same(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
        return
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def _x(lib):
    return lib.tensor([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]])


CASES = {
    "add.Tensor": lambda lib, a: a.add.Tensor(_x(lib), _x(lib), alpha=2),
    "add.Scalar": lambda lib, a: a.add.Scalar(_x(lib), 2),
    "sub.Tensor": lambda lib, a: a.sub.Tensor(_x(lib), lib.ones(3), alpha=3),
    "mul.Tensor": lambda lib, a: a.mul.Tensor(_x(lib), _x(lib)),
    "div.Tensor": lambda lib, a: a.div.Tensor(_x(lib), 2.0),
    "add_.Tensor": lambda lib, a: a.add_.Tensor(_x(lib), lib.ones(3), alpha=2),
    "sub_.Tensor": lambda lib, a: a.sub_.Tensor(_x(lib), lib.ones(3)),
    "neg.default": lambda lib, a: a.neg.default(_x(lib)),
    "clone.default": lambda lib, a: a.clone.default(_x(lib).t(),
                                                    memory_format=lib.contiguous_format),
    "_to_copy.default": lambda lib, a: a._to_copy.default(_x(lib), dtype=lib.int64),
    "alias.default": lambda lib, a: a.alias.default(_x(lib)[:, 1:]),
    "detach.default": lambda lib, a: a.detach.default(_x(lib).requires_grad_()),
    "sort.default": lambda lib, a: a.sort.default(_x(lib), 1, True),
    "sort.stable": lambda lib, a: a.sort.stable(lib.tensor([2, 1, 2, 1]), stable=True, dim=0),
    "cat.default": lambda lib, a: a.cat.default([_x(lib), _x(lib)], 1),
    "flip.default": lambda lib, a: a.flip.default(_x(lib), [0, 1]),
    "index_select.default": lambda lib, a: a.index_select.default(_x(lib), 1,
                                                                  lib.tensor([2, 0])),
    "slice.Tensor": lambda lib, a: a.slice.Tensor(_x(lib), -1, -2, None, 1),
    "slice.Tensor step": lambda lib, a: a.slice.Tensor(lib.arange(10), 0, 1, 100, 3),
    "index.Tensor": lambda lib, a: a.index.Tensor(_x(lib), [None, lib.tensor([2, 0])]),
    "select.int": lambda lib, a: a.select.int(_x(lib), 1, -1),
    "unsqueeze.default": lambda lib, a: a.unsqueeze.default(_x(lib), 1),
    "squeeze.dim": lambda lib, a: a.squeeze.dim(lib.ones(1, 2), 0),
    "squeeze.default": lambda lib, a: a.squeeze.default(lib.ones(1, 2, 1)),
    "unbind.int": lambda lib, a: a.unbind.int(_x(lib), 1),
    "view.default": lambda lib, a: a.view.default(_x(lib), [3, 2]),
    "mm.default": lambda lib, a: a.mm.default(_x(lib), _x(lib).t()),
    "_sparse_addmm.default": lambda lib, a: a._sparse_addmm.default(
        lib.ones(2, 2), _x(lib).to_sparse(), _x(lib).t(), beta=2, alpha=0.5),
}


@pytest.mark.parametrize("name", list(CASES))
def test_overload_matches_torch(name):
    ours, theirs = _both(CASES[name])
    _same(ours, theirs)


@pytest.mark.parametrize("lib", [tl, torch], ids=["tensorlib", "torch"])
def test_views_and_copies_as_in_torch(lib):
    x = lib.arange(6.0)
    alias = lib.ops.aten.alias.default(x)
    assert alias._base is x and alias is not x
    assert lib.ops.aten.slice.Tensor(x, 0, 1)._base is x
    lib.ops.aten._to_copy.default(x).add_(1)
    assert x[0].item() == 0.0


def test_autograd_flows_through_overloads():
    x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    tl.ops.aten.index_select.default(tl.ops.aten.mul.Tensor(x, x), 0,
                                     tl.tensor([0, 2])).sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 6.0]


def test_names_repr_and_identity():
    aten = tl.ops.aten
    for lib_aten in (aten, torch.ops.aten):
        overload = lib_aten.add.Tensor
        assert overload.name() == "aten::add.Tensor" and overload.__name__ == "add.Tensor"
        assert overload.overloadpacket is lib_aten.add
    assert repr(aten.add.Tensor) == repr(torch.ops.aten.add.Tensor)
    assert repr(aten.add) == repr(torch.ops.aten.add)
    assert aten.sort.stable is aten.sort.stable and {aten.cat.default: 1}[aten.cat.default]
    assert aten.add(tl.ones(2), 1).tolist() == [2.0, 2.0]     # the packet, like torch.add


def test_missing_names_raise_attribute_error_as_torch():
    for lib_aten in (tl.ops.aten, torch.ops.aten):
        with pytest.raises(AttributeError, match="'_OpNamespace' 'aten' object has no "
                                                 "attribute 'no_such_op'"):
            lib_aten.no_such_op
        with pytest.raises(AttributeError, match="The underlying op of 'aten.add' has no "
                                                 "overload name 'nope'"):
            lib_aten.add.nope
    assert not hasattr(tl.ops.aten, "no_such_op")


def test_errors_as_torch():
    for lib in (tl, torch):
        with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in "
                                             r"range of \[-2, 1\], but got 5\)"):
            lib.ops.aten.slice.Tensor(lib.ones(2, 2), 5)
        with pytest.raises(RuntimeError, match="doesn't support converting to a different "
                                               "layout"):
            lib.ops.aten._to_copy.default(lib.ones(2), layout=lib.sparse_coo)
