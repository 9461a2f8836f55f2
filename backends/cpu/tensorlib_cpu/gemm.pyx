# cython: boundscheck=False, wraparound=False, cdivision=True
"""GEMM on the backend's one OpenMP thread team: single-threaded BLAS called from each OpenMP
thread on its share of the output.

Why not numpy's matmul: it runs OpenBLAS's own pthreads. Two thread pools on the same cores
force a choice: our OpenMP threads either sleep between kernels (waking them cost ~50 us per
parallel region here, more than a 1M-element add takes) or spin, and spinning threads took the
cores OpenBLAS's threads needed (a GEMM after an elementwise op ran 1.4-7x slower). With every
parallel region, GEMM included, on one team, idle threads can spin briefly and stay cheap to
wake, as PyTorch's do.

The BLAS (see blas_choice: TENSORLIB_BLAS, else per CPU) is one of
- MKL from the `mkl` wheel (libmkl_rt, its ILP64 `cblas_*_64` entry points), switched to its
  sequential threading layer: each OpenMP thread calls it on its share, as with OpenBLAS. Its
  strided-batched GEMM runs each chunk of a batch a thread takes in one call, and its
  bf16/fp16 GEMMs (float32 accumulation) are used for those dtypes whenever it is installed,
  whichever library runs float32/float64;
- numpy's own OpenBLAS (0.3.31 here: 10-26% faster on the thin products of small
  convolutions than scipy's 0.3.30), switched to one thread for the duration of each product
  and back (numpy's matmul in user code keeps its threads). Its batched GEMM is a C loop over
  the products of each chunk a thread takes (the unprefixed `cblas_sgemm_batch_strided` it exports
  is not part of its scipy-openblas interface);
- oneDNN's `dnnl_sgemm` for float32 ("onednn"; float64 on numpy's OpenBLAS), split by
  _split like the others: one sequential call per thread's share (inside our regions it
  runs on the calling thread). Its own partition of a call made on nt threads lost to
  PyTorch at two threads (784x128x512 0.47-0.69x where both were level on one thread; see
  docs/performance.md), while every half of our row split took half the one-thread time;
- "openblas+mkl": numpy's OpenBLAS, but MKL (sequential) for the float32 products that read
  B transposed, which OpenBLAS's AVX-512 kernels run 14-40% slower (see blas_choice);
- scipy's, through scipy.linalg.cython_blas, pinned to one thread at import."""
import ctypes
import glob
import os

import numpy as np

cimport numpy as cnp
cimport openmp
from cython.parallel cimport parallel, prange
from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer
from libc.stdint cimport int64_t, uint16_t, uintptr_t
from libc.stdlib cimport free
from libc.string cimport memcpy

from tensorlib_cpu import blas_choice, fastreduce, onednn
from tensorlib_cpu.small_gemm cimport (small_dgemm, small_dgemm_bias, small_sgemm,
                                       small_sgemm_bias)

cnp.import_array()

# A product is split over nt threads only when each thread gets at least this many
# multiply-adds of float32 (half as many of float64): ~10 us of work. Smaller shares lost on
# a shared machine: a thread whose core is busy holds up the whole region (the LSTM's
# 97x51x204 float64 GEMM took 0.2-1.6 ms on 2 threads against ~60-110 us on one, before the
# load-adaptive thread count: fastreduce.threads_now). On the idle 2-core AMD EPYC that
# product (1.0M) took 42-45 us on one thread, 26 split in two: float64's bound was 1 << 19
# too, which kept it whole.
cdef enum:
    PARALLEL_MIN_MACS = 1 << 19
    PARALLEL_MIN_MACS_F64 = 1 << 18
# Whole products of a batch are handed to the threads in chunks of at least this many
# multiply-adds (one product when it is larger), so tiny products cost one claim per chunk,
# and of at least 1/BATCH_CHUNKS_PER_THREAD of a thread's even share of the products: each
# thread then runs consecutive products (adjacent memory) while a thread whose core is taken
# still leaves all but a few chunks to the others. 64x128^3 on 2 threads, alternating runs
# (wall time, best of 40 rounds, machine loaded): 1062/899/850 us in chunks of 8 products
# against 1086/936/916 one product at a time.
cdef enum:
    BATCH_CHUNK_MACS = 1 << 17
    BATCH_CHUNKS_PER_THREAD = 4
# Shares of a split output are multiples of this many rows/columns, a multiple of OpenBLAS's
# register blocking for float64 and of half of it for float32, whose 8-row edge costs no
# more than its share: on one thread 384, 392 and 400 rows of 784x128x512 took 549-558,
# 560-575 and 571-582 us. 16 split 784 rows 400/384, so one thread ran ~2% longer.
cdef enum:
    _ALIGN = 8
