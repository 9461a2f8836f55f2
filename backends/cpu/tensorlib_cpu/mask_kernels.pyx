# cython: boundscheck=False, wraparound=False, cdivision=True
"""A bool mask's True count, nonzero's coordinates, mask_positions' flat positions and
masked_select's elements (x[mask]) as threaded C passes over contiguous masks: each thread
counts its share, a prefix sum gives each share its first output row, and each thread then
writes its rows, branch-free (a row is written at every element and kept where the element
is True; blocks of 8 False elements are skipped). On a 1024x1024 mask numpy's argwhere took
4x PyTorch's time, bool sum() 0.3 ms for the count and x[mask] (positions, then
index_select) 1.4 ms."""
cimport numpy as cnp
from libc.stdint cimport int64_t, uint8_t

import numpy as np

from tensorlib._C.tensor_impl cimport TensorImpl, is_contiguous, numel

from tensorlib_cpu import fastreduce

cnp.import_array()

DEF MAXD = 64

cdef extern from *:
    """
    #include <stdint.h>
    #include <stdlib.h>
    #include <string.h>
    #define MASK_PAR_MIN 65536
    #define MASK_MAXD 64
    #if defined(__AVX512BW__)
    #include <immintrin.h>
    #endif
    /* bool bytes are 0 or 1: their sum, 64 at a time by vpsadbw in AVX-512 builds */
    static int64_t count_true(const uint8_t* m, int64_t n) {
        int64_t s = 0, i = 0;
    #if defined(__AVX512BW__)
        __m512i acc = _mm512_setzero_si512();
        for (; i + 64 <= n; i += 64)
            acc = _mm512_add_epi64(acc, _mm512_sad_epu8(_mm512_loadu_si512(m + i),
                                                        _mm512_setzero_si512()));
        s = _mm512_reduce_add_epi64(acc);
    #endif
        for (; i < n; i++) s += m[i];
        return s;
    }
    /* share t of nt over n elements */
    static inline int64_t share_start(int64_t n, int t, int nt) {
        return n / nt * t + (n % nt < t ? n % nt : t);
    }
    static int64_t mask_count(const uint8_t* m, int64_t n, int nt) {
        int64_t total = 0;
        int t;
        if (nt <= 1) return count_true(m, n);       /* no OpenMP region: 0.5 us at 16 */
        _Pragma("omp parallel for reduction(+:total) num_threads(nt)")
        for (t = 0; t < nt; t++) {
            int64_t lo = share_start(n, t, nt), hi = share_start(n, t + 1, nt);
            total += count_true(m + lo, hi - lo);
        }
        return total;
    }
    /* Rows [k, kend) of out (nd int64 each, or one flat position where nd is 0; rows rs
       and columns cs elements apart: nonzero(as_tuple=True) writes one row per dim): the
       coordinates of the True elements of m[lo, hi) in a tensor of `shape` (nd dims). The
       odometer `idx` holds lo's coordinates; a run is the part of one innermost row in
       [lo, hi). Writing stops at kend, so trailing False elements cost nothing and no row
       past the share's is touched. */
    static void write_share(const uint8_t* m, int64_t lo, int64_t hi, const int64_t* shape,
                            int nd, int64_t* out, int64_t rs, int64_t cs, int64_t k,
                            int64_t kend) {
        int64_t idx[MASK_MAXD], rem = lo, i = lo, last, j, stop, d;
        for (d = nd - 1; d >= 0; d--) { idx[d] = rem % shape[d]; rem /= shape[d]; }
        last = nd ? shape[nd - 1] : hi;
        while (i < hi && k < kend) {
            j = nd ? idx[nd - 1] : i;
            stop = j + (hi - i) < last ? j + (hi - i) : last;
            const uint8_t* row = m + (i - j);
            int64_t run = stop - j;
            if (nd <= 1) {                              /* positions or 1-D coordinates */
                for (; j + 8 <= stop && k + 8 <= kend; j += 8) {
                    uint64_t w; memcpy(&w, row + j, 8);
                    if (!w) continue;
                    for (int b = 0; b < 8; b++) { out[k * rs] = j + b; k += row[j + b]; }
                }
                for (; j < stop && k < kend; j++) { out[k * rs] = j; k += row[j]; }
            } else if (nd == 2) {
                int64_t r = idx[0];
                for (; j + 8 <= stop && k + 8 <= kend; j += 8) {
                    uint64_t w; memcpy(&w, row + j, 8);
                    if (!w) continue;
                    for (int b = 0; b < 8; b++) {
                        out[k * rs] = r; out[k * rs + cs] = j + b; k += row[j + b];
                    }
                }
                for (; j < stop && k < kend; j++) {
                    out[k * rs] = r; out[k * rs + cs] = j; k += row[j];
                }
            } else {
                for (; j < stop && k < kend; j++) {
                    int64_t* o = out + k * rs;
                    for (d = 0; d < nd - 1; d++) o[d * cs] = idx[d];
                    o[(nd - 1) * cs] = j;
                    k += row[j];
                }
            }
            i += run;
            if (nd) {                                   /* the next row's first element */
                idx[nd - 1] = 0;
                for (d = nd - 2; d >= 0; d--) {
                    if (++idx[d] < shape[d]) break;
                    idx[d] = 0;
                }
            }
        }
    }
    /* out[k..kend) = the elements of x[lo, hi) (items of type T) where m is True */
    #define DEFINE_COMPRESS(T)                                                              \
    static void compress_##T(const uint8_t* m, const T* x, int64_t lo, int64_t hi, T* out,  \
                             int64_t k, int64_t kend) {                                     \
        int64_t i = lo;                                                                     \
        for (; i + 8 <= hi && k + 8 <= kend; i += 8) {                                      \
            uint64_t w; memcpy(&w, m + i, 8);                                               \
            if (!w) continue;                                                               \
            for (int b = 0; b < 8; b++) { out[k] = x[i + b]; k += m[i + b]; }               \
        }                                                                                   \
        for (; i < hi && k < kend; i++) { out[k] = x[i]; k += m[i]; }                       \
    }
    DEFINE_COMPRESS(uint8_t)
    DEFINE_COMPRESS(uint16_t)
    DEFINE_COMPRESS(uint32_t)
    DEFINE_COMPRESS(uint64_t)
    static void compress_share(const uint8_t* m, const void* x, int size, int64_t lo,
                               int64_t hi, void* out, int64_t k, int64_t kend) {
        switch (size) {
        case 1: compress_uint8_t(m, (const uint8_t*)x, lo, hi, (uint8_t*)out, k, kend); break;
        case 2: compress_uint16_t(m, (const uint16_t*)x, lo, hi, (uint16_t*)out, k, kend); break;
        case 4: compress_uint32_t(m, (const uint32_t*)x, lo, hi, (uint32_t*)out, k, kend); break;
        default: compress_uint64_t(m, (const uint64_t*)x, lo, hi, (uint64_t*)out, k, kend);
        }
    }
    /* count per share, prefix sum, write per share (coordinates, or x's elements where
       size > 0); -1 when the mask holds other than
       `rows` True elements (out was sized for a different count) */
    static int mask_pass(const uint8_t* m, int64_t n, const int64_t* shape, int nd,
                         const void* x, int size, void* out, int64_t rs, int64_t cs,
                         int64_t rows, int nt) {
        int64_t counts[257];
        int t;
        if (nt > 256) nt = 256;
        counts[0] = 0;
        if (nt <= 1) {                                /* no OpenMP region for one thread */
            if (count_true(m, n) != rows) return -1;
            if (size) compress_share(m, x, size, 0, n, out, 0, rows);
            else write_share(m, 0, n, shape, nd, (int64_t*)out, rs, cs, 0, rows);
            return 0;
        }
        _Pragma("omp parallel num_threads(nt)")
        {
            _Pragma("omp for")
            for (t = 0; t < nt; t++)
                counts[t + 1] = count_true(m + share_start(n, t, nt),
                                           share_start(n, t + 1, nt) - share_start(n, t, nt));
            _Pragma("omp single")
            for (t = 0; t < nt; t++) counts[t + 1] += counts[t];
            if (counts[nt] == rows) {
                _Pragma("omp for")
                for (t = 0; t < nt; t++) {
                    int64_t lo = share_start(n, t, nt), hi = share_start(n, t + 1, nt);
                    if (size)
                        compress_share(m, x, size, lo, hi, out, counts[t], counts[t + 1]);
                    else
                        write_share(m, lo, hi, shape, nd, (int64_t*)out, rs, cs, counts[t],
                                    counts[t + 1]);
                }
            }
        }
        return counts[nt] == rows ? 0 : -1;
    }
    """
    int64_t MASK_PAR_MIN
    int64_t mask_count(const uint8_t* m, int64_t n, int nt) nogil
    int mask_pass(const uint8_t* m, int64_t n, const int64_t* shape, int nd, const void* x,
                  int size, void* out, int64_t rs, int64_t cs, int64_t rows, int nt) nogil


