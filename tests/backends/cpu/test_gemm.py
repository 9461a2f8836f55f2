"""tensorlib_cpu.gemm (BLAS per OpenMP thread) against numpy in float64, on every operand
layout BLAS reads (row- and column-major, padded rows, broadcast batches), with alpha/beta,
empty and single-row/column shapes, and split over 1-3 threads."""
import itertools

import numpy as np
import pytest

from tensorlib_cpu import fastreduce, gemm as gemm_module
from tensorlib_cpu.gemm import gemm, gemm_batched

SHAPES = [(1, 1, 1), (1, 5, 7), (7, 1, 3), (3, 4, 1), (33, 17, 65), (64, 64, 64), (200, 30, 7),
          (5, 300, 100), (0, 3, 4), (4, 0, 5), (130, 64, 2)]


@pytest.fixture(params=["numpy", "scipy"], autouse=True)
def blas(request):
    """Both BLAS bindings: numpy's OpenBLAS and scipy.linalg.cython_blas (the fallback)."""
    using = gemm_module.use_blas(request.param)
    yield using
    gemm_module.use_blas("numpy")


@pytest.fixture(params=[1, 2, 3])
def threads(request):
    n = fastreduce.get_num_threads()
    fastreduce.set_num_threads(request.param)
    yield request.param
    fastreduce.set_num_threads(n)


def _operand(rng, rows, cols, transposed, dtype):
    if transposed:
        return rng.standard_normal((cols, rows)).astype(dtype).T
    return rng.standard_normal((rows, cols + 2)).astype(dtype)[:, :cols]     # padded rows


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_matches_numpy_on_every_layout(threads, dtype, m, k, n):
    rng = np.random.default_rng(m * 10000 + k * 100 + n)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    for ta, tb in itertools.product([False, True], repeat=2):
        a, b = _operand(rng, m, k, ta, dtype), _operand(rng, k, n, tb, dtype)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        c = np.full((m, n + 3), 7, dtype)[:, :n]
        assert gemm(a, b, c, 2.0, 0.0)
        np.testing.assert_allclose(c, 2 * ref, rtol=tol, atol=tol)
        c = np.ones((m, n), dtype)
        assert gemm(a, b, c, 1.0, 0.5)
        np.testing.assert_allclose(c, 0.5 + ref, rtol=tol, atol=tol)


def test_refuses_other_dtypes_and_unreadable_layouts():
    c = np.zeros((3, 2), np.float32)
    assert gemm(np.ones((3, 4), np.int32), np.ones((4, 2), np.int32),
                np.ones((3, 2), np.int32)) is False
    assert gemm(np.ones((6, 8), np.float32)[::2, ::2], np.ones((4, 2), np.float32), c) is False
    assert gemm(np.ones((3, 4), np.float32), np.ones((4, 2), np.float64), c) is False
    assert not c.any()


@pytest.mark.parametrize("batch,m,k,n", [(5, 3, 4, 6), (16, 64, 64, 64), (2, 300, 200, 100),
                                         (3, 1, 1, 1), (0, 2, 2, 2)])
def test_batched_and_broadcast_batches(threads, batch, m, k, n):
    rng = np.random.default_rng(batch)
    a = rng.standard_normal((batch, m, k)).astype(np.float32)
    b = rng.standard_normal((batch, n, k)).astype(np.float32).transpose(0, 2, 1)
    c = np.empty((batch, m, n), np.float32)
    assert gemm_batched(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    if batch:
        shared = np.broadcast_to(b[0], b.shape)
        assert gemm_batched(a, shared, c)
        np.testing.assert_allclose(c, a.astype(np.float64) @ shared, rtol=1e-4, atol=1e-4)


def test_use_blas_rejects_unknown_names():
    with pytest.raises(ValueError, match="expected 'numpy' or 'scipy'"):
        gemm_module.use_blas("mkl")
