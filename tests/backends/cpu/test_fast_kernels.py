"""fastreduce.reduce_into against plain numpy: checked against a float64 numpy reference on
every layout the kernels plan for (contiguous, permuted, stepped, reversed, broadcast, strided
outputs).
"""
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorlib_cpu import fastreduce

OPS = ["sum", "prod", "amax", "amin"]
NP_OPS = {"sum": np.sum, "prod": np.prod, "amax": np.max, "amin": np.min}


@pytest.fixture(autouse=True)
def _restore_threads():
    n = fastreduce.get_num_threads()
    yield
    fastreduce.set_num_threads(n)


def keep_shape(shape, axes):
    return tuple(1 if d in axes else n for d, n in enumerate(shape))


def make_values(rng, shape, op, dtype):
    # prod: log-normal around 1 so even 300K-element products stay in float32 range.
    if op == "prod":
        return np.exp(rng.normal(0.0, 0.002, shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def make_input(rng, shape, op, dtype, layout):
    """An array of `shape` whose memory layout is `layout`."""
    nd = len(shape)
    if layout == "contiguous" or nd == 0:
        return make_values(rng, shape, op, dtype)
    if layout == "permuted":
        perm = rng.permutation(nd)
        base = make_values(rng, tuple(shape[p] for p in perm), op, dtype)
        return base.transpose(np.argsort(perm))
    if layout == "stepped":
        steps = [int(rng.choice([1, 2, 3, -1, -2])) for _ in shape]
        base = make_values(rng, tuple(n * abs(s) for n, s in zip(shape, steps)), op, dtype)
        return base[tuple(slice(None, None, s) for s in steps)]
    if layout == "broadcast":
        small = tuple(1 if rng.random() < 0.5 else n for n in shape)
        return np.broadcast_to(make_values(rng, small, op, dtype), shape)
    raise AssertionError(layout)


def make_out(shape, dtype, layout):
    if layout == "contiguous":
        return np.empty(shape, dtype)
    if layout == "fortran":
        return np.empty(shape, dtype, order="F")
    wide = shape[:-1] + (2 * shape[-1],) if shape else shape
    return np.empty(wide, dtype)[..., ::2] if shape else np.empty(shape, dtype)


def check(x, op, axes, out_layout="contiguous"):
    """Run reduce_into and compare it with numpy in float64."""
    out = make_out(keep_shape(x.shape, axes), x.dtype, out_layout)
    count = int(np.prod([x.shape[a] for a in axes]))
    handled = fastreduce.reduce_into(op, x, axes, out)
    if op in ("amax", "amin") and count == 0 and out.size:
        assert handled is False
        return
    assert handled is True
    if out.size == 0:
        return
    ref = NP_OPS[op](x.astype(np.float64), axis=axes, keepdims=True)
    eps = np.finfo(x.dtype).eps
    if op in ("amax", "amin"):
        np.testing.assert_array_equal(out, ref.astype(x.dtype))
    elif op == "sum":
        scale = np.sum(np.abs(x.astype(np.float64)), axis=axes, keepdims=True)
        assert np.all(np.abs(out - ref) <= 4 * eps * (np.sqrt(count) + 8) * scale + 1e-30)
    else:
        # A broadcast input repeats one value, so its product can leave the dtype's range.
        info = np.finfo(x.dtype)
        over = np.abs(ref) > info.max
        assert np.isinf(out[over]).all()
        err = np.abs(out.astype(np.float64) - ref)[~over]
        assert np.all(err <= 4 * eps * (count + 8) * np.abs(ref[~over]) + 4 * info.smallest_normal)


@st.composite
def cases(draw):
    nd = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(0, 7), min_size=nd, max_size=nd)))
    axes = tuple(sorted(draw(st.sets(st.integers(0, nd - 1), min_size=1))))
    return (shape, axes, draw(st.sampled_from(OPS)),
            draw(st.sampled_from([np.float32, np.float64])),
            draw(st.sampled_from(["contiguous", "permuted", "stepped", "broadcast"])),
            draw(st.sampled_from(["contiguous", "fortran", "strided"])),
            draw(st.integers(0, 2**32 - 1)))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_reduce_small_random(case):
    shape, axes, op, dtype, layout, out_layout, seed = case
    x = make_input(np.random.default_rng(seed), shape, op, dtype, layout)
    check(x, op, axes, out_layout)


# Shapes big enough for threads and for every plan: rows, columns, middle, whole array,
# few rows (the run is split), tall-skinny columns (the rows are split), wide columns
# (several inner slices), unmergeable dims (odometer over several reduced dims) and short
# reduced runs.
BIG = [
    ((512, 1000), (1,)), ((512, 1000), (0,)), ((64, 300, 40), (1,)), ((300, 900), (0, 1)),
    ((3, 70000), (1,)), ((70000, 3), (0,)), ((40, 10000), (0,)), ((9, 5000, 3), (0, 2)),
    ((7, 9000), (0,)), ((20, 30, 40, 50), (0, 2)), ((20, 30, 40, 50), (1, 3)),
    ((100000, 5), (1,)), ((50, 300, 20), (0, 2)),   # short runs, planned as columns
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "permuted", "stepped", "broadcast"])
@pytest.mark.parametrize("shape,axes", BIG)
@pytest.mark.parametrize("op", OPS)
def test_reduce_large(op, shape, axes, layout, dtype):
    rng = np.random.default_rng(zlib.crc32(repr((shape, axes, layout)).encode()))
    check(make_input(rng, shape, op, dtype, layout), op, axes)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_thread_counts_agree(threads):
    fastreduce.set_num_threads(threads)
    assert fastreduce.get_num_threads() == threads
    rng = np.random.default_rng(0)
    for shape, axes in BIG:
        check(rng.standard_normal(shape).astype(np.float32), "sum", axes)
        check(rng.standard_normal(shape), "amax", axes)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axes", [((5, 7), (1,)), ((5, 7), (0,)), ((6, 5, 7), (1,)),
                                        ((400, 300), (1,)), ((400, 300), (0,)), ((200000,), (0,)),
                                        ((3, 70000), (1,)), ((70000, 3), (0,))])