# A product is split by rows of C (each thread a contiguous block of C and of A) when each
# thread gets at least this many, even where C is wider than tall; by columns only below.
# Rows won on the 2-core AMD EPYC, alternating with torch (best of 16 rounds, wall time):
# 784x128x512 590-770 us against 768-1119 by columns, 512x128x784 579-821 against 712-867,
# 128x512x256 203-205 against 216-229, 256^3 234 against 290; columns won where each
# thread would get fewer rows (64x512x2048: 906 against 1254 us).
cdef enum:
    _MIN_SPLIT_ROWS = 64
# "openblas+mkl" sends a float32 product with B transposed to MKL from this many multiply-adds
# (per call: a thread's share of a split product). Below it OpenBLAS's form was still faster
# on the Zen 4 (2 threads, best of 100): 128x256x10 16.9 against 47 us, 97x51x204 28.8
# against 32; from 128x256x256 per thread (8M) up MKL won by 10-30%.
cdef enum:
    TRANSPOSED_B_MKL_MIN_MACS = 1 << 21

# dnnl_sgemm reads a B it is not asked to transpose from its rows as they lie: rows off a
# 64-byte boundary (numpy's arrays are 16-byte aligned, so every from_numpy B) cost 10-12% on
# 2 threads (784x128x512 346 against 309 us, 256^3 117 against 106; MKL is level). Such a B
# is first copied to aligned rows when the call (a thread's share of a split product) has
# at least ALIGNED_COPY_MIN_ROWS rows, so the k x n copy is paid back by 10% of the
# m x k x n product, and B is at most ALIGNED_COPY_MAX_BYTES: 1024^3's 4 MB B lost only 2%
# misaligned, and copying it cost more than that.
cdef enum:
    ALIGNED_COPY_MIN_ROWS = 128
    ALIGNED_COPY_MAX_BYTES = 1 << 20

cdef extern from "<stdlib.h>" nogil:
    int posix_memalign(void** ptr, size_t alignment, size_t size)

# ---- which BLAS: function pointers, binding each library, use_blas, describe ----------
include "gemm_libraries.pxi"


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


ctypedef fused real:
    float
    double


cdef inline int _cblas_trans(char t) noexcept nogil:
    return CBLAS_TRANS if t == b'T' else CBLAS_NO_TRANS


cdef float* _aligned_copy(const float* b, int rows, int cols, int ld) noexcept nogil:
    """b's rows copied by the calling thread to a 64-byte aligned buffer of row stride
    (cols + 15) & ~15 (whole lines); NULL when no memory. Each thread of a split product
    copies for itself: a copy shared between threads cost more than it saved, its lines
    moving from the core that wrote them to the one reading them."""
    cdef int i, ldc = (cols + 15) & ~15
    cdef float* out = NULL
    if posix_memalign(<void**>&out, 64, <size_t>rows * ldc * sizeof(float)) != 0:
        return NULL
    for i in range(rows):
        memcpy(out + <Py_ssize_t>i * ldc, b + <Py_ssize_t>i * ld, cols * sizeof(float))
    return out


cdef inline void _blas(char ta, char tb, int m, int n, int k, real alpha, const real* a,
                       int lda, const real* b, int ldb, real beta, real* c,
                       int ldc) noexcept nogil:
    """Row-major C (m, n) = alpha op(A) op(B) + beta C: MKL's row-major CBLAS, or the Fortran
    BLAS as column-major C^T = op(B)^T op(A)^T."""
    if m <= 0 or n <= 0:
        return
    cdef int64_t m64 = m, n64 = n, k64 = k, lda64 = lda, ldb64 = ldb, ldc64 = ldc
    cdef float* copy
    if real is float:
        # float32 products up to small_gemm.MAX_MACS_FLOAT: our AVX-512 kernel
        if small_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
            return
        if _dnnl_sgemm != NULL and tb == b'N' and m >= ALIGNED_COPY_MIN_ROWS \
                and <Py_ssize_t>k * n * 4 <= ALIGNED_COPY_MAX_BYTES \
                and ((<uintptr_t>b) & 63 or ldb & 15):
            copy = _aligned_copy(b, k, n, ldb)
            if copy != NULL:
                _dnnl_sgemm(ta, tb, m64, n64, k64, alpha, a, lda64, copy, (n + 15) & ~15,
                            beta, c, ldc64)
                free(copy)
                return
        if _dnnl_sgemm != NULL:
            _dnnl_sgemm(ta, tb, m64, n64, k64, alpha, a, lda64, b, ldb64, beta, c, ldc64)
        elif _mkl_sgemm != NULL:
            _mkl_sgemm(CBLAS_ROW_MAJOR, _cblas_trans(ta), _cblas_trans(tb), m64, n64, k64,
                       alpha, a, lda64, b, ldb64, beta, c, ldc64)
        elif (tb == b'T' and _mkl_sgemm_bt != NULL
              and <double>m * n * k >= <double>TRANSPOSED_B_MKL_MIN_MACS):
            _mkl_sgemm_bt(CBLAS_ROW_MAJOR, _cblas_trans(ta), CBLAS_TRANS, m64, n64, k64, alpha,
                          a, lda64, b, ldb64, beta, c, ldc64)
        elif _np_sgemm != NULL:
            _np_sgemm(&tb, &ta, &n64, &m64, &k64, &alpha, b, &ldb64, a, &lda64, &beta, c,
                      &ldc64)
        else:
            sgemm(&tb, &ta, &n, &m, &k, &alpha, <float*>b, &ldb, <float*>a, &lda, &beta, c,
                  &ldc)
    else:
        # float64 products up to small_gemm.MAX_MACS: our AVX-512 kernel (small_gemm.h)
        if small_dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
            return
        if _mkl_dgemm != NULL:
            _mkl_dgemm(CBLAS_ROW_MAJOR, _cblas_trans(ta), _cblas_trans(tb), m64, n64, k64,
                       alpha, a, lda64, b, ldb64, beta, c, ldc64)
        elif _np_dgemm != NULL:
            _np_dgemm(&tb, &ta, &n64, &m64, &k64, &alpha, b, &ldb64, a, &lda64, &beta, c,
                      &ldc64)
        else:
            dgemm(&tb, &ta, &n, &m, &k, &alpha, <double*>b, &ldb, <double*>a, &lda, &beta, c,
                  &ldc)


