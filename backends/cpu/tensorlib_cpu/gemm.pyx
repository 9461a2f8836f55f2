# cython: boundscheck=False, wraparound=False, cdivision=True
"""GEMM on the backend's one OpenMP thread team: single-threaded BLAS called from each OpenMP
thread on its share of the output.

Why not numpy's matmul: it runs OpenBLAS's own pthreads. Two thread pools on the same cores
force a choice: our OpenMP threads either sleep between kernels (waking them cost ~50 us per
parallel region here, more than a 1M-element add takes) or spin, and spinning threads took the
cores OpenBLAS's threads needed (a GEMM after an elementwise op ran 1.4-7x slower). With every
parallel region, GEMM included, on one team, idle threads can spin briefly and stay cheap to
wake, as PyTorch's do.

The BLAS is numpy's own OpenBLAS where its symbols are found (0.3.31 here: 10-26% faster on
the thin products of small convolutions than scipy's 0.3.30), switched to one thread for the
duration of each product and back (numpy's matmul in user code keeps its threads); otherwise
scipy's, through scipy.linalg.cython_blas, pinned to one thread at import."""
import ctypes
import glob
import os

import numpy as np

cimport numpy as cnp
cimport openmp
from cython.parallel cimport parallel, prange
from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer
from libc.stdint cimport int64_t, uintptr_t

from tensorlib_cpu import fastreduce

cnp.import_array()

# Below this many multiply-adds one thread does the whole product (a parallel region costs
# ~1 us with spinning threads; a 64x64x64 product ~10 us).
cdef enum:
    PARALLEL_MIN_MACS = 1 << 16
# A batch of products each at least this large runs product by product, each split across
# the threads; smaller ones run whole, one per thread at a time.
cdef enum:
    BATCH_SPLIT_MACS = 1 << 19
# Shares of a split output are multiples of this many rows/columns (OpenBLAS's register
# blocking), so no thread gets a ragged edge it computes slowly.
cdef enum:
    _ALIGN = 16

# ---- which BLAS ---------------------------------------------------------------------------
ctypedef void (*sgemm64_t)(const char*, const char*, const int64_t*, const int64_t*,
                           const int64_t*, const float*, const float*, const int64_t*,
                           const float*, const int64_t*, const float*, float*,
                           const int64_t*) noexcept nogil
ctypedef void (*dgemm64_t)(const char*, const char*, const int64_t*, const int64_t*,
                           const int64_t*, const double*, const double*, const int64_t*,
                           const double*, const int64_t*, const double*, double*,
                           const int64_t*) noexcept nogil
ctypedef void (*sgemm32_t)(char*, char*, int*, int*, int*, float*, float*, int*, float*, int*,
                           float*, float*, int*) noexcept nogil
ctypedef void (*dgemm32_t)(char*, char*, int*, int*, int*, double*, double*, int*, double*,
                           int*, double*, double*, int*) noexcept nogil
ctypedef void (*set_threads_t)(int) noexcept nogil
ctypedef int (*get_threads_t)() noexcept nogil

cdef sgemm64_t _np_sgemm = NULL
cdef dgemm64_t _np_dgemm = NULL
cdef set_threads_t _np_set_threads = NULL
cdef get_threads_t _np_get_threads = NULL
cdef sgemm32_t sgemm = NULL           # scipy.linalg.cython_blas's, when numpy's is not found
cdef dgemm32_t dgemm = NULL

# (sgemm, dgemm, set threads, get threads) in numpy's 64-bit-integer OpenBLAS builds
_NUMPY_OPENBLAS_NAMES = (
    ("scipy_sgemm_64_", "scipy_dgemm_64_", "scipy_openblas_set_num_threads64_",
     "scipy_openblas_get_num_threads64_"),                          # numpy >= 2.0 wheels
    ("sgemm_64_", "dgemm_64_", "openblas_set_num_threads64_",
     "openblas_get_num_threads64_"),                                # numpy 1.2x wheels
)


def _address(lib, name):
    fn = getattr(lib, name, None)
    return ctypes.cast(fn, ctypes.c_void_p).value if fn is not None else None


