"""ufunc_threads.run (numpy's own inner loop on the OpenMP threads) must match the ufunc
called directly, bit for bit, on every layout, and refuse what it cannot do exactly."""
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from tensorlib_cpu import fastreduce, ufunc_threads


@pytest.fixture(autouse=True)
def split_small(monkeypatch):
    """Threads from 4096 elements on, restored after."""
    n = fastreduce.get_num_threads()
    monkeypatch.setattr(ufunc_threads, "PARALLEL_MIN", 4096)
    yield
    fastreduce.set_num_threads(n)


def _inputs(rng, shape, n_inputs, kind):
    a = rng.standard_normal(shape).astype(np.float32)
    if kind == "fortran":
        a = np.asfortranarray(a)
    if n_inputs == 1:
        return [a]
    if kind == "broadcast":
        return [a, np.broadcast_to(rng.standard_normal(shape[-1]).astype(np.float32), shape)]
    if kind == "scalar":
        return [a, np.array(1.5, np.float32)]
    b = rng.standard_normal(shape).astype(np.float32)
    return [a, np.asfortranarray(b) if kind == "fortran" else b]


def _same_bits(x, y):
    x, y = np.ascontiguousarray(x), np.ascontiguousarray(y)
    return x.dtype == y.dtype and np.array_equal(x.view(np.uint8), y.view(np.uint8))


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("shape", [(1 << 20,), (1000, 1001), (3, 400, 401), (7, 5), (1, 300000),
                                   (2, 1, 3), (5, 0)])
@pytest.mark.parametrize("kind", ["contiguous", "fortran", "broadcast", "scalar"])
@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.exp])
def test_bit_identical_to_numpy(ufunc, kind, shape, threads):
    fastreduce.set_num_threads(threads)
    ins = _inputs(np.random.default_rng(2), shape, ufunc.nin, kind)
    if ufunc.nin == 1 and kind in ("broadcast", "scalar"):
        ins = [np.broadcast_to(ins[0][..., :1], shape)]
    expected = ufunc(*ins)
    out = np.empty(shape, np.float32, order="F" if kind == "fortran" else "C")
    assert ufunc_threads.run(ufunc, out, *ins)
    assert _same_bits(out, expected)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32, np.uint8, np.bool_])
def test_other_dtypes_and_strided_output(dtype):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((700, 800)) * 50).astype(dtype)
    b = (rng.standard_normal((700, 800)) * 50).astype(dtype)
    out = np.empty((700, 1600), dtype)[:, ::2]
    assert ufunc_threads.run(np.add, out, a, b)
    assert _same_bits(out, np.add(a, b))


def test_in_place_runs_and_partial_overlap_is_refused():
    a = np.random.default_rng(4).standard_normal(1 << 20)
    b = a.copy()
    expected = a + b
    assert ufunc_threads.run(np.add, a, a, b)              # exact alias: element for element
    assert np.array_equal(a, expected)
    a = np.arange(1 << 20, dtype=np.float64)
    assert ufunc_threads.run(np.add, a[1:], a[:-1], np.array(1.0)) is False
    assert np.array_equal(a, np.arange(1 << 20))           # nothing written


def test_refuses_what_numpy_would_cast_or_broadcast():
    out = np.empty(5000, np.float32)
    assert ufunc_threads.run(np.add, out, np.ones(5000, np.float32),
                             np.ones(5000, np.float64)) is False
    assert ufunc_threads.run(np.add, out, np.ones(5000, np.float32), 1.0) is False
    assert ufunc_threads.run(np.add, np.empty((4, 5000), np.float32),
                             np.ones((4, 5000), np.float32), np.ones(5000, np.float32)) is False


def test_loops_that_raise_through_python_are_left_to_numpy():
    base = np.full(5000, 2, np.int64)
    assert ufunc_threads.run(np.power, np.empty(5000, np.int64), base, -base) is False
    floats = base.astype(np.float64)
    out = np.empty(5000)
    assert ufunc_threads.run(np.power, out, floats, -floats)
    assert np.array_equal(out, np.power(floats, -floats))


def test_from_many_user_threads():
    fastreduce.set_num_threads(2)
    a = np.random.default_rng(5).standard_normal(1 << 20)
    expected = np.exp(a)

    def job(_):
        out = np.empty_like(a)
        return ufunc_threads.run(np.exp, out, a) and np.array_equal(out, expected)

    with ThreadPoolExecutor(4) as ex:
        assert all(ex.map(job, range(8), timeout=60))
    assert threading.active_count() < 50


@pytest.mark.parametrize("ufunc, dtypes", [
    (np.add, ("float32", "float32")), (np.multiply, ("float64", "float64")),
    (np.less, ("int64", "int64")), (np.logical_and, ("bool", "bool")),
    (np.exp, ("float32",)), (np.negative, ("int32",)), (np.maximum, ("uint8", "uint8"))])
def test_the_loop_is_found_from_the_ufuncs_signatures(ufunc, dtypes):
    """The exact loop comes from `ufunc.types` ('ff->f'), which every numpy has; numpy 2.5's
    Cython declarations no longer expose the C types field (reading it crashed)."""
    inputs = [(np.arange(1, 300001) % 7).astype(d) for d in dtypes]
    want = ufunc(*inputs)
    out = np.empty_like(want)
    assert ufunc_threads.run(ufunc, out, *inputs)
    np.testing.assert_array_equal(out, want)