cdef inline char* _data(TensorImpl t):
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>t._storage.handle) + \
        t._offset * t._dtype.itemsize


cdef inline int _threads(int64_t n):
    return fastreduce.threads_now() if n >= MASK_PAR_MIN else 1


cdef bint _takes(TensorImpl mask):
    return mask._dtype.np.kind == "b" and is_contiguous(mask) and \
        isinstance(mask._storage.handle, np.ndarray)


def count(TensorImpl mask):
    """The number of True elements of a contiguous bool mask; None for other masks."""
    if not _takes(mask):
        return None
    cdef int64_t n = numel(mask._sizes)
    cdef const uint8_t* m = <const uint8_t*>_data(mask)
    cdef int nt = _threads(n)
    cdef int64_t total
    if nt == 1:                         # a small pass keeps the GIL: its release costs more
        return mask_count(m, n, nt)
    with nogil:
        total = mask_count(m, n, nt)
    return total


cdef bint _coords(TensorImpl out, TensorImpl mask, int nd) except -1:
    """out's rows = the True elements' coordinates in mask's shape (nd = its dims), or their
    flat positions (nd = 0); out's strides may be any positive ones (a transposed (ndim,
    count) tensor: one row per dim). False when mask is not a contiguous bool tensor."""
    if not _takes(mask) or out._dtype.np.kind != "i" or out._dtype.itemsize != 8 \
            or nd > MAXD or not isinstance(out._storage.handle, np.ndarray):
        return False
    cdef int64_t rs = out._strides[0] if out._sizes else 1
    cdef int64_t cs = out._strides[1] if len(out._sizes) > 1 else 1
    if rs <= 0 or cs <= 0:
        return False
    cdef int64_t shape[MAXD]
    cdef int d
    cdef tuple sizes = mask._sizes
    for d in range(nd):
        shape[d] = sizes[d]
    cdef int64_t n = numel(mask._sizes), rows = out._sizes[0] if out._sizes else 0
    if rows == 0:
        return True
    cdef const uint8_t* m = <const uint8_t*>_data(mask)
    cdef int64_t* o = <int64_t*>_data(out)
    cdef int nt = _threads(n)
    cdef int status
    if nt == 1:
        status = mask_pass(m, n, shape, nd, NULL, 0, o, rs, cs, rows, nt)
    else:
        with nogil:
            status = mask_pass(m, n, shape, nd, NULL, 0, o, rs, cs, rows, nt)
    if status:
        raise RuntimeError(f"the mask holds other than {rows} True elements")
    return True


