"""Factories: dtype inference, sharing with numpy, shapes, devices, printing."""
import numpy as np
import pytest

import tensorlib as tl


def test_tensor_infers_dtypes_like_pytorch():
    assert tl.tensor([1, 2]).dtype is tl.int64
    assert tl.tensor([1, 2.0]).dtype is tl.float32
    assert tl.tensor([True, False]).dtype is tl.bool
    assert tl.tensor(np.zeros(2)).dtype is tl.float64
    assert tl.tensor(3).shape == () and tl.tensor(3).item() == 3
    assert tl.tensor([[1, 2], [3, 4]], dtype=tl.float64).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert tl.tensor([]).shape == (0,)
    with pytest.raises(TypeError, match="Could not infer dtype of str"):
        tl.tensor(["a"])


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = tl.from_numpy(a)
    a[0, 0] = 100
    assert t[0, 0].item() == 100
    t[1, 2] = -1
    assert a[1, 2] == -1
    assert t.numpy() is not a and np.shares_memory(t.numpy(), a)
    strided = tl.from_numpy(a[:, ::2])
    assert strided.stride() == (3, 2) and strided.tolist() == [[100.0, 2.0], [3.0, -1.0]]
    with pytest.raises(ValueError, match="negative"):
        tl.from_numpy(a[:, ::-1])


def test_tensor_copies():
    a = np.zeros(3, np.float32)
    t = tl.tensor(a)
    a[0] = 1
    assert t[0].item() == 0


@pytest.mark.parametrize("fn, value", [(tl.zeros, 0), (tl.ones, 1)])
def test_zeros_ones_full_empty(fn, value, device):
    for args in [(2, 3), ((2, 3),), ([2, 3],)]:
        t = fn(*args, device=device)
        assert t.shape == (2, 3) and t.dtype is tl.float32
        assert t.cpu().tolist() == [[value] * 3] * 2
    assert tl.full((2,), 7).dtype is tl.int64
    assert tl.full((2,), 7.5, device=device).cpu().tolist() == [7.5, 7.5]
    assert tl.empty(4, 5, dtype=tl.int32, device=device).shape == (4, 5)
    assert tl.zeros_like(tl.ones(2, dtype=tl.int8)).dtype is tl.int8
    assert tl.ones(()).shape == ()
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        tl.zeros(-1, 2)


def test_arange():
    assert tl.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert tl.arange(5).dtype is tl.int64
    assert tl.arange(1, 2, 0.25).tolist() == [1.0, 1.25, 1.5, 1.75]
    assert tl.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    np.testing.assert_allclose(tl.arange(0, 1, 0.1).numpy(), np.arange(0, 1, 0.1), rtol=1e-6)


def test_metadata_and_conversion():
    t = tl.zeros(2, 3, 4)
    assert t.size() == (2, 3, 4) and t.size(-1) == 4 and t.dim() == 3 and t.numel() == 24
    assert t.stride() == (12, 4, 1) and t.stride(0) == 12 and t.storage_offset() == 0
    assert t[1].storage_offset() == 12
    assert repr(t.shape) == "tensorlib.Size([2, 3, 4])"
    assert isinstance(tl.tensor(2.5).item(), float) and isinstance(tl.tensor(2).item(), int)
    with pytest.raises(RuntimeError, match="a Tensor with 24 elements cannot be converted"):
        t.item()
    assert tl.tensor([1.5, 2.5]).long().tolist() == [1, 2]
    assert tl.tensor([0, 2]).bool().tolist() == [False, True]
    assert tl.tensor([1.0]).half().dtype is tl.float16
    assert tl.tensor([1.0]).bfloat16().tolist() == [1.0]
    assert tl.tensor([1.0]).type() == "tensorlib.FloatTensor"


def test_repr_like_pytorch():
    assert repr(tl.tensor([1.0, 2.0, 3.0])) == "tensor([1., 2., 3.])"
    assert repr(tl.tensor([[1, 2], [3, 4]])) == "tensor([[1, 2],\n        [3, 4]])"
    assert repr(tl.tensor([1.5, 2.25])) == "tensor([1.5000, 2.2500])"
    assert repr(tl.tensor([1, 2], dtype=tl.int32)) == "tensor([1, 2], dtype=tensorlib.int32)"
    assert repr(tl.tensor(3.0)) == "tensor(3.)"
    assert repr(tl.tensor([True, False])) == "tensor([ True, False])"
    assert repr(tl.zeros(0, 2)) == "tensor([], size=(0, 2))"
    assert "..." in repr(tl.zeros(2000))
    assert repr(tl.tensor([1e-6, 1.0])) == "tensor([1.0000e-06, 1.0000e+00])"
