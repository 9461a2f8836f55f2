# cython: boundscheck=False, wraparound=False, cdivision=True
"""GEMM on the backend's one OpenMP thread team: single-threaded BLAS (scipy's OpenBLAS,
through scipy.linalg.cython_blas) called from each OpenMP thread on its share of the output.

Why not numpy's matmul: it runs OpenBLAS's own pthreads. Two thread pools on the same cores
force a choice: our OpenMP threads either sleep between kernels (waking them cost ~50 us per
parallel region here, more than a 1M-element add takes) or spin, and spinning threads took the
cores OpenBLAS's threads needed (a GEMM after an elementwise op ran 1.4-7x slower). With every
parallel region, GEMM included, on one team, idle threads can spin briefly and stay cheap to
wake, as PyTorch's do. scipy's OpenBLAS is pinned to one thread at import (numpy's keeps its
own threads for user code)."""
import ctypes
import glob
import os

import numpy as np

cimport numpy as cnp
cimport openmp
from cython.parallel cimport parallel, prange
from scipy.linalg.cython_blas cimport dgemm, sgemm

from tensorlib_cpu import fastreduce

cnp.import_array()

# Below this many multiply-adds one thread does the whole product (a parallel region costs
# ~1 us with spinning threads; a 64x64x64 product ~10 us).
cdef enum:
    PARALLEL_MIN_MACS = 1 << 16
# Shares of a split output are multiples of this many rows/columns (OpenBLAS's register
# blocking), so no thread gets a ragged edge it computes slowly.
cdef enum:
    _ALIGN = 16


def _pin_scipy_blas():
    """Run scipy's OpenBLAS single-threaded (its threads would compete with ours); returns
    whether it could be found. Other BLAS builds behind scipy are left as they are."""
    import scipy
    base = os.path.dirname(scipy.__file__)
    for path in glob.glob(os.path.join(base, os.pardir, "scipy.libs", "*openblas*")):
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_set_num_threads", "openblas_set_num_threads"):
            setter = getattr(lib, name, None)
            if setter is not None:
                setter(1)
                return True
    return False


BLAS_PINNED = _pin_scipy_blas()


