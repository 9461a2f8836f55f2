# cython: boundscheck=False, wraparound=False
"""Small float64 and float32 products on our own AVX-512 kernel (small_gemm.h says why and
how); gemm.pyx's BLAS calls come here first."""
import numpy as np
cimport numpy as cnp

cnp.import_array()

cdef extern from "small_gemm.h":
    void sg_detect()
    int sg_has_avx512
    int SG_MAX_MACS_d
    int SG_MAX_MACS_s
    int sg_dgemm(char ta, char tb, int m, int n, int k, double alpha, const double* a,
                 int lda, const double* b, int ldb, double beta, double* c, int ldc) nogil
    int sg_dgemm_bias(char ta, char tb, int m, int n, int k, const double* a, int lda,
                      const double* b, int ldb, const double* bias, double* c, int ldc) nogil
    int sg_sgemm(char ta, char tb, int m, int n, int k, float alpha, const float* a,
                 int lda, const float* b, int ldb, float beta, float* c, int ldc) nogil
    int sg_sgemm_bias(char ta, char tb, int m, int n, int k, const float* a, int lda,
                      const float* b, int ldb, const float* bias, float* c, int ldc) nogil


sg_detect()
# Whether this CPU runs the kernel (chosen at import); without AVX-512 every product is BLAS's.
AVX512 = bool(sg_has_avx512)
# The largest products (multiply-adds) the kernel takes, float64 and float32.
MAX_MACS = SG_MAX_MACS_d
MAX_MACS_FLOAT = SG_MAX_MACS_s


cdef int small_dgemm(char ta, char tb, int m, int n, int k, double alpha, const double* a,
                     int lda, const double* b, int ldb, double beta, double* c,
                     int ldc) noexcept nogil:
    """Row-major c = alpha op(a) op(b) + beta c (gemm.pyx's layouts); 1 when computed, 0
    (nothing written) when the caller's BLAS should run it."""
    return sg_dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)


cdef int small_dgemm_bias(char ta, char tb, int m, int n, int k, const double* a, int lda,
                          const double* b, int ldb, const double* bias, double* c,
                          int ldc) noexcept nogil:
    """c = op(a) op(b) + bias, a row of n added to each of c's m rows; 1 when computed, 0
    (nothing written) when the caller should fill the bias and run BLAS."""
    return sg_dgemm_bias(ta, tb, m, n, k, a, lda, b, ldb, bias, c, ldc)


cdef int small_sgemm(char ta, char tb, int m, int n, int k, float alpha, const float* a,
                     int lda, const float* b, int ldb, float beta, float* c,
                     int ldc) noexcept nogil:
    """small_dgemm for float32."""
    return sg_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)


cdef int small_sgemm_bias(char ta, char tb, int m, int n, int k, const float* a, int lda,
                          const float* b, int ldb, const float* bias, float* c,
                          int ldc) noexcept nogil:
    """small_dgemm_bias for float32."""
    return sg_sgemm_bias(ta, tb, m, n, k, a, lda, b, ldb, bias, c, ldc)


def _check_fits(str ta, str tb, int m, int n, int k, a, int lda, b, int ldb, c, int ldc):
    """Raise unless every element the product addresses lies inside its buffer."""
    if ta not in ("N", "T") or tb not in ("N", "T"):
        raise ValueError(f"trans must be 'N' or 'T', got {ta!r}, {tb!r}")
    rows_a, cols_a = (m, k) if ta == "N" else (k, m)
    rows_b, cols_b = (k, n) if tb == "N" else (n, k)
    for name, buf, rows, cols, ld in (("a", a, rows_a, cols_a, lda), ("b", b, rows_b, cols_b, ldb),
                                      ("c", c, m, n, ldc)):
        if ld < max(cols, 1) or (rows > 0 and (rows - 1) * ld + cols > buf.shape[0]):
            raise ValueError(f"{name}: {rows}x{cols} with leading dimension {ld} does not fit "
                             f"a buffer of {buf.shape[0]}")


ctypedef fused real:
    float
    double


def gemm_strided(str ta, str tb, int m, int n, int k, double alpha,
                 real[::1] a, int lda, real[::1] b, int ldb, double beta, real[::1] c,
                 int ldc):
    """The kernel on flat float64 or float32 buffers with BLAS's arguments (row-major, see
    small_gemm.h), for tests; True when it ran. Checks that every element addressed lies
    inside its buffer."""
    _check_fits(ta, tb, m, n, k, a, lda, b, ldb, c, ldc)
    if real is double:
        return bool(sg_dgemm(ord(ta), ord(tb), m, n, k, alpha, &a[0], lda, &b[0], ldb, beta,
                             &c[0], ldc))
    return bool(sg_sgemm(ord(ta), ord(tb), m, n, k, <float>alpha, &a[0], lda, &b[0], ldb,
                         <float>beta, &c[0], ldc))


def gemm_bias_strided(str ta, str tb, int m, int n, int k, real[::1] a, int lda,
                      real[::1] b, int ldb, real[::1] bias, real[::1] c, int ldc):
    """c = op(a) op(b) + bias (n values) on the kernel's bias epilogue, for tests, with
    gemm_strided's checks; True when it ran."""
    _check_fits(ta, tb, m, n, k, a, lda, b, ldb, c, ldc)
    if bias.shape[0] < n:
        raise ValueError(f"bias has {bias.shape[0]} values for {n} columns")
    if real is double:
        return bool(sg_dgemm_bias(ord(ta), ord(tb), m, n, k, &a[0], lda, &b[0], ldb,
                                  &bias[0], &c[0], ldc))
    return bool(sg_sgemm_bias(ord(ta), ord(tb), m, n, k, &a[0], lda, &b[0], ldb, &bias[0],
                              &c[0], ldc))
