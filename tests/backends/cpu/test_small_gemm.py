"""The small-GEMM kernel (small_gemm.pyx), float64 and float32, against numpy in float64:
every transpose, alpha and beta as BLAS, odd sizes (the float32 panels are 48 wide, float64's
24), leading dimensions larger than the rows, and the gemm entry points that send small
products to it."""
import numpy as np
import pytest

from tensorlib_cpu import gemm, small_gemm

pytestmark = pytest.mark.skipif(not small_gemm.AVX512, reason="the kernel needs AVX-512")

SIZES = [1, 2, 7, 8, 9, 17, 24, 25, 33, 48, 51, 67]
DTYPES = [np.float64, np.float32]
EPS = {np.float64: 1e-12, np.float32: 2e-5}
LIMIT = {np.float64: small_gemm.MAX_MACS, np.float32: small_gemm.MAX_MACS_FLOAT}


def _case(rng, ta, tb, m, n, k, pad, dtype=np.float64):
    """Flat buffers holding op(A) (m, k), op(B) (k, n), C (m, n) with padded leading dims."""
    rows_a, cols_a = (m, k) if ta == "N" else (k, m)
    rows_b, cols_b = (k, n) if tb == "N" else (n, k)
    lda, ldb, ldc = cols_a + pad, cols_b + pad, n + pad
    a = rng.standard_normal(rows_a * lda).astype(dtype)
    b = rng.standard_normal(rows_b * ldb).astype(dtype)
    c = rng.standard_normal(m * ldc).astype(dtype)
    A = a.reshape(rows_a, lda)[:, :cols_a].astype(np.float64)
    B = b.reshape(rows_b, ldb)[:, :cols_b].astype(np.float64)
    return a, b, c, lda, ldb, ldc, (A if ta == "N" else A.T), (B if tb == "N" else B.T)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ta", ["N", "T"])
@pytest.mark.parametrize("tb", ["N", "T"])
@pytest.mark.parametrize("beta", [0.0, 1.0, -0.5])
def test_matches_numpy_on_odd_sizes(ta, tb, beta, dtype):
    rng = np.random.default_rng(0)
    sizes = SIZES + [97] if dtype == np.float32 else SIZES      # 97: three float32 panels
    for m, n, k in [(m, n, k) for m in sizes[::2] for n in sizes[1::2] for k in sizes[::3]]:
        pad = (m + n + k) % 3 * 5
        a, b, c, lda, ldb, ldc, opa, opb = _case(rng, ta, tb, m, n, k, pad, dtype)
        c0 = c.reshape(m, ldc)[:, :n].astype(np.float64)
        before_pad = c.reshape(m, ldc)[:, n:].copy()
        ran = small_gemm.gemm_strided(ta, tb, m, n, k, 0.75, a, lda, b, ldb, beta, c, ldc)
        assert ran == (m * n * k <= LIMIT[dtype])
        if not ran:
            continue
        want = 0.75 * (opa @ opb) + (beta * c0 if beta else 0)
        got = c.reshape(m, ldc)
        np.testing.assert_allclose(got[:, :n], want, rtol=EPS[dtype],
                                   atol=EPS[dtype] * np.abs(want).max(),
                                   err_msg=f"{ta}{tb} m={m} n={n} k={k}")
        np.testing.assert_array_equal(got[:, n:], before_pad)     # the padding is not written


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ta", ["N", "T"])
@pytest.mark.parametrize("tb", ["N", "T"])
def test_bias_epilogue_matches_numpy(ta, tb, dtype):
    # C's old values (NaN here) are never read; k = 300 runs in two k-blocks, the bias added
    # once; the padding past n and bias values past n are not touched
    rng = np.random.default_rng(4)
    for m, n, k in [(1, 1, 1), (7, 25, 9), (97, 204, 51), (13, 33, 300), (8, 24, 1),
                    (9, 49, 20), (17, 100, 150)]:
        if m * n * k > LIMIT[dtype]:
            continue
        a, b, c, lda, ldb, ldc, opa, opb = _case(rng, ta, tb, m, n, k, 2, dtype)
        c[:] = np.nan
        bias = np.concatenate([rng.standard_normal(n), [np.nan]]).astype(dtype)
        assert small_gemm.gemm_bias_strided(ta, tb, m, n, k, a, lda, b, ldb, bias, c, ldc)
        got = c.reshape(m, ldc)
        want = opa @ opb + bias[:n].astype(np.float64)
        np.testing.assert_allclose(got[:, :n], want, rtol=EPS[dtype], atol=EPS[dtype] * k,
                                   err_msg=f"{ta}{tb} m={m} n={n} k={k}")
        assert np.isnan(got[:, n:]).all()