cdef bint _operand(cnp.ndarray x, Py_ssize_t rows, Py_ssize_t cols, char* trans, int* ld):
    """How BLAS reads row-major x (rows, cols): 'N' with ld = row stride, or 'T' for x stored
    column by column; False when neither dim has a unit stride."""
    cdef Py_ssize_t item = x.itemsize
    cdef Py_ssize_t s0 = x.strides[0] if rows > 1 else cols * item
    cdef Py_ssize_t s1 = x.strides[1] if cols > 1 else item
    if s1 == item and s0 % item == 0 and s0 >= max(cols, 1) * item:
        trans[0], ld[0] = b'N', <int>(s0 // item)
        return True
    s0 = x.strides[0] if rows > 1 else item
    s1 = x.strides[1] if cols > 1 else rows * item
    if s0 == item and s1 % item == 0 and s1 >= max(rows, 1) * item:
        trans[0], ld[0] = b'T', <int>(s1 // item)
        return True
    return False


ctypedef fused real:
    float
    double


cdef inline void _blas(char ta, char tb, int m, int n, int k, real alpha, const real* a,
                       int lda, const real* b, int ldb, real beta, real* c,
                       int ldc) noexcept nogil:
    """Row-major C (m, n) = alpha op(A) op(B) + beta C, as column-major C^T = op(B)^T op(A)^T."""
    if m <= 0 or n <= 0:
        return
    if real is float:
        sgemm(&tb, &ta, &n, &m, &k, &alpha, <float*>b, &ldb, <float*>a, &lda, &beta, c, &ldc)
    else:
        dgemm(&tb, &ta, &n, &m, &k, &alpha, <double*>b, &ldb, <double*>a, &lda, &beta, c,
              &ldc)


cdef inline const real* _rows_of(const real* a, char ta, int lda, Py_ssize_t r) noexcept nogil:
    """op(A)[r:] (row r of the logical matrix)."""
    return a + r * lda if ta == b'N' else a + r


cdef inline const real* _cols_of(const real* b, char tb, int ldb, Py_ssize_t c) noexcept nogil:
    """op(B)[:, c:]."""
    return b + c if tb == b'N' else b + c * ldb


cdef void _split(char ta, char tb, int m, int n, int k, real alpha, const real* a, int lda,
                 const real* b, int ldb, real beta, real* c, int ldc, int nt) noexcept nogil:
    """One product split over nt threads along its longer output side."""
    cdef int t, lo, hi, step, total
    cdef bint by_rows = m >= n
    total = m if by_rows else n
    step = (total + nt - 1) // nt
    step = ((step + _ALIGN - 1) // _ALIGN) * _ALIGN
    with parallel(num_threads=nt):
        t = openmp.omp_get_thread_num()
        lo = t * step
        hi = min(total, lo + step)
        if lo < hi and by_rows:
            _blas(ta, tb, hi - lo, n, k, alpha, _rows_of(a, ta, lda, lo), lda, b, ldb, beta,
                  c + <Py_ssize_t>lo * ldc, ldc)
        elif lo < hi:
            _blas(ta, tb, m, hi - lo, k, alpha, a, lda, _cols_of(b, tb, ldb, lo), ldb, beta,
                  c + lo, ldc)


cdef void _run(char ta, char tb, int m, int n, int k, real alpha, const real* a, int lda,
               const real* b, int ldb, real beta, real* c, int ldc, int nt) noexcept nogil:
    if nt > 1 and <double>m * n * k >= PARALLEL_MIN_MACS and max(m, n) >= 2 * _ALIGN:
        _split(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nt)
    else:
        _blas(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)


cdef void _batch(char ta, char tb, Py_ssize_t batch, int m, int n, int k, const real* a,
                 Py_ssize_t sa, int lda, const real* b, Py_ssize_t sb, int ldb, real* c,
                 Py_ssize_t sc, int ldc, int nt) noexcept nogil:
    """Many small products: whole products per thread."""
    cdef Py_ssize_t i
    for i in prange(batch, num_threads=nt, schedule="static"):
        _blas(ta, tb, m, n, k, <real>1, a + i * sa, lda, b + i * sb, ldb, <real>0,
              c + i * sc, ldc)


def _c_layout(cnp.ndarray c):
    """Row stride (elements) of an output BLAS can write: unit column stride."""
    cdef Py_ssize_t item = c.itemsize
    if c.shape[1] > 1 and c.strides[1] != item:
        return -1
    if c.shape[0] > 1 and (c.strides[0] % item or c.strides[0] < c.shape[1] * item):
        return -1
    return c.strides[0] // item if c.shape[0] > 1 else max(c.shape[1], 1)


def gemm(cnp.ndarray a, cnp.ndarray b, cnp.ndarray c, double alpha=1.0, double beta=0.0):
    """c = alpha a @ b + beta c for 2-D float32/float64 arrays of one dtype; False (nothing
    written) for other dtypes or layouts BLAS cannot read, so the caller falls back."""
    if a.ndim != 2 or b.ndim != 2 or c.ndim != 2:
        return False
    if not (a.dtype == b.dtype == c.dtype) or a.dtype.type not in (np.float32, np.float64):
        return False
    cdef int m = a.shape[0], k = a.shape[1], n = b.shape[1]
    if m == 0 or n == 0:
        return True
    if k == 0:
        if beta == 0:
            c[...] = 0
        else:
            c *= beta
        return True
    cdef char ta, tb
    cdef int lda, ldb
    cdef Py_ssize_t ldc = _c_layout(c)
    if ldc < 0 or not _operand(a, m, k, &ta, &lda) or not _operand(b, k, n, &tb, &ldb):
        return False
    cdef int nt = fastreduce.get_num_threads()
    cdef void* pa = cnp.PyArray_DATA(a)
    cdef void* pb = cnp.PyArray_DATA(b)
    cdef void* pc = cnp.PyArray_DATA(c)
    cdef bint single = a.dtype.type is np.float32
    with nogil:
        if single:
            _run[float](ta, tb, m, n, k, <float>alpha, <float*>pa, lda, <float*>pb, ldb,
                        <float>beta, <float*>pc, <int>ldc, nt)
        else:
            _run[double](ta, tb, m, n, k, alpha, <double*>pa, lda, <double*>pb, ldb, beta,
                         <double*>pc, <int>ldc, nt)
    return True


def gemm_batched(cnp.ndarray a, cnp.ndarray b, cnp.ndarray c):
    """c[i] = a[i] @ b[i] for 3-D arrays (stride-0 batches allowed in a and b); False (nothing
    written) where gemm would refuse. Small products run whole on each thread, large ones
    one after the other, each split."""
    if a.ndim != 3 or b.ndim != 3 or c.ndim != 3:
        return False
    if not (a.dtype == b.dtype == c.dtype) or a.dtype.type not in (np.float32, np.float64):
        return False
    cdef Py_ssize_t batch = c.shape[0], item = c.itemsize, i
    cdef int m = a.shape[1], k = a.shape[2], n = b.shape[2]
    cdef int nt = fastreduce.get_num_threads()
    if batch == 0 or m == 0 or n == 0:
        return True
    if (<double>m * n * k >= PARALLEL_MIN_MACS * 8 or batch < nt or k == 0 or nt < 2):
        for i in range(batch):      # every product has the first one's layout
            if not gemm(a[i], b[i], c[i]):
                return False
        return True
    cdef char ta, tb
    cdef int lda, ldb
    cdef Py_ssize_t ldc = _c_layout(c[0])
    if ldc < 0 or not _operand(a[0], m, k, &ta, &lda) or not _operand(b[0], k, n, &tb, &ldb):
        return False
    if (a.strides[0] % item or b.strides[0] % item or c.strides[0] % item
            or (c.strides[0] == 0 and batch > 1)):
        return False
    cdef Py_ssize_t sa = a.strides[0] // item, sb = b.strides[0] // item
    cdef Py_ssize_t sc = c.strides[0] // item
    cdef void* pa = cnp.PyArray_DATA(a)
    cdef void* pb = cnp.PyArray_DATA(b)
    cdef void* pc = cnp.PyArray_DATA(c)
    cdef bint single = a.dtype.type is np.float32
    with nogil:
        if single:
            _batch[float](ta, tb, batch, m, n, k, <float*>pa, sa, lda, <float*>pb, sb, ldb,
                          <float*>pc, sc, <int>ldc, nt)
        else:
            _batch[double](ta, tb, batch, m, n, k, <double*>pa, sa, lda, <double*>pb, sb, ldb,
                           <double*>pc, sc, <int>ldc, nt)
    return True