cdef inline void _blas_batch(char ta, char tb, Py_ssize_t batch, int m, int n, int k,
                             const real* a, Py_ssize_t sa, int lda, const real* b,
                             Py_ssize_t sb, int ldb, real* c, Py_ssize_t sc,
                             int ldc) noexcept nogil:
    """c[i] = op(a[i]) op(b[i]) for i < batch (element strides sa, sb, sc between products):
    one strided-batched call on MKL, a loop over the products on the other libraries."""
    cdef Py_ssize_t i
    if batch <= 0 or m <= 0 or n <= 0:
        return
    if real is float:
        if _mkl_sgemm_strided != NULL:
            _mkl_sgemm_strided(CBLAS_ROW_MAJOR, _cblas_trans(ta), _cblas_trans(tb), m, n, k,
                               1, a, lda, sa, b, ldb, sb, 0, c, ldc, sc, batch)
            return
    else:
        if _mkl_dgemm_strided != NULL:
            _mkl_dgemm_strided(CBLAS_ROW_MAJOR, _cblas_trans(ta), _cblas_trans(tb), m, n, k,
                               1, a, lda, sa, b, ldb, sb, 0, c, ldc, sc, batch)
            return
    for i in range(batch):
        _blas(ta, tb, m, n, k, <real>1, a + i * sa, lda, b + i * sb, ldb, <real>0,
              c + i * sc, ldc)


cdef inline const real* _rows_of(const real* a, char ta, int lda, Py_ssize_t r) noexcept nogil:
    """op(A)[r:] (row r of the logical matrix)."""
    return a + r * lda if ta == b'N' else a + r


cdef inline const real* _cols_of(const real* b, char tb, int ldb, Py_ssize_t c) noexcept nogil:
    """op(B)[:, c:]."""
    return b + c if tb == b'N' else b + c * ldb


