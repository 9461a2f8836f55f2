"""The CPU cat kernel and the small-copy C loop (copy_kernels), the reductions and where read
straight off the tensors: against torch on every layout they take and those they hand to
numpy (other dtypes, overlapping memory)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlib as tl
from tensorlib_cpu import copy_kernels, fastreduce

torch = pytest.importorskip("torch")


def _both(shape, dtype="float64", seed=0):
    values = np.random.default_rng(seed).standard_normal(shape)
    return tl.tensor(values, dtype=getattr(tl, dtype)), torch.tensor(values,
                                                                    dtype=getattr(torch, dtype))


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_cat_layouts(dim):
    parts = [_both((3, 4, 5), seed=s) for s in range(3)]
    ours = [parts[0][0], parts[1][0].transpose(0, 2).contiguous().transpose(0, 2),
            parts[2][0][:, :, :]]
    theirs = [p[1] for p in parts]
    assert np.array_equal(tl.cat(ours, dim).numpy(), torch.cat(theirs, dim).numpy())
    # a strided piece, narrowed along the joined dim
    a, ta = _both((6, 4, 10))
    assert np.array_equal(tl.cat([a[::2, :, ::2], ours[0]], dim).numpy(),
                          torch.cat([ta[::2, :, ::2], theirs[0]], dim).numpy())


def _layout(x, perm, step, ones):
    """x permuted, strided along its first dim and with size-1 dims inserted at `ones`: the
    runs the copy loop may merge, and those it must not."""
    x = x.permute(*perm)[::step]
    for d in ones:
        x = x.unsqueeze(min(d, x.dim()))
    return x


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data())
def test_copy_cat_and_stack_on_any_layout(shape, data):
    """copy, cat and stack (the C loop with merged dims) equal torch's on permuted, strided
    views with size-1 dims, along every dim."""
    perm = data.draw(st.permutations(range(len(shape))))
    step = data.draw(st.integers(1, 2))
    ones = data.draw(st.lists(st.integers(0, len(shape)), max_size=2))
    pieces = [_both(tuple(shape), seed=s) for s in range(3)]
    ours = [_layout(p[0], perm, step, ones) for p in pieces]
    theirs = [_layout(p[1], perm, step, ones) for p in pieces]
    out = tl.empty(*ours[0].shape, dtype=tl.float64)
    copy_kernels.copy(out, ours[0])
    assert np.array_equal(out.numpy(), theirs[0].numpy())
    for dim in range(ours[0].dim()):
        assert np.array_equal(tl.cat(ours, dim).numpy(), torch.cat(theirs, dim).numpy())
    for dim in range(ours[0].dim() + 1):
        assert np.array_equal(tl.stack(ours, dim).numpy(), torch.stack(theirs, dim).numpy())


def test_stack_promotes_and_keeps_gradients():
    a, ta = _both((2, 3), "float32")
    b, tb = _both((2, 3), "int64")
    assert np.array_equal(tl.stack([a, b], 1).numpy(), torch.stack([ta, tb], 1).numpy())
    x = tl.ones(2, 3, requires_grad=True)
    y = tl.ones(2, 3, requires_grad=True)
    out = tl.stack([x, y * 2], 2)
    assert type(out.grad_fn).__name__ == "StackBackward0"
    (out * tl.arange(2.0)).sum().backward()
    assert x.grad.tolist() == [[0.0] * 3] * 2 and y.grad.tolist() == [[2.0] * 3] * 2
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size, but "
                                           r"got \[2, 3\] at entry 0 and \[3\] at entry 1"):
        tl.stack([x, tl.ones(3)])


def test_cat_promotes_and_skips_legacy_empties():
    a, ta = _both((2, 3), "float32")
    b, tb = _both((2, 3), "int64")
    assert np.array_equal(tl.cat([a, b, tl.zeros(0)], 0).numpy(),
                          torch.cat([ta, tb, torch.zeros(0)], 0).numpy())
    for dtype in ("bool", "int8", "float16", "complex128"):
        x = tl.ones(2, 2, dtype=getattr(tl, dtype))
        assert tl.cat([x, x], 1).tolist() == [[x[0, 0].item()] * 4] * 2


def test_cat_errors_unchanged():
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 1. "
                                           "Expected size 2 but got size 3 for tensor number 1"):
        tl.cat([tl.zeros(2, 2), tl.zeros(3, 2)], 1)
    with pytest.raises(RuntimeError, match="Tensors must have same number of dimensions: got 2 "
                                           "and 1"):
        tl.cat([tl.zeros(2, 2), tl.zeros(2)], 0)
    with pytest.raises(RuntimeError, match="zero-dimensional tensor \\(at position 1\\)"):
        tl.cat([tl.zeros(2), tl.zeros(())], 0)


def test_small_copies_and_overlap():
    a, ta = _both((5, 6))
    out = tl.empty(6, 5, dtype=tl.float64)
    copy_kernels.copy(out, a.t())
    assert np.array_equal(out.numpy(), ta.t().numpy())
    y = tl.arange(8.0)
    y[1:].copy_(y[:-1].clone())
    assert y.tolist() == [0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    z = tl.arange(8.0)
    z[1:].copy_(z[:-1])                  # overlapping memory: numpy's buffered copy
    assert z.tolist() == [0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    s = tl.tensor(3.5)
    t = tl.tensor(0.0)
    t.copy_(s)
    assert t.item() == 3.5
    i = tl.tensor([1, 2, 3], dtype=tl.int32)
    assert tl.zeros(3).copy_(i).tolist() == [1.0, 2.0, 3.0]     # a cast: numpy


def test_reduce_tensor_whole_bool_and_int64():
    m = tl.tensor([[False, False], [False, True]])
    assert m.any().item() is True and m.all().item() is False
    assert m.t().any().item() is True                          # strided: numpy's ufunc
    assert tl.zeros(3, dtype=tl.bool).any().item() is False
    assert tl.ones(3, dtype=tl.bool).all().item() is True
    big = tl.tensor([2 ** 62, 2 ** 62, 2 ** 62, 5])
    assert big.sum().item() == torch.tensor([2 ** 62] * 3 + [5]).sum().item()   # wraps
    assert big.amax().item() == 2 ** 62 and big.amin().item() == 5
    assert fastreduce.reduce_tensor("sum", tl.empty((1, 1), dtype=tl.int64),
                                    tl.tensor([[1, 2], [3, 4]]).t(), (0, 1)) is False


@pytest.mark.parametrize("dims", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions_on_views(dims, keepdim):
    x, tx = _both((7, 9), "float32")
    for ours, theirs in ((x, tx), (x.t(), tx.t()), (x[::2, 1::3], tx[::2, 1::3])):
        for name in ("sum", "amax", "amin", "mean"):
            kw = {} if dims is None else {"dim": dims, "keepdim": keepdim}
            got = getattr(ours, name)(**kw).numpy()
            want = getattr(theirs, name)(**kw).numpy()
            assert got.shape == want.shape
            assert np.allclose(got, want, rtol=1e-6, atol=1e-6)


def test_dims_and_sizes_errors_unchanged():
    x = tl.zeros(2, 3)
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times in the list of dims"):
        x.sum((1, -1))
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.sum(2)
    with pytest.raises(TypeError, match="size must be a sequence of ints"):
        x.view(None, 2)


def test_where_layouts():
    c = tl.tensor([[True, False, True], [False, True, False]])
    a, ta = _both((2, 3))
    b, tb = _both((3, 2), seed=1)
    tc = torch.tensor(c.tolist())
    assert np.array_equal(tl.where(c, a, b.t()).numpy(), torch.where(tc, ta, tb.t()).numpy())
    assert np.array_equal(tl.where(c, a, 0.5).numpy(), torch.where(tc, ta, 0.5).numpy())
    assert np.array_equal(tl.where(c.t(), b, a.t()).numpy(),
                          torch.where(tc.t(), tb, ta.t()).numpy())
    assert tl.where(c[0], 1, 2).tolist() == [1, 2, 1]


_ITEM_DTYPES = ("bool", "int8", "float16", "float32", "float64", "complex128")


def _random(shape, dtype, seed=0):
    values = np.random.default_rng(seed).standard_normal(shape) * 50
    t = torch.tensor(values).to(getattr(torch, dtype))
    return tl.tensor(t.numpy()), t


@pytest.mark.parametrize("dtype", _ITEM_DTYPES)
@pytest.mark.parametrize("shape", [(3, 19, 13, 5), (2, 130, 9, 300)])    # the second: threads
def test_transposing_copies_match_torch(dtype, shape):
    """Permuted copies go by tiles (any element size, partial edge tiles, batch dims), also
    into a permuted destination and from a strided source."""
    x, tx = _random(shape, dtype)
    for perm in ((0, 3, 1, 2), (3, 2, 1, 0), (1, 0, 3, 2), (2, 0, 1, 3), (0, 1, 3, 2)):
        assert np.array_equal(x.permute(*perm).contiguous().numpy(),
                              tx.permute(*perm).contiguous().numpy())
    got = x[:, ::2, :, 1:].permute(2, 1, 0, 3).contiguous()
    assert np.array_equal(got.numpy(), tx[:, ::2, :, 1:].permute(2, 1, 0, 3).contiguous().numpy())
    out = tl.empty(*shape[::-1], dtype=x.dtype).permute(3, 2, 1, 0)
    out.copy_(x)
    assert np.array_equal(out.numpy(), tx.numpy())


@pytest.mark.parametrize("n", [1000, 300_001])
def test_large_and_row_copies(n):
    x, tx = _random((n, 3), "float32")
    assert np.array_equal(x.clone().numpy(), tx.clone().numpy())
    assert np.array_equal(x[::2].contiguous().numpy(), tx[::2].contiguous().numpy())
    assert np.array_equal(x[:, 1:].contiguous().numpy(), tx[:, 1:].contiguous().numpy())
    # a broadcast source (sum's gradient) and one long strided row, split over the threads
    row, trow = x[:, 1], tx[:, 1]
    assert np.array_equal(row.expand(4, n).contiguous().numpy(),
                          trow.expand(4, n).contiguous().numpy())
    assert np.array_equal(x.reshape(-1)[::5].contiguous().numpy(),
                          tx.reshape(-1)[::5].contiguous().numpy())
    one = x[0, 0]
    assert np.array_equal(one.expand(n, 3).contiguous().numpy(),
                          tx[0, 0].expand(n, 3).contiguous().numpy())


def _special_floats(dtype):
    """Values at the conversions' edges: NaN of both signs, infinities, half's largest
    finite value and the first that rounds up to inf, ties between halves (to even),
    half and float subnormals, signed zeros."""
    special = [float("nan"), -float("nan"), float("inf"), -float("inf"), 65504.0, 65519.99,
               65520.0, -65520.0, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 2 ** -24, 2 ** -25,
               3 * 2 ** -26, 6e-8, 1e-40, -1e-45, 0.0, -0.0, 1e39, -3e38, 1 / 3]
    rest = np.random.default_rng(1).standard_normal(70_000 - len(special)) * 1000
    return torch.tensor(np.concatenate([special, rest])).to(getattr(torch, dtype))


@pytest.mark.parametrize("src,dst", [("float32", "float16"), ("float16", "float32"),
                                     ("float16", "float64"), ("float32", "float64"),
                                     ("float64", "float32"), ("float64", "float16")])
@pytest.mark.parametrize("n", [37, 70_000])
def test_float_conversions_bit_for_bit(src, dst, n):
    """dtype casts give torch's bits: rounding to nearest even, overflow to inf, subnormals
    kept, NaN's sign kept; on contiguous tensors (the threaded C path) and strided ones."""
    t = _special_floats(src)[:n]
    x = tl.tensor(t.numpy())
    want = t.to(getattr(torch, dst)).numpy()
    got = x.to(getattr(tl, dst)).numpy()
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    assert np.array_equal(got[~nan].view(np.uint8), want[~nan].view(np.uint8))
    strided = x[::3].to(getattr(tl, dst)).numpy()
    assert np.array_equal(strided, want[::3], equal_nan=True)
    # a transposed source (rows gathered) and a broadcast one (sum's gradient, cast back)
    rows = n // 7 * 7
    grid, tgrid = x[:rows].view(7, -1).t(), t[:rows].view(7, -1).t()
    assert np.array_equal(grid.to(getattr(tl, dst)).numpy(),
                          tgrid.to(getattr(torch, dst)).numpy(), equal_nan=True)
    wide, twide = x[3:4].expand(5, n), t[3:4].expand(5, n)
    assert np.array_equal(wide.to(getattr(tl, dst)).numpy(),
                          twide.to(getattr(torch, dst)).numpy(), equal_nan=True)
