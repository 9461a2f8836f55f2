"""small_binary (the C loop for add/sub/mul/div of float tensors, split over threads from
SMALL_MAX elements on) against numpy bit for bit, specials included, on the layouts it takes;
the others it refuses (False) and the ops still answer through numpy."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib_cpu import small_binary

UFUNCS = [np.add, np.subtract, np.multiply, np.true_divide]
SPECIALS = [0.0, -0.0, 1.0, -3.5, 1e-310, 3e38, np.inf, -np.inf, np.nan, 7.25]


def _pair(dtype, n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    k = min(n, len(SPECIALS))
    a[:k] = np.array(SPECIALS[:k], dtype)
    b[:k] = np.array(SPECIALS[::-1][:k], dtype)
    return a, b


@pytest.mark.parametrize("ufunc", UFUNCS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 4, 10, 1001, 1 << 16, (1 << 17) + 3])
def test_matches_numpy_bitwise(ufunc, dtype, n):
    a, b = _pair(dtype, n)
    op = small_binary.op_code(ufunc)
    cases = [(tl.from_numpy(a), tl.from_numpy(b), a, b),
             (tl.from_numpy(a), tl.from_numpy(b[:1].copy()).reshape(()).expand(n), a, b[0]),
             (tl.from_numpy(a[:1].copy()).expand(n), tl.from_numpy(b), a[0], b),
             (tl.from_numpy(a[:1].copy()).expand(n), tl.from_numpy(b[:1].copy()).expand(n),
              np.full(n, a[0]), b[0])]
    for ta, tb, na, nb in cases:
        out = tl.empty((n,), dtype=ta.dtype)
        assert small_binary.run(op, out, ta, tb)
        with np.errstate(all="ignore"):
            expected = ufunc(na, nb, dtype=dtype)
        assert np.array_equal(out.numpy().view(np.uint8), np.asarray(expected).view(np.uint8))


def test_refuses_what_it_does_not_take():
    add = small_binary.op_code(np.add)
    assert small_binary.op_code(np.maximum) == 0
    x = tl.arange(12.0)
    out = tl.empty((6,), dtype=tl.float32)
    assert small_binary.run(add, out, x.float()[::2], x.float()[1::2]) is False    # strided
    assert small_binary.run(add, out, x.double()[:6], x.double()[:6]) is False   # dtypes
    i = tl.arange(6)
    assert small_binary.run(add, tl.empty((6,), dtype=tl.int64), i, i) is False  # integers
    rows = tl.zeros(256, 512)[:, :256]
    assert small_binary.run(add, tl.empty((256, 256)), rows, rows) is False      # threaded rows
    y = tl.arange(6.0)
    assert small_binary.run(add, y[1:], y[1:], y[:-1]) is False      # partial overlap


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_split_over_threads_matches_numpy_bitwise(threads):
    """Large outputs run as one share per thread (aligned to SHARE_ALIGN elements): the
    shares' ends, a length that leaves the last thread a ragged share, in place."""
    n = 3 * 1024 * 25 + 7
    a, b = _pair(np.float32, n)
    add, mul = small_binary.op_code(np.add), small_binary.op_code(np.multiply)
    before = tl.get_num_threads()
    tl.set_num_threads(threads)
    try:
        out = tl.empty((n,))
        assert small_binary.run(mul, out, tl.from_numpy(a), tl.from_numpy(b))
        with np.errstate(all="ignore"):
            assert np.array_equal(out.numpy().view(np.uint8), (a * b).view(np.uint8))
            inplace = tl.from_numpy(a.copy())
            assert small_binary.run(add, inplace, inplace, tl.from_numpy(b))
            assert np.array_equal(inplace.numpy().view(np.uint8), (a + b).view(np.uint8))
    finally:
        tl.set_num_threads(before)


def test_gradient_of_a_broadcast_times_a_scalar():
    """sum's backward hands mul an expanded (all strides 0) gradient and the 3 is a 0-dim
    tensor: both operands are single values."""
    x = tl.randn(4, 3, requires_grad=True)
    (x * 3).sum().backward()
    assert x.grad.tolist() == [[3.0] * 3] * 4


def test_in_place_and_overlap_through_the_ops():
    y = tl.arange(6.0)
    y[1:].add_(y[:-1])                  # numpy buffers the overlap: the old values are read
    assert y.tolist() == [0.0, 1.0, 3.0, 5.0, 7.0, 9.0]
    z = tl.ones(4)
    z.mul_(3.0).add_(z)                 # exact overlap runs in the loop
    assert z.tolist() == [6.0, 6.0, 6.0, 6.0]


@pytest.mark.parametrize("ufunc", UFUNCS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_strided_views_bitwise(ufunc, dtype):
    """Column blocks of one matrix (an LSTM's gates): rows contiguous at a longer stride,
    against a contiguous operand, a broadcast value and another block."""
    rng = np.random.default_rng(3)
    m = rng.standard_normal((7, 12)).astype(dtype)
    m[0, :len(SPECIALS)] = np.array(SPECIALS, dtype)
    c = rng.standard_normal((7, 3)).astype(dtype)
    tm, tc = tl.from_numpy(m), tl.from_numpy(c)
    op = small_binary.op_code(ufunc)
    cases = [(tm[:, 3:6], tc, m[:, 3:6], c), (tc, tm[:, 6:9], c, m[:, 6:9]),
             (tm[:, 0:3], tm[:, 9:12], m[:, 0:3], m[:, 9:12]),
             (tm[:, 3:6], tl.tensor(2.5, dtype=tm.dtype).expand(7, 3), m[:, 3:6], dtype(2.5))]
    for ta, tb, na, nb in cases:
        out = tl.empty((7, 3), dtype=tm.dtype)
        assert small_binary.run(op, out, ta, tb)
        with np.errstate(all="ignore"):
            expected = ufunc(na, nb, dtype=dtype)
        assert np.array_equal(out.numpy().view(np.uint8), expected.view(np.uint8))


def test_row_strided_into_its_own_storage_is_refused():
    m = tl.arange(24.0).reshape(4, 6)
    add = small_binary.op_code(np.add)
    assert small_binary.run(add, m[:, :3].contiguous(), m[:, :3], m[:, 3:]) is True
    flat = tl.arange(24.0)
    out = flat[:12].view(4, 3)
    assert small_binary.run(add, out, flat.view(4, 6)[:, 3:], flat.view(4, 6)[:, 3:]) is False