def test_bias_shorter_than_n_is_refused():
    with pytest.raises(ValueError, match="bias has 3 values for 4 columns"):
        small_gemm.gemm_bias_strided("N", "N", 4, 4, 4, np.ones(16), 4, np.ones(16), 4,
                                      np.ones(3), np.ones(16), 4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_beta_zero_ignores_nan_in_c(dtype):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(9 * 5).astype(dtype), rng.standard_normal(5 * 11).astype(dtype)
    c = np.full(9 * 11, np.nan, dtype)
    assert small_gemm.gemm_strided("N", "N", 9, 11, 5, 1.0, a, 5, b, 11, 0.0, c, 11)
    np.testing.assert_allclose(c.reshape(9, 11), a.reshape(9, 5) @ b.reshape(5, 11),
                               rtol=EPS[dtype] * 10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_long_k_runs_in_blocks(dtype):
    # k past the kernel's k-block (256): later blocks add onto the first block's result
    rng = np.random.default_rng(2)
    for ta, tb in [("N", "N"), ("N", "T"), ("T", "N")]:
        m, n, k = 13, 29, 600
        a, b, c, lda, ldb, ldc, opa, opb = _case(rng, ta, tb, m, n, k, 3, dtype)
        c0 = c.reshape(m, ldc)[:, :n].astype(np.float64)
        assert small_gemm.gemm_strided(ta, tb, m, n, k, 2.0, a, lda, b, ldb, 1.0, c, ldc)
        np.testing.assert_allclose(c.reshape(m, ldc)[:, :n], 2.0 * (opa @ opb) + c0,
                                   rtol=EPS[dtype], atol=EPS[dtype] * k)


@pytest.mark.parametrize("dtype,limit", [(np.float64, small_gemm.MAX_MACS),
                                         (np.float32, small_gemm.MAX_MACS_FLOAT)])
def test_large_products_are_left_to_blas(dtype, limit):
    side = 1 + int(round(limit ** (1 / 3)))
    a, b, c = (np.ones(side * side, dtype), np.ones(side * side, dtype),
               np.zeros(side * side, dtype))
    assert not small_gemm.gemm_strided("N", "N", side, side, side, 1.0, a, side, b, side, 0.0,
                                        c, side)
    assert not c.any()


def test_buffer_too_small_is_refused():
    with pytest.raises(ValueError):
        small_gemm.gemm_strided("N", "N", 4, 4, 4, 1.0, np.ones(15), 4, np.ones(16), 4, 0.0,
                                 np.ones(16), 4)


@pytest.mark.parametrize("shape", [(97, 51, 204), (204, 97, 51), (97, 204, 51), (3, 67, 5)])
def test_gemm_entry_point_float64(shape):
    # the LSTM's shapes through gemm.gemm (transposed views included), against numpy
    m, k, n = shape
    rng = np.random.default_rng(3)
    for a in (rng.standard_normal((m, k)), rng.standard_normal((k, m)).T):
        for b in (rng.standard_normal((k, n)), rng.standard_normal((n, k)).T):
            c = np.empty((m, n))
            assert gemm.gemm(a, b, c)
            np.testing.assert_allclose(c, a @ b, rtol=1e-12, atol=1e-12 * np.abs(a @ b).max())


@pytest.mark.parametrize("shape", [(16, 32, 96), (3, 67, 5), (64, 64, 64), (128, 20, 50)])
def test_gemm_entry_points_float32(shape):
    # small float32 Linear-like products through gemm.gemm and gemm.gemm_bias (transposed
    # views included), against numpy in float64
    m, k, n = shape
    rng = np.random.default_rng(6)
    f32 = np.float32
    bias = rng.standard_normal(n).astype(f32)
    for a in (rng.standard_normal((m, k)).astype(f32), rng.standard_normal((k, m)).astype(f32).T):
        for b in (rng.standard_normal((k, n)).astype(f32),
                  rng.standard_normal((n, k)).astype(f32).T):
            want = a.astype(np.float64) @ b.astype(np.float64)
            c = np.full((m, n), np.nan, f32)
            assert gemm.gemm(a, b, c)
            np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
            c[:] = np.nan
            assert gemm.gemm_bias(a, b, bias, c)
            np.testing.assert_allclose(c, want + bias, rtol=1e-4,
                                       atol=1e-4 * np.abs(want).max())