def nonzero(TensorImpl out, TensorImpl mask):
    """out (count, ndim) int64 = the True elements' coordinates in row-major order; False
    for a mask that is not a contiguous bool tensor."""
    if not mask._sizes:                 # a 0-dim mask: (count, 0), nothing to write
        return _takes(mask)
    return _coords(out, mask, len(mask._sizes))


def mask_positions(TensorImpl out, TensorImpl mask):
    """out (count,) int64 = the True elements' flat row-major positions; False for a mask
    that is not a contiguous bool tensor."""
    return _coords(out, mask, 0)


def masked_select(TensorImpl out, TensorImpl x, TensorImpl mask):
    """out (count,) = x's elements where the mask is True, in row-major order; False unless
    x and the bool mask are contiguous and of one shape and x's items 1, 2, 4 or 8 bytes."""
    cdef int size = x._dtype.itemsize
    if not _takes(mask) or x._sizes != mask._sizes or not is_contiguous(x) \
            or not is_contiguous(out) or out._dtype is not x._dtype or size not in (1, 2, 4, 8) \
            or not isinstance(x._storage.handle, np.ndarray) \
            or not isinstance(out._storage.handle, np.ndarray):
        return False
    cdef int64_t n = numel(mask._sizes), rows = out._sizes[0]
    if rows == 0:
        return True
    cdef const uint8_t* m = <const uint8_t*>_data(mask)
    cdef const void* src = <const void*>_data(x)
    cdef void* dst = <void*>_data(out)
    cdef int nt = _threads(n)
    cdef int status
    if nt == 1:
        status = mask_pass(m, n, NULL, 0, src, size, dst, 1, 1, rows, nt)
    else:
        with nogil:
            status = mask_pass(m, n, NULL, 0, src, size, dst, 1, 1, rows, nt)
    if status:
        raise RuntimeError(f"the mask holds other than {rows} True elements")
    return True
