"""Tensor.new_* factories and the small Tensor predicates (type_as, ndimension, is_signed,
is_nonzero, is_same_size, swapdims) against torch."""
import warnings

import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")


def _same(got, want):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


def test_new_factories_take_dtype_and_device(device):
    x = tl.ones(2, dtype=tl.float64, device=device)
    tx = torch.ones(2, dtype=torch.float64)
    _same(x.new_zeros(2, 3), tx.new_zeros(2, 3))
    _same(x.new_ones((4,)), tx.new_ones((4,)))
    _same(x.new_full((2, 2), 3), tx.new_full((2, 2), 3))
    _same(x.new_tensor([1, 2]), tx.new_tensor([1, 2]))
    _same(x.new_zeros(3, dtype=tl.int32), tx.new_zeros(3, dtype=torch.int32))
    assert tuple(x.new_empty(1, 5).shape) == (1, 5) and x.new_empty(2).dtype == tl.float64
    assert x.new_zeros(2).device == x.device
    assert x.new_ones(2, requires_grad=True).requires_grad
    with pytest.warns(UserWarning, match="copy construct"):
        copy = x.new_tensor(x)
    assert copy is not x and not copy.requires_grad


def test_small_predicates_and_conversions(device):
    x = tl.tensor([[1.5, -2.0]], device=device)
    assert x.type_as(tl.tensor([1], dtype=tl.int32)).dtype == tl.int32
    assert x.ndimension() == 2 and x.is_same_size(tl.zeros(1, 2)) and tl.is_same_size(x, x)
    assert x.is_signed() and not tl.tensor([1], dtype=tl.uint8).is_signed()
    assert tl.is_floating_point(x) and not tl.is_floating_point(tl.tensor([1]))
    assert tl.is_nonzero(tl.tensor([0.5])) and not tl.tensor(0).is_nonzero()
    for bad in (tl.zeros(0), tl.zeros(2)):
        with pytest.raises(RuntimeError):
            bad.is_nonzero()
    _same(x.swapdims(0, 1), torch.tensor([[1.5, -2.0]]).swapdims(0, 1))
    _same(tl.swapdims(x, 1, 0), torch.swapdims(torch.tensor([[1.5, -2.0]]), 1, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tl.iinfo(tl.int8).min == -128


@pytest.mark.parametrize("name,shape,spec", [("hsplit", (4, 6), 3), ("hsplit", (6,), [1, 4]),
                                             ("vsplit", (4, 6), 2), ("dsplit", (2, 2, 6), [2]),
                                             ("hsplit", (4, 6), 4), ("vsplit", (6,), 2),
                                             ("dsplit", (2, 6), 2)])
def test_h_v_dsplit_match_torch(name, shape, spec):
    a = np.arange(int(np.prod(shape))).reshape(shape)
    try:
        want = getattr(torch, name)(torch.tensor(a), spec)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            getattr(tl, name)(tl.tensor(a), spec)
        return
    got = getattr(tl, name)(tl.tensor(a), spec)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _same(g, w)
    assert len(getattr(tl.tensor(a), name)(spec)) == len(want)


def test_dtype_shorthands():
    x = tl.tensor([1.5, -2.0])
    assert (x.char().dtype, x.cfloat().dtype, x.cdouble().dtype) == (tl.int8, tl.complex64,
                                                                      tl.complex128)
