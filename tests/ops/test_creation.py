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
    with pytest.raises(TypeError, match="invalid data type .str."):
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


@pytest.mark.parametrize("args", [(0, 1, 2), (7,), (0,), (3, 3), (-7, 20, 4), (20, -7, -4),
                                  (2 ** 40, 2 ** 40 + 10, 3), (-5, 6, 11)])
def test_arange_of_python_ints(args):
    """Integer bounds take numpy's integer arange directly: the same values, int64."""
    expect = list(range(*args))
    got = tl.arange(*args)
    assert got.dtype is tl.int64 and got.tolist() == expect and got.shape == (len(expect),)
    assert tl.arange(*args, requires_grad=False).tolist() == expect
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        tl.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        tl.arange(5, 0, 1)


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


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "float16",
                                   "bfloat16"])
def test_linspace_equals_pytorch_bit_for_bit(dtype):
    """PyTorch's values exactly (its step's rounding, one fused multiply-add per value): code
    builds a grid with linspace and reads its spacing back as grid[1] - grid[0]."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    cases = [(-1.2190476190476192, 1.2190476190476192, 128), (0, 1, 7), (-3, 5, 1000),
             (2.5, -7.25, 33), (0, 10, 11), (5, 5, 4), (1, 2, 1)]
    cases += [(*rng.uniform(-100, 100, 2), int(rng.integers(2, 400))) for _ in range(40)]
    for start, end, steps in cases:
        ours = tl.linspace(start, end, steps, dtype=getattr(tl, dtype))
        theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype))
        assert ours.tolist() == theirs.tolist(), (start, end, steps)


@pytest.mark.parametrize("start, end, steps", [(0, 1, 5), (-3.5, 7.25, 11), (2, -2, 4),
                                               (1, 1, 3), (0, 1, 1), (0, 1, 0)])
def test_linspace_matches_numpy(start, end, steps, device):
    t = tl.linspace(start, end, steps, device=device)
    assert t.dtype is tl.float32 and t.device.type == tl.device(device).type
    np.testing.assert_allclose(t.cpu().numpy(), np.linspace(start, end, steps), rtol=1e-6,
                               atol=1e-6)
    if steps > 1:
        assert t[0].item() == np.float32(start) and t[-1].item() == np.float32(end)
    d = tl.linspace(start, end, steps, dtype=tl.float64)
    np.testing.assert_allclose(d.numpy(), np.linspace(start, end, steps), rtol=1e-14)


def test_linspace_integer_dtype_and_errors():
    assert tl.linspace(0, 10, 4, dtype=tl.int64).tolist() == [0, 3, 6, 10]   # torch's values
    assert tl.linspace(tl.tensor(0.0), tl.tensor(1.0), 3).tolist() == [0.0, 0.5, 1.0]
    assert tl.linspace(0, 1, 3, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        tl.linspace(0, 1, -1)
    with pytest.raises(TypeError):
        tl.linspace(0, 1, 2.5)


@pytest.mark.parametrize("base", [10.0, 2, 0.5])
def test_logspace_matches_numpy(base, device):
    t = tl.logspace(-2, 3, 7, base=base, device=device)
    np.testing.assert_allclose(t.cpu().numpy(), np.logspace(-2, 3, 7, base=base), rtol=1e-6)
    d = tl.logspace(0, 2, 3, dtype=tl.float64)
    assert d.dtype is tl.float64 and d.tolist() == [1.0, 10.0, 100.0]


@pytest.mark.parametrize("n, m", [(3, None), (2, 4), (4, 2), (0, 3), (1, 1)])
def test_eye_matches_numpy(n, m, device):
    t = tl.eye(n, m, device=device)
    assert t.dtype is tl.float32
    np.testing.assert_array_equal(t.cpu().numpy(), np.eye(n, m))
    assert tl.eye(n, m, dtype=tl.int32).dtype is tl.int32
    assert tl.eye(2, dtype=tl.bool).tolist() == [[True, False], [False, True]]
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        tl.eye(-1)


def test_empty_strided_and_scalar_tensor(device):
    t = tl.empty_strided((2, 3), (1, 2), device=device)
    assert t.shape == (2, 3) and t.stride() == (1, 2) and t.storage_offset() == 0
    t.fill_(1.5)
    assert t.cpu().tolist() == [[1.5] * 3] * 2
    assert tl.empty_strided((0, 4), (4, 1), dtype=tl.int64).shape == (0, 4)
    with pytest.raises(RuntimeError, match="dimensionality of sizes"):
        tl.empty_strided((2, 3), (1,))
    s = tl.scalar_tensor(3)
    assert s.shape == () and s.dtype is tl.float32 and s.item() == 3.0
    assert tl.scalar_tensor(2, dtype=tl.int64, device=device).item() == 2
    assert tl.scalar_tensor(1.0, requires_grad=True).requires_grad


def test_tensor_of_zero_dim_tensors():
    t = tl.tensor([tl.tensor(1), tl.tensor(2)])
    assert t.dtype is tl.int64 and t.tolist() == [1, 2]
    assert tl.tensor([tl.tensor(1.5), 2]).dtype is tl.float32
    assert tl.tensor([tl.tensor(1, dtype=tl.int32), tl.tensor(2, dtype=tl.int32)]).dtype \
        is tl.int32
    mixed = tl.tensor([[tl.tensor(1.0, dtype=tl.float64), 2], [3, tl.tensor(4)]])
    assert mixed.dtype is tl.float64 and mixed.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert tl.tensor([tl.tensor([7])]).tolist() == [7]       # one-element tensors count
    with pytest.raises(ValueError, match="only one element tensors"):
        tl.tensor([tl.tensor([1, 2]), tl.tensor([3, 4])])
    assert tl.tensor([tl.ones(()), tl.zeros(())], dtype=tl.int8).dtype is tl.int8


@pytest.mark.parametrize("name", ["empty", "zeros", "ones", "rand", "randn"])
def test_factories_take_their_sizes_as_a_size_keyword(name):
    # torch.empty(size=(in, out)) is how graph-attention code writes it; empty once
    # swallowed the keyword and made a 0-dim tensor
    factory = getattr(tl, name)
    assert factory(size=(3, 4)).shape == (3, 4)
    assert factory(size=[2]).shape == (2,)
    assert factory(size=()).shape == ()
    with pytest.raises(TypeError, match="both positionally and as a keyword"):
        factory(2, size=(3,))


@pytest.mark.parametrize("name", ["new_empty", "new_zeros", "new_ones"])
def test_new_factories_take_a_size_keyword(name):
    x = tl.ones(2, dtype=tl.float64)
    out = getattr(x, name)(size=(2, 5))
    assert out.shape == (2, 5) and out.dtype == tl.float64
    with pytest.raises(TypeError, match="both positionally and as a keyword"):
        getattr(x, name)(1, size=(3,))


@pytest.mark.parametrize("make", [
    lambda **kw: tl.zeros(2, 3, **kw), lambda **kw: tl.ones(2, 3, **kw),
    lambda **kw: tl.full((2, 3), 7.0, **kw), lambda **kw: tl.empty(2, 3, **kw),
    lambda **kw: tl.zeros_like(tl.ones(2, 3), **kw), lambda **kw: tl.ones_like(tl.ones(2, 3), **kw),
    lambda **kw: tl.ones(1).new_empty(2, 3, **kw)])
def test_factories_take_the_strided_layout_and_refuse_sparse_ones(make):
    """Pyro's transforms pass layout= (torch.zeros(..., layout=x.layout)); a sparse layout is
    refused rather than ignored."""
    t = make(layout=tl.strided)
    assert t.layout is tl.strided and t.shape == (2, 3)
    with pytest.raises(NotImplementedError, match="layout=.*sparse_coo"):
        make(layout=tl.sparse_coo)


@pytest.mark.parametrize("args", [
    lambda m: (m.tensor(0), m.tensor(3), m.tensor(2) / 3), lambda m: (np.float32(0.5), 3),
    lambda m: (np.int64(1), np.int32(5)), lambda m: (m.tensor(5),), lambda m: (m.tensor(4.0),),
    lambda m: (0, m.tensor(2, dtype=m.uint8)), lambda m: (m.tensor(True), 4),
    lambda m: (m.tensor(-1.5), 2, m.tensor(0.5, dtype=m.float64))])
def test_arange_reads_0dim_tensors_and_numpy_scalars_as_numbers(args):
    """A floating 0-dim tensor or NumPy scalar bound makes the range floating, as PyTorch's
    Scalar arguments do (kornia's draw_line steps by dx / dy, a float tensor)."""
    torch = pytest.importorskip("torch")
    ours, theirs = tl.arange(*args(tl)), torch.arange(*args(torch))
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    assert ours.tolist() == theirs.tolist()


def test_arange_refuses_tensors_with_dimensions():
    with pytest.raises(TypeError, match="argument 'end' must be Number, not Tensor"):
        tl.arange(tl.tensor([4.0]))
