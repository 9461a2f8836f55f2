"""tensorlib_cpu.gemm (BLAS per OpenMP thread) against numpy in float64, on every operand
layout BLAS reads (row- and column-major, padded rows, broadcast batches), with alpha/beta,
empty and single-row/column shapes, and split over 1-3 threads; on each library it can bind
(MKL where the `mkl` wheel is installed, numpy's OpenBLAS alone and with MKL for the float32
products with B transposed, scipy's)."""
import itertools
import os
import subprocess
import sys

import numpy as np
import pytest

from tensorlib_cpu import blas_choice, fastreduce, gemm as gemm_module, onednn
from tensorlib_cpu.gemm import gemm, gemm_batched, gemm_bias, gemm_low_precision, gemm_pair

HAVE_MKL = blas_choice.find_mkl() is not None
HAVE_ONEDNN = onednn.library() is not None

# (130, 40, 300): wider than tall, split by rows on 2 threads and by columns on 3
# (320, 128, 128): over "openblas+mkl"'s MKL threshold (2M multiply-adds) whole and in halves
SHAPES = [(1, 1, 1), (1, 5, 7), (7, 1, 3), (3, 4, 1), (33, 17, 65), (64, 64, 64), (200, 30, 7),
          (5, 300, 100), (0, 3, 4), (4, 0, 5), (130, 64, 2), (130, 40, 300), (320, 128, 128)]


@pytest.fixture(params=["mkl", "onednn", "openblas", "openblas+mkl", "scipy"], autouse=True)
def blas(request):
    """Every BLAS binding: MKL, oneDNN's sgemm (float64 on OpenBLAS), numpy's OpenBLAS (alone,
    and with MKL for transposed B) and scipy.linalg.cython_blas (the fallback)."""
    if "mkl" in request.param and not HAVE_MKL:
        pytest.skip("the mkl wheel is not installed")
    if request.param == "onednn" and not HAVE_ONEDNN:
        pytest.skip("oneDNN (onednn-cpu-gomp) is not installed")
    before = gemm_module.LIBRARY
    gemm_module.use_blas(request.param)
    assert gemm_module.LIBRARY == request.param
    yield request.param
    gemm_module.use_blas(before)


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



# Products large enough to be split over the threads, one share each: the MLP's shapes (rows
# 392/392 on 2 threads, 264/264/256 on 3), an odd row count (the last share short), a short
# wide one (split by columns) and one just over the splitting threshold on 2 threads
SPLIT_SHAPES = [(784, 128, 512), (128, 784, 512), (512, 128, 784), (257, 96, 130),
                (48, 256, 1024), (64, 128, 128)]


@pytest.mark.parametrize("m,k,n", SPLIT_SHAPES)
def test_split_products_write_every_share(threads, m, k, n):
    """Each thread's share of a split float32 product (a sequential call per share on every
    library, oneDNN's included) lands in its own rows or columns: no share left unwritten
    (the output starts as NaN), none computed twice with beta applied twice."""
    rng = np.random.default_rng(m + k + n)
    for ta, tb in itertools.product([False, True], repeat=2):
        a, b = _operand(rng, m, k, ta, np.float32), _operand(rng, k, n, tb, np.float32)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        c = np.full((m, n), np.nan, np.float32)
        assert gemm(a, b, c, 0.5, 0.0)
        np.testing.assert_allclose(c, 0.5 * ref, rtol=1e-4, atol=1e-3)
        c = np.full((m, n), 2, np.float32)
        assert gemm(a, b, c, 1.0, 3.0)
        np.testing.assert_allclose(c, ref + 6, rtol=1e-4, atol=1e-3)