cdef inline int _share_step(int total, int nt) noexcept nogil:
    """Rows/columns per thread: an even share rounded up to the register blocking."""
    cdef int step = (total + nt - 1) // nt
    return ((step + _ALIGN - 1) // _ALIGN) * _ALIGN


cdef void _split(char ta, char tb, Py_ssize_t batch, int m, int n, int k, real alpha,
                 const real* a, Py_ssize_t sa, int lda, const real* b, Py_ssize_t sb, int ldb,
                 real beta, real* c, Py_ssize_t sc, int ldc, int nt) noexcept nogil:
    """`batch` products (one when batch == 1; alpha/beta only then) split over nt threads
    by rows of the output (by columns when it is short and wide): each thread computes its
    rows (or columns) of every product, in one batched call where the library has one."""
    cdef int t, lo, hi
    cdef bint by_rows = m >= n or m >= <int>_MIN_SPLIT_ROWS * nt
    cdef int step = _share_step(m if by_rows else n, nt)
    with parallel(num_threads=nt):
        t = openmp.omp_get_thread_num()
        lo = t * step
        hi = min(m if by_rows else n, lo + step)
        if lo < hi and batch == 1 and by_rows:
            _blas(ta, tb, hi - lo, n, k, alpha, _rows_of(a, ta, lda, lo), lda, b, ldb, beta,
                  c + <Py_ssize_t>lo * ldc, ldc)
        elif lo < hi and batch == 1:
            _blas(ta, tb, m, hi - lo, k, alpha, a, lda, _cols_of(b, tb, ldb, lo), ldb, beta,
                  c + lo, ldc)
        elif lo < hi and by_rows:
            _blas_batch(ta, tb, batch, hi - lo, n, k, _rows_of(a, ta, lda, lo), sa, lda, b,
                        sb, ldb, c + <Py_ssize_t>lo * ldc, sc, ldc)
        elif lo < hi:
            _blas_batch(ta, tb, batch, m, hi - lo, k, a, sa, lda, _cols_of(b, tb, ldb, lo),
                        sb, ldb, c + lo, sc, ldc)


cdef inline double _min_macs(bint f64) noexcept nogil:
    return PARALLEL_MIN_MACS_F64 if f64 else PARALLEL_MIN_MACS


cdef inline bint _worth_splitting(double macs, int m, int n, int nt, bint f64) noexcept nogil:
    return nt > 1 and macs >= _min_macs(f64) * nt and max(m, n) >= 2 * _ALIGN


cdef extern from "skinny_gemm.h":
    int skinny_gemm_float(char ta, char tb, int m, int n, int k, float alpha, const float* a,
                          int lda, const float* b, int ldb, float beta, float* c,
                          int ldc) nogil
    int skinny_gemm_double(char ta, char tb, int m, int n, int k, double alpha,
                           const double* a, int lda, const double* b, int ldb, double beta,
                           double* c, int ldc) nogil


cdef void _run(char ta, char tb, int m, int n, int k, real alpha, const real* a, int lda,
               const real* b, int ldb, real beta, real* c, int ldc, int nt) noexcept nogil:
    # a dimension of 1 (outer products, matrix-vector): vector loops, see skinny_gemm.h
    if real is float:
        if skinny_gemm_float(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
            return
    elif skinny_gemm_double(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
        return
    cdef int before
    if _worth_splitting(<double>m * n * k, m, n, nt, sizeof(real) == 8):
        _split(ta, tb, 1, m, n, k, alpha, a, 0, lda, b, 0, ldb, beta, c, 0, ldc, nt)
    elif real is float and _dnnl_sgemm != NULL and not openmp.omp_in_parallel():
        # outside a region dnnl_sgemm would open one on the OpenMP count: one thread here
        before = openmp.omp_get_max_threads()
        openmp.omp_set_num_threads(1)
        _blas(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
        openmp.omp_set_num_threads(before)
    else:
        _blas(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)


cdef void _batch(char ta, char tb, Py_ssize_t batch, int m, int n, int k, const real* a,
                 Py_ssize_t sa, int lda, const real* b, Py_ssize_t sb, int ldb, real* c,
                 Py_ssize_t sc, int ldc, int nt) noexcept nogil:
    """Whole products, handed out in chunks (see BATCH_CHUNK_MACS) to whichever thread is
    free (one batched call per chunk on MKL): a thread whose core is taken by another
    process leaves its products to the others instead of holding up the region, and no
    operand is packed twice."""
    cdef double macs = <double>m * n * k
    cdef Py_ssize_t chunk = max(1, <Py_ssize_t>(BATCH_CHUNK_MACS / macs),
                                batch // (BATCH_CHUNKS_PER_THREAD * nt))
    cdef Py_ssize_t chunks = (batch + chunk - 1) // chunk, u, lo
    for u in prange(chunks, schedule="dynamic", chunksize=1, num_threads=nt, nogil=True):
        lo = u * chunk
        _blas_batch(ta, tb, min(chunk, batch - lo), m, n, k, a + lo * sa, sa, lda,
                    b + lo * sb, sb, ldb, c + lo * sc, sc, ldc)


cdef inline void _fill_rows(real* c, int ldc, int lo, int hi, int n,
                            const real* row) noexcept nogil:
    cdef int i
    for i in range(lo, hi):
        memcpy(c + <Py_ssize_t>i * ldc, row, n * sizeof(real))


cdef inline void _block_bias(char ta, char tb, int m, int n, int k, const real* a, int lda,
                             const real* b, int ldb, const real* bias, real* c, int ldc,
                             int nt) noexcept nogil:
    """c = op(a) op(b) + bias for one block: small products on the small kernel's bias
    epilogue, else the bias copied into the rows and the product added onto them (beta = 1)."""
    if real is double:
        if small_dgemm_bias(ta, tb, m, n, k, a, lda, b, ldb, bias, c, ldc):
            return
    else:
        if small_sgemm_bias(ta, tb, m, n, k, a, lda, b, ldb, bias, c, ldc):
            return
    _fill_rows(c, ldc, 0, m, n, bias)
    _run(ta, tb, m, n, k, <real>1, a, lda, b, ldb, <real>1, c, ldc, nt)


cdef void _run_bias(char ta, char tb, int m, int n, int k, const real* a, int lda,
                    const real* b, int ldb, const real* bias, real* c, int ldc,
                    int nt) noexcept nogil:
    """c = op(a) op(b) + bias, bias a row of n broadcast over the m rows (a Linear layer's
    forward), split as _split splits: each thread adds the bias to its own block, so the
    broadcast runs on every thread and its rows are still in that thread's cache when BLAS
    reads them."""
    cdef int t, lo, hi, step
    cdef bint by_rows = m >= n or m >= <int>_MIN_SPLIT_ROWS * nt
    if not _worth_splitting(<double>m * n * k, m, n, nt, sizeof(real) == 8):
        _block_bias(ta, tb, m, n, k, a, lda, b, ldb, bias, c, ldc, nt)
        return
    step = _share_step(m if by_rows else n, nt)
    with parallel(num_threads=nt):
        t = openmp.omp_get_thread_num()
        lo = t * step
        hi = min(m if by_rows else n, lo + step)
        if lo < hi and by_rows:
            _block_bias(ta, tb, hi - lo, n, k, _rows_of(a, ta, lda, lo), lda, b, ldb, bias,
                        c + <Py_ssize_t>lo * ldc, ldc, 1)
        elif lo < hi:
            _block_bias(ta, tb, m, hi - lo, k, a, lda, _cols_of(b, tb, ldb, lo), ldb,
                        bias + lo, c + lo, ldc, 1)


cdef void _run_batch(char ta, char tb, Py_ssize_t batch, int m, int n, int k, const real* a,
                     Py_ssize_t sa, int lda, const real* b, Py_ssize_t sb, int ldb, real* c,
                     Py_ssize_t sc, int ldc, int nt) noexcept nogil:
    """Whole products on whichever thread is free (see _batch) for the part of the batch
    that divides over the threads; the batch % nt products left over (all of them when
    there are fewer products than threads) are split by rows/columns when that is worth a
    region, so no thread idles while another runs an extra whole product. A small total
    runs on the calling thread. Measured on one thread (CPU time, AMD EPYC): a thread's half
    of a 64x128^3 batch took 2.43-2.77 ms as 32 whole products against 2.78-2.91 as the top
    rows of all 64 (each B packed by both threads); 16x256^3 3.9 against 4.3 ms."""
    cdef double macs = <double>m * n * k
    cdef Py_ssize_t rest = batch % nt if nt > 1 else 0, whole = batch - rest
    cdef int before
    if nt < 2 or macs * batch < _min_macs(sizeof(real) == 8) * nt:
        # on the calling thread: dnnl_sgemm outside a region would take the OpenMP count
        before = openmp.omp_get_max_threads()
        openmp.omp_set_num_threads(1)
        _blas_batch(ta, tb, batch, m, n, k, a, sa, lda, b, sb, ldb, c, sc, ldc)
        openmp.omp_set_num_threads(before)
    elif not (rest and _worth_splitting(macs * rest, m, n, nt, sizeof(real) == 8)):
        _batch(ta, tb, batch, m, n, k, a, sa, lda, b, sb, ldb, c, sc, ldc, nt)
    else:
        if whole:
            _batch(ta, tb, whole, m, n, k, a, sa, lda, b, sb, ldb, c, sc, ldc, nt)
        _split(ta, tb, rest, m, n, k, <real>1, a + whole * sa, sa, lda, b + whole * sb, sb,
               ldb, <real>0, c + whole * sc, sc, ldc, nt)


def _c_layout(cnp.ndarray c):
    """Row stride (elements) of an output BLAS can write: unit column stride."""
    cdef Py_ssize_t item = c.itemsize
    if c.shape[1] > 1 and c.strides[1] != item:
        return -1
    if c.shape[0] > 1 and (c.strides[0] % item or c.strides[0] < c.shape[1] * item):
        return -1
    return c.strides[0] // item if c.shape[0] > 1 else max(c.shape[1], 1)


cdef struct _Product:
    # one 2-D product c = alpha op(a) op(b) + beta c, as BLAS reads it (see _product_of)
    char ta
    char tb
    int m
    int n
    int k
    int lda
    int ldb
    int ldc
    double alpha
    double beta
    void* a
    void* b
    void* c


cdef int _product_of(cnp.ndarray a, cnp.ndarray b, cnp.ndarray c, double alpha, double beta,
                     _Product* p) except -1:
    """Fill p for c = alpha a @ b + beta c: 1 when BLAS can run it, 0 when no BLAS call is
    needed (an empty product: see _finish_empty), 2 for dtypes or layouts BLAS cannot take.
    Writes nothing."""
    if a.ndim != 2 or b.ndim != 2 or c.ndim != 2:
        return 2
    if not (a.dtype == b.dtype == c.dtype) or a.dtype.type not in (np.float32, np.float64):
        return 2
    p.m, p.k, p.n = a.shape[0], a.shape[1], b.shape[1]
    p.beta = beta
    if p.m == 0 or p.n == 0 or p.k == 0:
        return 0
    cdef Py_ssize_t ldc = _c_layout(c)
    if ldc < 0 or not _operand(a, p.m, p.k, &p.ta, &p.lda) \
            or not _operand(b, p.k, p.n, &p.tb, &p.ldb):
        return 2
    p.ldc = <int>ldc
    p.alpha = alpha
    p.a, p.b, p.c = cnp.PyArray_DATA(a), cnp.PyArray_DATA(b), cnp.PyArray_DATA(c)
    return 1


cdef void _finish_empty(cnp.ndarray c, _Product* p):
    """An empty product's output: beta * c when only k is 0 (nothing when c is empty)."""
    if p.m == 0 or p.n == 0:
        return
    if p.beta == 0:
        c[...] = 0
    else:
        c *= p.beta


cdef inline void _run_product(_Product* p, bint single, int nt) noexcept nogil:
    if single:
        _run[float](p.ta, p.tb, p.m, p.n, p.k, <float>p.alpha, <float*>p.a, p.lda,
                    <float*>p.b, p.ldb, <float>p.beta, <float*>p.c, p.ldc, nt)
    else:
        _run[double](p.ta, p.tb, p.m, p.n, p.k, p.alpha, <double*>p.a, p.lda, <double*>p.b,
                     p.ldb, p.beta, <double*>p.c, p.ldc, nt)


cdef inline void _run_rows(_Product* p, bint single, int lo, int hi) noexcept nogil:
    """Rows lo:hi of p's output on the calling thread."""
    if lo >= hi:
        return
    if single:
        _run[float](p.ta, p.tb, hi - lo, p.n, p.k, <float>p.alpha,
                    _rows_of[float](<float*>p.a, p.ta, p.lda, lo), p.lda, <float*>p.b,
                    p.ldb, <float>p.beta, <float*>p.c + <Py_ssize_t>lo * p.ldc, p.ldc, 1)
    else:
        _run[double](p.ta, p.tb, hi - lo, p.n, p.k, p.alpha,
                     _rows_of[double](<double*>p.a, p.ta, p.lda, lo), p.lda, <double*>p.b,
                     p.ldb, p.beta, <double*>p.c + <Py_ssize_t>lo * p.ldc, p.ldc, 1)


# Two products run side by side (gemm_pair) only when the threads split between them leave
# no group with more than this share over an even split of the total work.
cdef double _PAIR_MAX_IMBALANCE = 1.25


cdef void _run_pair(_Product* p1, _Product* p2, bint single, int nt) noexcept nogil:
    """p1 and p2 at once: the threads split into two groups in proportion to the products'
    multiply-adds and each group splits its own product by rows, so no thread packs an
    operand of both and each product is cut into fewer pieces than when each is split over
    all the threads in turn. One after the other (each on all threads) when the groups
    could not be balanced or the products are too small to share."""
    cdef double w1 = <double>p1.m * p1.n * p1.k, w2 = <double>p2.m * p2.n * p2.k
    cdef int g1 = <int>(nt * w1 / (w1 + w2) + 0.5) if nt > 1 else 0
    g1 = max(1, min(nt - 1, g1))
    cdef double worst = max(w1 / g1, w2 / (nt - g1)) if nt > 1 else 0
    cdef int t, i, size, step
    cdef _Product* p
    if nt < 2 or w1 + w2 < _min_macs(not single) \
            or worst > _PAIR_MAX_IMBALANCE * (w1 + w2) / nt:
        _run_product(p1, single, nt)
        _run_product(p2, single, nt)
        return
    with parallel(num_threads=nt):
        t = openmp.omp_get_thread_num()
        if t < g1:
            p, i, size = p1, t, g1
        else:
            p, i, size = p2, t - g1, nt - g1
        step = _share_step(p.m, size)
        _run_rows(p, single, i * step, min(p.m, (i + 1) * step))


def gemm(cnp.ndarray a, cnp.ndarray b, cnp.ndarray c, double alpha=1.0, double beta=0.0):
    """c = alpha a @ b + beta c for 2-D float32/float64 arrays of one dtype; False (nothing
    written) for other dtypes or layouts BLAS cannot read, so the caller falls back."""
    cdef _Product p
    cdef int state = _product_of(a, b, c, alpha, beta, &p)
    if state == 0:
        _finish_empty(c, &p)
    if state != 1:
        return state == 0
    cdef int nt = fastreduce.threads_now()
    cdef bint single = a.dtype.type is np.float32
    cdef int before
    with nogil:
        before = _single_threaded_blas()
        _run_product(&p, single, nt)
        _restore_blas_threads(before)
    return True


def gemm_bias(cnp.ndarray a, cnp.ndarray b, cnp.ndarray bias, cnp.ndarray c):
    """c = a @ b + bias for 2-D float32/float64 a, b, c and a 1-D bias of c's width and
    dtype with unit stride, broadcast over c's rows (see _run_bias); False (nothing written)
    where gemm would refuse or the bias is laid out otherwise."""
    cdef _Product p
    cdef int state = _product_of(a, b, c, 1.0, 1.0, &p)
    if state == 2 or bias.ndim != 1 or bias.dtype != c.dtype or bias.shape[0] != p.n:
        return False
    if p.n > 1 and bias.strides[0] != bias.itemsize:
        return False
    if state == 0:
        if p.m and p.n:
            c[...] = bias
        return True
    cdef int nt = fastreduce.threads_now()
    cdef void* pbias = cnp.PyArray_DATA(bias)
    cdef bint single = a.dtype.type is np.float32
    cdef int before
    with nogil:
        before = _single_threaded_blas()
        if single:
            _run_bias[float](p.ta, p.tb, p.m, p.n, p.k, <float*>p.a, p.lda, <float*>p.b,
                             p.ldb, <float*>pbias, <float*>p.c, p.ldc, nt)
        else:
            _run_bias[double](p.ta, p.tb, p.m, p.n, p.k, <double*>p.a, p.lda, <double*>p.b,
                              p.ldb, <double*>pbias, <double*>p.c, p.ldc, nt)
        _restore_blas_threads(before)
    return True


def gemm_pair(cnp.ndarray a1, cnp.ndarray b1, cnp.ndarray c1, cnp.ndarray a2, cnp.ndarray b2,
              cnp.ndarray c2):
    """c1 = a1 @ b1 and c2 = a2 @ b2, two independent products of one dtype (a linear
    layer's input and weight gradients) run side by side on the threads (see _run_pair);
    False (nothing written) where gemm would refuse either."""
    cdef _Product p1, p2
    cdef int s1 = _product_of(a1, b1, c1, 1.0, 0.0, &p1)
    cdef int s2 = _product_of(a2, b2, c2, 1.0, 0.0, &p2)
    if s1 == 2 or s2 == 2 or a1.dtype != a2.dtype:
        return False
    if s1 == 0:
        _finish_empty(c1, &p1)
    if s2 == 0:
        _finish_empty(c2, &p2)
    cdef int nt = fastreduce.threads_now()
    cdef bint single = a1.dtype.type is np.float32
    cdef int before
    with nogil:
        before = _single_threaded_blas()
        if s1 == 1 and s2 == 1:
            _run_pair(&p1, &p2, single, nt)
        elif s1 == 1:
            _run_product(&p1, single, nt)
        elif s2 == 1:
            _run_product(&p2, single, nt)
        _restore_blas_threads(before)
    return True


cdef bint _batch_layout(cnp.ndarray a, cnp.ndarray b, cnp.ndarray c, char* ta, char* tb,
                        int* lda, int* ldb, int* ldc, Py_ssize_t* sa, Py_ssize_t* sb,
                        Py_ssize_t* sc):
    """How BLAS reads 3-D a, b and writes c (every product has the first one's layout);
    False for layouts it cannot take (a stride-0 output batch included)."""
    cdef Py_ssize_t item_a = a.itemsize, item_c = c.itemsize
    cdef Py_ssize_t batch = c.shape[0]
    cdef Py_ssize_t row_stride = _c_layout(c[0])
    if row_stride < 0 or not _operand(a[0], a.shape[1], a.shape[2], ta, lda) \
            or not _operand(b[0], b.shape[1], b.shape[2], tb, ldb):
        return False
    if (a.strides[0] % item_a or b.strides[0] % item_a or c.strides[0] % item_c
            or (c.strides[0] == 0 and batch > 1)):
        return False
    ldc[0] = <int>row_stride
    sa[0], sb[0], sc[0] = a.strides[0] // item_a, b.strides[0] // item_a, c.strides[0] // item_c
    return True


def gemm_batched(cnp.ndarray a, cnp.ndarray b, cnp.ndarray c):
    """c[i] = a[i] @ b[i] for 3-D arrays (stride-0 batches allowed in a and b); False (nothing
    written) where gemm would refuse. Small products run whole on each thread, large ones
    split across the threads (see _run_batch)."""
    if a.ndim != 3 or b.ndim != 3 or c.ndim != 3:
        return False
    if not (a.dtype == b.dtype == c.dtype) or a.dtype.type not in (np.float32, np.float64):
        return False
    cdef Py_ssize_t batch = c.shape[0]
    cdef int m = a.shape[1], k = a.shape[2], n = b.shape[2]
    if batch == 0 or m == 0 or n == 0:
        return True
    if k == 0:
        c[...] = 0
        return True
    cdef char ta, tb
    cdef int lda, ldb, ldc
    cdef Py_ssize_t sa, sb, sc
    if not _batch_layout(a, b, c, &ta, &tb, &lda, &ldb, &ldc, &sa, &sb, &sc):
        return False
    cdef int nt = fastreduce.threads_now()
    cdef void* pa = cnp.PyArray_DATA(a)
    cdef void* pb = cnp.PyArray_DATA(b)
    cdef void* pc = cnp.PyArray_DATA(c)
    cdef bint single = a.dtype.type is np.float32
    cdef int before
    with nogil:
        before = _single_threaded_blas()
        if single:
            _run_batch[float](ta, tb, batch, m, n, k, <float*>pa, sa, lda, <float*>pb, sb, ldb,
                              <float*>pc, sc, ldc, nt)
        else:
            _run_batch[double](ta, tb, batch, m, n, k, <double*>pa, sa, lda, <double*>pb, sb,
                               ldb, <double*>pc, sc, ldc, nt)
        _restore_blas_threads(before)
    return True


# ---- bf16 / fp16 products with float32 accumulation (MKL) ----------------------------------
cdef void _lowp(cblas_lowp_t fn, char ta, char tb, Py_ssize_t batch, int m, int n, int k,
                const uint16_t* a, Py_ssize_t sa, int lda, const uint16_t* b, Py_ssize_t sb,
                int ldb, float* c, Py_ssize_t sc, int ldc, int nt) noexcept nogil:
    """Low-precision products: each thread its rows (columns) of every product when one is
    large enough to split, else its share of whole products."""
    cdef int t, lo, hi, step
    cdef Py_ssize_t i, share, first, last
    cdef bint by_rows = m >= n
    if nt < 2 or <double>m * n * k * batch < <double>PARALLEL_MIN_MACS * nt:
        nt = 1
    if batch < nt and max(m, n) >= 2 * _ALIGN:
        step = _share_step(m if by_rows else n, nt)
        with parallel(num_threads=nt):
            t = openmp.omp_get_thread_num()
            lo = t * step
            hi = min(m if by_rows else n, lo + step)
            for i in range(batch):
                if lo < hi and by_rows:
                    fn(CBLAS_ROW_MAJOR, _cblas_trans(ta), _cblas_trans(tb), hi - lo, n, k, 1,
                       (a + i * sa + lo * lda) if ta == b'N' else (a + i * sa + lo), lda,
                       b + i * sb, ldb, 0, c + i * sc + <Py_ssize_t>lo * ldc, ldc)
                elif lo < hi:
                    fn(CBLAS_ROW_MAJOR, _cblas_trans(ta), _cblas_trans(tb), m, hi - lo, k, 1,
                       a + i * sa, lda,
                       (b + i * sb + lo) if tb == b'N' else (b + i * sb + lo * ldb), ldb, 0,
                       c + i * sc + lo, ldc)
    else:
        share = (batch + nt - 1) // nt
        with parallel(num_threads=nt):
            t = openmp.omp_get_thread_num()
            first = t * share
            last = min(batch, first + share)
            for i in range(first, last):
                fn(CBLAS_ROW_MAJOR, _cblas_trans(ta), _cblas_trans(tb), m, n, k, 1,
                   a + i * sa, lda, b + i * sb, ldb, 0, c + i * sc, ldc)


def gemm_low_precision(cnp.ndarray a, cnp.ndarray b, cnp.ndarray c):
    """c[i] = a[i] @ b[i] for 3-D bfloat16 or float16 a and b (one dtype) into a float32 c,
    accumulating in float32 (MKL's cblas_gemm_bf16bf16f32 / cblas_gemm_f16f16f32). False
    (nothing written) when MKL is absent or the layout is one BLAS cannot read."""
    if a.ndim != 3 or b.ndim != 3 or c.ndim != 3 or a.dtype != b.dtype:
        return False
    if c.dtype.type is not np.float32 or a.itemsize != 2:
        return False
    cdef cblas_lowp_t fn
    if a.dtype.type is np.float16:
        fn = _mkl_f16
    elif a.dtype.name == "bfloat16":
        fn = _mkl_bf16
    else:
        return False
    if fn == NULL:
        return False
    cdef Py_ssize_t batch = c.shape[0]
    cdef int m = a.shape[1], k = a.shape[2], n = b.shape[2]
    if batch == 0 or m == 0 or n == 0:
        return True
    if k == 0:
        c[...] = 0
        return True
    cdef char ta, tb
    cdef int lda, ldb, ldc
    cdef Py_ssize_t sa, sb, sc
    if not _batch_layout(a, b, c, &ta, &tb, &lda, &ldb, &ldc, &sa, &sb, &sc):
        return False
    cdef int nt = fastreduce.threads_now()
    cdef const uint16_t* pa = <const uint16_t*>cnp.PyArray_DATA(a)
    cdef const uint16_t* pb = <const uint16_t*>cnp.PyArray_DATA(b)
    cdef float* pc = <float*>cnp.PyArray_DATA(c)
    with nogil:
        _lowp(fn, ta, tb, batch, m, n, k, pa, sa, lda, pb, sb, ldb, pc, sc, ldc, nt)
    return True