def _bind_numpy_openblas():
    """Use numpy's OpenBLAS if its library and symbols are found; returns its path."""
    global _np_sgemm, _np_dgemm, _np_set_threads, _np_get_threads
    base = os.path.dirname(np.__file__)
    for path in sorted(glob.glob(os.path.join(base, os.pardir, "numpy.libs", "*openblas*"))):
        lib = ctypes.CDLL(path)
        for names in _NUMPY_OPENBLAS_NAMES:
            found = [_address(lib, n) for n in names]
            if all(found):
                _np_sgemm = <sgemm64_t><uintptr_t>found[0]
                _np_dgemm = <dgemm64_t><uintptr_t>found[1]
                _np_set_threads = <set_threads_t><uintptr_t>found[2]
                _np_get_threads = <get_threads_t><uintptr_t>found[3]
                return path
    return None


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


def _cython_blas(name):
    """A function of scipy.linalg.cython_blas by its exported C pointer (no build-time
    dependency on scipy's .pxd files)."""
    from scipy.linalg import cython_blas
    capsule = cython_blas.__pyx_capi__[name]
    return <uintptr_t>PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule))


def _bind_scipy_blas():
    global _np_sgemm, _np_dgemm, _np_set_threads, _np_get_threads, sgemm, dgemm
    _pin_scipy_blas()
    sgemm = <sgemm32_t><uintptr_t>_cython_blas("sgemm")
    dgemm = <dgemm32_t><uintptr_t>_cython_blas("dgemm")
    _np_sgemm, _np_dgemm, _np_set_threads, _np_get_threads = NULL, NULL, NULL, NULL
    return "scipy.linalg.cython_blas"


def use_blas(library):
    """Run products on "numpy" (its OpenBLAS; falls back to scipy's when its symbols are not
    found) or "scipy" (scipy.linalg.cython_blas); returns what is in use (also in BLAS)."""
    global BLAS
    if library not in ("numpy", "scipy"):
        raise ValueError(f"use_blas: expected 'numpy' or 'scipy', got {library!r}")
    BLAS = (_bind_numpy_openblas() if library == "numpy" else None) or _bind_scipy_blas()
    return BLAS


# The library the products run on: numpy's OpenBLAS (its path) or "scipy.linalg.cython_blas".
BLAS = use_blas("numpy")


cdef inline int _single_threaded_blas() noexcept nogil:
    """Switch numpy's OpenBLAS to one thread for our calls; returns the count to restore."""
    cdef int before = 1
    if _np_get_threads != NULL:
        before = _np_get_threads()
        if before != 1:
            _np_set_threads(1)
    return before


cdef inline void _restore_blas_threads(int before) noexcept nogil:
    if _np_set_threads != NULL and before != 1:
        _np_set_threads(before)


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
    cdef int64_t m64 = m, n64 = n, k64 = k, lda64 = lda, ldb64 = ldb, ldc64 = ldc
    if real is float:
        if _np_sgemm != NULL:
            _np_sgemm(&tb, &ta, &n64, &m64, &k64, &alpha, b, &ldb64, a, &lda64, &beta, c,
                      &ldc64)
        else:
            sgemm(&tb, &ta, &n, &m, &k, &alpha, <float*>b, &ldb, <float*>a, &lda, &beta, c,
                  &ldc)
    else:
        if _np_dgemm != NULL:
            _np_dgemm(&tb, &ta, &n64, &m64, &k64, &alpha, b, &ldb64, a, &lda64, &beta, c,
                      &ldc64)
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
    cdef int before
    with nogil:
        before = _single_threaded_blas()
        if single:
            _run[float](ta, tb, m, n, k, <float>alpha, <float*>pa, lda, <float*>pb, ldb,
                        <float>beta, <float*>pc, <int>ldc, nt)
        else:
            _run[double](ta, tb, m, n, k, alpha, <double*>pa, lda, <double*>pb, ldb, beta,
                         <double*>pc, <int>ldc, nt)
        _restore_blas_threads(before)
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
    if (<double>m * n * k >= BATCH_SPLIT_MACS or batch < nt or k == 0 or nt < 2):
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
    cdef int before
    with nogil:
        before = _single_threaded_blas()
        if single:
            _batch[float](ta, tb, batch, m, n, k, <float*>pa, sa, lda, <float*>pb, sb, ldb,
                          <float*>pc, sc, <int>ldc, nt)
        else:
            _batch[double](ta, tb, batch, m, n, k, <double*>pa, sa, lda, <double*>pb, sb, ldb,
                           <double*>pc, sc, <int>ldc, nt)
        _restore_blas_threads(before)
    return True