def _at_offset(rng, rows, cols, ld, offset):
    """A float32 (rows, cols) view with row stride ld whose first element lies `offset`
    floats past a 64-byte boundary."""
    flat = np.empty(rows * ld + 32, np.float32)
    start = (-flat.ctypes.data // 4) % 16 + offset
    out = flat[start:start + rows * ld].reshape(rows, ld)[:, :cols]
    out[...] = rng.standard_normal((rows, cols))
    return out


@pytest.mark.parametrize("offset", [0, 1, 4, 15])
@pytest.mark.parametrize("m,k,n,ld", [(784, 128, 512, 512), (256, 256, 250, 250),
                                      (200, 64, 100, 103), (300, 40, 17, 17)])
def test_b_off_line_boundaries(threads, offset, m, k, n, ld):
    """A B whose rows start off 64-byte lines (a from_numpy array, a view into padded rows)
    is copied to aligned rows before oneDNN reads it (see ALIGNED_COPY_MIN_ROWS): plain,
    with a bias, as a pair and batched, the products equal numpy's and B is untouched."""
    rng = np.random.default_rng(offset * 7 + m)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = _at_offset(rng, k, n, ld, offset)
    before = b.copy()
    ref = a.astype(np.float64) @ b.astype(np.float64)
    c = np.full((m, n), np.nan, np.float32)
    assert gemm(a, b, c)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-3)
    bias = rng.standard_normal(n).astype(np.float32)
    assert gemm_bias(a, b, bias, c)
    np.testing.assert_allclose(c, ref + bias, rtol=1e-4, atol=1e-3)
    c2 = np.full((m, n), np.nan, np.float32)
    assert gemm_pair(a, b, c, a[: m // 2], b, c2[: m // 2])
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(c2[: m // 2], ref[: m // 2], rtol=1e-4, atol=1e-3)
    cb = np.full((2, m, n), np.nan, np.float32)
    assert gemm_batched(np.stack([a, a]), np.broadcast_to(b, (2, k, n)), cb)
    np.testing.assert_allclose(cb, np.stack([ref, ref]), rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(b, before)


def test_refuses_other_dtypes_and_unreadable_layouts():
    c = np.zeros((3, 2), np.float32)
    assert gemm(np.ones((3, 4), np.int32), np.ones((4, 2), np.int32),
                np.ones((3, 2), np.int32)) is False
    assert gemm(np.ones((6, 8), np.float32)[::2, ::2], np.ones((4, 2), np.float32), c) is False
    assert gemm(np.ones((3, 4), np.float32), np.ones((4, 2), np.float64), c) is False
    assert not c.any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", SHAPES + [(128, 256, 10), (128, 784, 512), (5, 0, 3),
                                            (97, 51, 204), (97, 1, 204)])
def test_bias_matches_numpy(threads, dtype, m, k, n):
    """gemm_bias: the bias broadcast over the rows and the product, however the threads
    share the rows (or, for short wide outputs, the columns)."""
    rng = np.random.default_rng(m * 10000 + k * 100 + n + 1)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    bias = rng.standard_normal(n).astype(dtype)
    for ta, tb in itertools.product([False, True], repeat=2):
        a, b = _operand(rng, m, k, ta, dtype), _operand(rng, k, n, tb, dtype)
        c = np.full((m, n + 3), 7, dtype)[:, :n]
        assert gemm_bias(a, b, bias, c)
        np.testing.assert_allclose(c, a.astype(np.float64) @ b + bias, rtol=tol, atol=tol)


def test_bias_refuses_without_writing():
    a, b = np.ones((3, 4), np.float32), np.ones((4, 2), np.float32)
    for bias in (np.ones(4, np.float32)[::2], np.ones(3, np.float32), np.ones(2, np.float64),
                 np.ones((1, 2), np.float32)):
        c = np.zeros((3, 2), np.float32)
        assert gemm_bias(a, b, bias, c) is False
        assert not c.any()


# (m1, k1, n1, m2, k2, n2): a linear layer's gradient pair at MLP sizes (side by side), a
# tiny pair (one after the other), one product much larger (no balanced split), skinny and
# empty products
PAIRS = [(128, 256, 512, 256, 128, 512), (128, 10, 256, 10, 128, 256),
         (16, 8, 4, 300, 200, 100), (1, 300, 200, 64, 64, 64), (40, 0, 30, 50, 60, 0),
         (0, 5, 6, 33, 17, 65)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", PAIRS)
def test_pair_matches_numpy(threads, dtype, shapes):
    """gemm_pair writes both products, whichever way it shares the threads between them."""
    m1, k1, n1, m2, k2, n2 = shapes
    rng = np.random.default_rng(sum(shapes))
    tol = 1e-4 if dtype == np.float32 else 1e-12
    for t1, t2 in itertools.product([False, True], repeat=2):
        a1, b1 = _operand(rng, m1, k1, t1, dtype), _operand(rng, k1, n1, not t1, dtype)
        a2, b2 = _operand(rng, m2, k2, t2, dtype), _operand(rng, k2, n2, t2, dtype)
        c1 = np.full((m1, n1 + 3), 7, dtype)[:, :n1]
        c2 = np.full((m2, n2), 7, dtype)
        assert gemm_pair(a1, b1, c1, a2, b2, c2)
        np.testing.assert_allclose(c1, a1.astype(np.float64) @ b1, rtol=tol, atol=tol)
        np.testing.assert_allclose(c2, a2.astype(np.float64) @ b2, rtol=tol, atol=tol)


def test_pair_refuses_without_writing():
    """A pair either product of which BLAS cannot take is left to the caller, both outputs
    untouched (the other product is not computed on its own)."""
    good = (np.ones((3, 4), np.float32), np.ones((4, 2), np.float32))
    for bad in ((np.ones((6, 8), np.float32)[::2, ::2], np.ones((4, 2), np.float32)),
                (np.ones((3, 4), np.float64), np.ones((4, 2), np.float64)),
                (np.ones((3, 0), np.int32), np.ones((0, 2), np.int32))):
        c1, c2 = np.zeros((3, 2), np.float32), np.full((3, 2), 5, bad[0].dtype)
        assert gemm_pair(*good, c1, *bad, c2) is False
        assert not c1.any() and (c2 == 5).all()


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


def _batch_operand(rng, batch, rows, cols, layout, dtype):
    """(batch, rows, cols) stored as `layout`: C order, each matrix column-major, or padded
    rows inside a padded batch (no dim contiguous over the whole array)."""
    if layout == "transposed":
        return rng.standard_normal((batch, cols, rows)).astype(dtype).transpose(0, 2, 1)
    if layout == "padded":
        return rng.standard_normal((batch + 1, rows, cols + 3)).astype(dtype)[1:, :, :cols]
    return rng.standard_normal((batch, rows, cols)).astype(dtype)


# 64 and 63 small products: whole ones in chunks of 4-8 to whichever thread is free (63: a
# short last chunk); 5 and 3 large ones: whole ones for the part that divides over the
# threads, the rest each split by rows or (short and wide) by columns across 2 or 3
# threads; 3 tiny ones: one thread
@pytest.mark.parametrize("batch,m,k,n", [(64, 32, 32, 32), (63, 32, 32, 32),
                                         (5, 130, 100, 120), (3, 40, 200, 200),
                                         (3, 8, 9, 10)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout_a,layout_b", [("contiguous", "contiguous"),
                                               ("transposed", "padded"),
                                               ("padded", "transposed")])
def test_batched_partitions_dtypes_and_layouts(threads, dtype, batch, m, k, n, layout_a,
                                                layout_b):
    rng = np.random.default_rng(batch * 1000 + m)
    a = _batch_operand(rng, batch, m, k, layout_a, dtype)
    b = _batch_operand(rng, batch, k, n, layout_b, dtype)
    c = np.full((batch, m, n), np.nan, dtype)
    assert gemm_batched(a, b, c)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=tol,
                               atol=tol)


@pytest.mark.parametrize("batch,m,k,n", [(4, 3, 5, 7), (2, 70, 40, 50), (1, 64, 64, 64)])
@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_low_precision_accumulates_in_float32(threads, dtype, batch, m, k, n):
    """bf16/fp16 operands, float32 result: exactly the float32 product of the rounded inputs
    (up to float32 summation order)."""
    if gemm_module.LOW_PRECISION is None:
        pytest.skip("MKL's low-precision GEMMs are not available")
    import ml_dtypes  # noqa: F401 - numpy's 'bfloat16'
    rng = np.random.default_rng(m)
    a = rng.standard_normal((batch, m, k)).astype(dtype)
    b = rng.standard_normal((batch, n, k)).astype(dtype).transpose(0, 2, 1)
    c = np.full((batch, m, n), np.nan, np.float32)
    assert gemm_low_precision(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)


def test_low_precision_refuses_what_it_cannot_take():
    c = np.zeros((1, 2, 2), np.float32)
    half = np.ones((1, 2, 2), np.float16)
    assert gemm_low_precision(half, half.astype(np.float32), c) is False
    assert gemm_low_precision(half, half, c.astype(np.float64)) is False
    assert not c.any()


def test_use_blas_rejects_unknown_names():
    with pytest.raises(ValueError, match="expected 'mkl', 'onednn', 'openblas', 'openblas\\+mkl' or"):
        gemm_module.use_blas("atlas")


def _library_in_subprocess(value):
    env = dict(os.environ, TENSORLIB_BLAS=value)
    out = subprocess.run([sys.executable, "-c", "from tensorlib_cpu import gemm; "
                          "print(gemm.LIBRARY)"], env=env, capture_output=True, text=True,
                         check=True)
    return out.stdout.strip(), out.stderr


@pytest.mark.parametrize("value", ["mkl", "onednn", "openblas", "openblas+mkl", "scipy"])
def test_environment_variable_chooses_the_library(value):
    library, _ = _library_in_subprocess(value)
    present = HAVE_MKL if "mkl" in value else HAVE_ONEDNN if value == "onednn" else True
    assert library == (value if present else "openblas")


@pytest.mark.parametrize("vendor,family,core,has_mkl,has_onednn,expected", [
    ("GenuineIntel", 6, "SapphireRapids", True, True, "mkl"),
    ("GenuineIntel", 6, "SapphireRapids", False, True, "onednn"),
    ("GenuineIntel", 6, "SapphireRapids", False, False, "openblas"),
    ("AuthenticAMD", 25, "SkylakeX", True, True, "onednn"),     # Zen 4: split AVX-512
    ("AuthenticAMD", 25, "SkylakeX", False, True, "onednn"),
    ("AuthenticAMD", 25, "SkylakeX", True, False, "openblas+mkl"),
    ("AuthenticAMD", 25, "SkylakeX", False, False, "openblas"),
    ("AuthenticAMD", 26, "SkylakeX", True, True, "openblas"),   # Zen 5: full-width AVX-512
    ("AuthenticAMD", 26, "Haswell", True, True, "openblas"),    # Zen 5, OPENBLAS_CORETYPE
    ("AuthenticAMD", 25, "Haswell", True, True, "openblas"),    # Zen 3: AVX2 kernels
    ("AuthenticAMD", 26, "SkylakeX", False, True, "openblas")])
def test_default_per_cpu(monkeypatch, vendor, family, core, has_mkl, has_onednn, expected):
    """MKL on Intel when installed, else oneDNN's sgemm (the default install brings it on
    x86-64 Linux) on Intel and Zen 4, where it was measured fastest; OpenBLAS elsewhere."""
    monkeypatch.delenv(blas_choice.ENV, raising=False)
    monkeypatch.setattr(blas_choice, "_onednn_present", lambda: has_onednn)
    monkeypatch.setattr(blas_choice, "cpu_vendor", lambda: vendor)
    monkeypatch.setattr(blas_choice, "cpu_family", lambda: family)
    monkeypatch.setattr(blas_choice, "cpu_flags",
                        lambda: frozenset({"avx2", "avx512f"} if core == "SkylakeX" else {"avx2"}))
    monkeypatch.setattr(blas_choice, "openblas_core", lambda: core)
    monkeypatch.setattr(blas_choice, "find_mkl", lambda: "/x/libmkl_rt.so.2" if has_mkl else None)
    assert blas_choice.requested() == expected


def test_openblas_core_is_named():
    assert blas_choice.openblas_core()


def test_unknown_environment_value_warns_and_uses_the_default():
    library, err = _library_in_subprocess("atlas")
    assert "TENSORLIB_BLAS='atlas'" in err
    assert library in ("mkl", "onednn", "openblas", "openblas+mkl")