@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_nan_propagates(order, op, shape, axes, dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, size=max(1, flat.size // 50), replace=False)] = np.nan
    flat[rng.choice(flat.size, size=3, replace=False)] = np.inf
    flat[-1] = np.nan   # the last element too: the tail loops must see it
    x = np.asarray(x, order=order)  # F order swaps the row and column plans
    out = np.empty(keep_shape(shape, axes), dtype)
    assert fastreduce.reduce_into(op, x, axes, out)
    np.testing.assert_array_equal(out, NP_OPS[op](x, axis=axes, keepdims=True))
    assert np.isnan(out).any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_and_inf_in_sum_and_prod(dtype):
    x = np.ones((4, 50000), dtype)
    x[0, 123] = np.nan
    x[1, 7] = np.inf
    x[2, 5], x[2, 9] = np.inf, -np.inf
    for op in ("sum", "prod"):
        out = np.empty((4, 1), dtype)
        assert fastreduce.reduce_into(op, x, (1,), out)
        assert np.isnan(out[0, 0]) and out[1, 0] == np.inf
        assert np.isnan(out[2, 0]) if op == "sum" else out[2, 0] == -np.inf
        assert out[3, 0] == (50000 if op == "sum" else 1)


def test_empty():
    x = np.empty((3, 0, 4), np.float32)
    for op, value in (("sum", 0), ("prod", 1)):
        out = np.full((3, 1, 4), 7, np.float32)
        assert fastreduce.reduce_into(op, x, (1,), out)
        assert (out == value).all()
    for op in ("amax", "amin"):
        out = np.full((3, 1, 4), 7, np.float32)
        assert fastreduce.reduce_into(op, x, (1,), out) is False
        assert (out == 7).all()     # nothing written
    out = np.empty((3, 0, 1), np.float32)    # empty output: nothing to do
    assert fastreduce.reduce_into("amax", x, (2,), out)


def test_unhandled_returns_false():
    for dtype in (np.int32, np.float16, np.complex64, np.dtype(">f4")):
        x = np.ones((3, 4), dtype)
        out = np.zeros((3, 1), dtype)
        assert fastreduce.reduce_into("sum", x, (1,), out) is False
        assert (out == 0).all()
    x = np.ones((3, 4), np.float32)
    assert fastreduce.reduce_into("sum", x, (1,), np.zeros((3, 1), np.float64)) is False
    assert fastreduce.reduce_into("sum", x.tolist(), (1,), np.zeros((3, 1))) is False


def test_bad_arguments():
    x = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError):
        fastreduce.reduce_into("mean", x, (1,), np.empty((3, 1), np.float32))
    with pytest.raises(ValueError):
        fastreduce.reduce_into("sum", x, (1,), np.empty((3, 4), np.float32))
    with pytest.raises(ValueError):
        fastreduce.reduce_into("sum", x, (1, 0), np.empty((1, 1), np.float32))
    with pytest.raises(ValueError):
        fastreduce.reduce_into("sum", x, (2,), np.empty((3, 1), np.float32))
    with pytest.raises(ValueError):
        fastreduce.set_num_threads(0)


def test_zero_dim_and_size_one():
    x = np.full((), 3.5)
    out = np.empty((), np.float64)
    assert fastreduce.reduce_into("sum", x, (), out) and out == 3.5
    x = np.arange(6, dtype=np.float32).reshape(1, 6, 1)
    out = np.empty((1, 6, 1), np.float32)
    assert fastreduce.reduce_into("sum", x, (0, 2), out)
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axes", [((8, 1024, 4), (0,)), ((16, 300), (0,)),
                                        ((3, 5000, 7), (0,)), ((2, 8, 64), (0, 1)),
                                        ((5, 1 << 17), (0,)), ((16, 40, 40), (0,))])
def test_few_rows_sum_in_order(shape, axes, dtype, threads):
    """Up to 16 rows reduced over outer dims add in order, whatever the thread count: equal
    bit for bit to `acc = acc + row` in a loop (and to numpy's and PyTorch's outer sums), so
    a sum of stacked tensors equals their running total (vector-quantize-pytorch checks
    `codes.sum(0)` against the residual loop's accumulation with ==)."""
    fastreduce.set_num_threads(threads)
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(dtype)
    rows = x.reshape((-1,) + x.shape[len(axes):])
    running = np.zeros(rows.shape[1:], dtype)
    for row in rows:
        running = running + row
    out = np.empty(keep_shape(shape, axes), dtype)
    assert fastreduce.reduce_into("sum", x, axes, out)
    np.testing.assert_array_equal(out.reshape(running.shape), running)


@pytest.mark.parametrize("n", [1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 100, 1023, 1024, 1025,
                               2047, 4096 + 13])
def test_contiguous_float32_runs_every_tail(n):
    """Contiguous float32 rows go to the vector block sums (AVX-512 or AVX2, vector_sum.h):
    every length around their 8/16-lane tails, 32/64-element steps and 1024-element blocks,
    against float64, with a value in the last element so a dropped tail shows."""
    rng = np.random.default_rng(n)
    x = rng.standard_normal((3, n)).astype(np.float32)
    x[:, -1] = 1000.0
    out = np.empty((3, 1), np.float32)
    assert fastreduce.reduce_into("sum", x, (1,), out)
    want = x.astype(np.float64).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-4 * np.sqrt(n))
