# cython: boundscheck=False, wraparound=False
"""Fused softmax / log_softmax (forward and backward) along any dimension: over the last one,
one pass over each row that stays in cache (any other dim: blocks of adjacent columns,
below), on the thread count fastreduce.threads_now() gives (the OpenMP default team waited
for a busy core on a shared machine: 2 ms instead of 0.2); float32 exp on vexp.h's AVX-512
kernel where the build has it, else glibc's libmvec. A chain of numpy temporaries runs at
~0.12x PyTorch here (DESIGN.md).

forward/backward take numpy arrays, forward_tensor/backward_tensor the tensors; each returns
False (writing nothing) for what it does not handle (not C-contiguous, not float32/float64);
the kernels in kernels/fused.py then use numpy."""
import numpy as np
cimport numpy as cnp

from tensorlib._C.dtypes cimport FLOAT32, FLOAT64
from tensorlib._C.tensor_impl cimport TensorImpl, is_contiguous, numel

from tensorlib_cpu import fastreduce

cnp.import_array()

cdef extern from *:
    """
    #include <math.h>
    #define ROWS_PARALLEL(rows, n) ((rows) * (n) > 32768 && (rows) > 1)

    #define DEFINE_SOFTMAX(T, EXP, LOG)                                                     \\
    static void softmax_fwd_##T(const T* x, T* y, Py_ssize_t rows, Py_ssize_t n, int lg,    \\
                                int nt) {                                               \\
        Py_ssize_t r;                                                                       \\
        _Pragma("omp parallel for schedule(static) num_threads(nt) if (ROWS_PARALLEL(rows, n))")           \\
        for (r = 0; r < rows; r++) {                                                        \\
            const T* xr = x + r * n; T* yr = y + r * n; T m = -INFINITY, s = 0; Py_ssize_t i; \\
            for (i = 0; i < n; i++) m = xr[i] > m ? xr[i] : m;                              \\
            if (lg) {                                                                       \\
                /* (x - m) stored, then - lse: x - (m + lse) loses |x| * eps (2e-4 at     \\
                   1e4 in float32), and fast-math would reassociate one expression to it */ \\
                for (i = 0; i < n; i++) yr[i] = xr[i] - m;                                  \\
                _Pragma("omp simd reduction(+:s)")                                          \\
                for (i = 0; i < n; i++) s += EXP(yr[i]);                                    \\
                T lse = LOG(s);                                                             \\
                for (i = 0; i < n; i++) yr[i] -= lse;                                       \\
            } else {                                                                        \\
                _Pragma("omp simd reduction(+:s)")                                          \\
                for (i = 0; i < n; i++) { T e = EXP(xr[i] - m); yr[i] = e; s += e; }        \\
                T inv = (T)1 / s;                                                           \\
                for (i = 0; i < n; i++) yr[i] *= inv;                                       \\
            }                                                                               \\
        }                                                                                   \\
    }                                                                                       \\
    static void softmax_bwd_##T(const T* g, const T* y, T* gi, Py_ssize_t rows,             \\
                                Py_ssize_t n, int lg, int nt) {                             \\
        Py_ssize_t r;                                                                       \\
        _Pragma("omp parallel for schedule(static) num_threads(nt) if (ROWS_PARALLEL(rows, n))")           \\
        for (r = 0; r < rows; r++) {                                                        \\
            const T* gr = g + r * n; const T* yr = y + r * n; T* out = gi + r * n;          \\
            T s = 0; Py_ssize_t i;                                                          \\
            if (lg) {                                                                       \\
                _Pragma("omp simd reduction(+:s)")                                          \\
                for (i = 0; i < n; i++) s += gr[i];                                         \\
                _Pragma("omp simd")                                                         \\
                for (i = 0; i < n; i++) out[i] = gr[i] - EXP(yr[i]) * s;                    \\
            } else {                                                                        \\
                _Pragma("omp simd reduction(+:s)")                                          \\
                for (i = 0; i < n; i++) s += gr[i] * yr[i];                                 \\
                for (i = 0; i < n; i++) out[i] = yr[i] * (gr[i] - s);                       \\
            }                                                                               \\
        }                                                                                   \\
    }
    /* Rows shorter than SMALL_ROW: per row, a vector exp call and its scalar tail cost more
       than the row (128x10 took 37 ns a row). A block of rows goes through one flat exp loop
       instead, from x - max kept in a buffer: the same formulas, row sums in order. */
    #define SMALL_ROW 32
    #define BLOCK 64
    #define DEFINE_SOFTMAX_SMALL(T, EXP, LOG)                                               \\
    static void softmax_fwd_small_##T(const T* x, T* y, Py_ssize_t rows, Py_ssize_t n,      \\
                                      int lg, int nt) {                                     \\
        Py_ssize_t b, blocks = (rows + BLOCK - 1) / BLOCK;                                  \\
        _Pragma("omp parallel for schedule(static) num_threads(nt) if (ROWS_PARALLEL(rows, n))")           \\
        for (b = 0; b < blocks; b++) {                                                      \\
            T d[BLOCK * SMALL_ROW], e[BLOCK * SMALL_ROW], s[BLOCK];                        \\
            Py_ssize_t r0 = b * BLOCK, nr = rows - r0 < BLOCK ? rows - r0 : BLOCK, r, i;    \\
            const T* xb = x + r0 * n; T* yb = y + r0 * n;                                   \\
            for (r = 0; r < nr; r++) {                                                      \\
                T mm = -INFINITY;                                                           \\
                for (i = 0; i < n; i++) mm = xb[r * n + i] > mm ? xb[r * n + i] : mm;       \\
                for (i = 0; i < n; i++) d[r * n + i] = xb[r * n + i] - mm;                  \\
            }                                                                               \\
            _Pragma("omp simd")                                                             \\
            for (i = 0; i < nr * n; i++) e[i] = EXP(d[i]);                                  \\
            for (r = 0; r < nr; r++) {                                                      \\
                T ss = 0;                                                                   \\
                for (i = 0; i < n; i++) ss += e[r * n + i];                                 \\
                s[r] = ss;                                                                  \\
            }                                                                               \\
            if (lg) {                                                                       \\
                _Pragma("omp simd")                                                         \\
                for (r = 0; r < nr; r++) s[r] = LOG(s[r]);                                  \\
                for (r = 0; r < nr; r++)                                                    \\
                    for (i = 0; i < n; i++) yb[r * n + i] = d[r * n + i] - s[r];            \\
            } else {                                                                        \\
                for (r = 0; r < nr; r++) {                                                  \\
                    T inv = (T)1 / s[r];                                                    \\
                    for (i = 0; i < n; i++) yb[r * n + i] = e[r * n + i] * inv;             \\
                }                                                                           \\
            }                                                                               \\
        }                                                                                   \\
    }                                                                                       \\
    static void log_softmax_bwd_small_##T(const T* g, const T* y, T* gi, Py_ssize_t rows,   \\
                                          Py_ssize_t n, int nt) {                           \\
        Py_ssize_t b, blocks = (rows + BLOCK - 1) / BLOCK;                                  \\
        _Pragma("omp parallel for schedule(static) num_threads(nt) if (ROWS_PARALLEL(rows, n))")           \\
        for (b = 0; b < blocks; b++) {                                                      \\
            T e[BLOCK * SMALL_ROW];                                                         \\
            Py_ssize_t r0 = b * BLOCK, nr = rows - r0 < BLOCK ? rows - r0 : BLOCK, r, i;    \\
            const T* gb = g + r0 * n; const T* yb = y + r0 * n; T* ob = gi + r0 * n;       \\
            _Pragma("omp simd")                                                             \\
            for (i = 0; i < nr * n; i++) e[i] = EXP(yb[i]);                                 \\
            for (r = 0; r < nr; r++) {                                                      \\
                T ss = 0;                                                                   \\
                for (i = 0; i < n; i++) ss += gb[r * n + i];                                \\
                for (i = 0; i < n; i++) ob[r * n + i] = gb[r * n + i] - e[r * n + i] * ss;  \\
            }                                                                               \\
        }                                                                                   \\
    }
    DEFINE_SOFTMAX(float, expf, logf)
    DEFINE_SOFTMAX(double, exp, log)

    /* float32 rows of at least SMALL_ROW on vexp.h's AVX-512 exp: libmvec's expf in the
       loops above ran softmax 4096x1024 at 0.64x PyTorch on an AMD EPYC (Zen 4), one thread.
       The same formulas; each row's max, sums and scaling in 16-lane vectors, the last one
       masked (lanes past the row never reach a sum or memory). */
    #include "vexp.h"
    #if TL_HAVE_VEXP
    static inline __mmask16 tail_mask(Py_ssize_t left) {
        return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
    }
    static inline float row_max(const float* x, Py_ssize_t n) {
        /* max(v, acc) keeps acc where v is NaN: NaNs are skipped as the scalar loop does */
        __m512 acc = _mm512_set1_ps(-INFINITY);
        Py_ssize_t i;
        for (i = 0; i < n; i += 16)
            acc = _mm512_max_ps(_mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY),
                                                     tail_mask(n - i), x + i), acc);
        return _mm512_reduce_max_ps(acc);
    }
    static void softmax_fwd_vexp(const float* x, float* y, Py_ssize_t rows, Py_ssize_t n,
                                 int lg, int nt) {
        Py_ssize_t r;
        _Pragma("omp parallel for schedule(static) num_threads(nt) if (ROWS_PARALLEL(rows, n))")
        for (r = 0; r < rows; r++) {
            const float* xr = x + r * n; float* yr = y + r * n; Py_ssize_t i;
            __m512 m = _mm512_set1_ps(row_max(xr, n)), s = _mm512_setzero_ps();
            for (i = 0; i < n; i += 16) {
                __mmask16 k = tail_mask(n - i);
                __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(k, xr + i), m);
                __m512 e = _mm512_maskz_mov_ps(k, tl_exp16(d));
                s = _mm512_add_ps(s, e);
                _mm512_mask_storeu_ps(yr + i, k, lg ? d : e);
            }
            float total = _mm512_reduce_add_ps(s);
            if (lg) {
                __m512 lse = _mm512_set1_ps(logf(total));
                for (i = 0; i < n; i += 16) {
                    __mmask16 k = tail_mask(n - i);
                    _mm512_mask_storeu_ps(yr + i, k,
                                          _mm512_sub_ps(_mm512_maskz_loadu_ps(k, yr + i), lse));
                }
            } else {
                __m512 inv = _mm512_set1_ps(1.0f / total);
                for (i = 0; i < n; i += 16) {
                    __mmask16 k = tail_mask(n - i);
                    _mm512_mask_storeu_ps(yr + i, k,
                                          _mm512_mul_ps(_mm512_maskz_loadu_ps(k, yr + i), inv));
                }
            }
        }
    }
    static void log_softmax_bwd_vexp(const float* g, const float* y, float* gi,
                                     Py_ssize_t rows, Py_ssize_t n, int nt) {
        Py_ssize_t r;
        _Pragma("omp parallel for schedule(static) num_threads(nt) if (ROWS_PARALLEL(rows, n))")
        for (r = 0; r < rows; r++) {
            const float* gr = g + r * n; const float* yr = y + r * n; float* out = gi + r * n;
            __m512 acc = _mm512_setzero_ps();
            Py_ssize_t i;
            for (i = 0; i < n; i += 16)
                acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(tail_mask(n - i), gr + i));
            __m512 s = _mm512_set1_ps(_mm512_reduce_add_ps(acc));
            for (i = 0; i < n; i += 16) {
                __mmask16 k = tail_mask(n - i);
                __m512 e = tl_exp16(_mm512_maskz_loadu_ps(k, yr + i));
                _mm512_mask_storeu_ps(out + i, k,
                                      _mm512_fnmadd_ps(e, s, _mm512_maskz_loadu_ps(k, gr + i)));
            }
        }
    }
    #else
    static void softmax_fwd_vexp(const float* x, float* y, Py_ssize_t rows, Py_ssize_t n,
                                 int lg, int nt) { softmax_fwd_float(x, y, rows, n, lg, nt); }
    static void log_softmax_bwd_vexp(const float* g, const float* y, float* gi,
                                     Py_ssize_t rows, Py_ssize_t n, int nt) {
        softmax_bwd_float(g, y, gi, rows, n, 1, nt);
    }
    #endif
    DEFINE_SOFTMAX_SMALL(float, expf, logf)
    DEFINE_SOFTMAX_SMALL(double, exp, log)

    /* Softmax along a dim that is not the last of a contiguous (outer, n, inner) layout:
       moving the dim last (a transpose, the rows, a transpose back) ran at 0.05x PyTorch.
       Here a task is one outer index and a block of up to STRIDED_BLOCK adjacent inner
       columns; it walks the n rows of its block (each a contiguous run of the block's width)
       once for the max, once for exp and the sum, once to scale: the row kernels' formulas,
       one vector lane per column. */
    #define STRIDED_BLOCK 64
    static inline void exp_block_double(const double* d, double* e, Py_ssize_t w) {
        Py_ssize_t j;
        _Pragma("omp simd")
        for (j = 0; j < w; j++) e[j] = exp(d[j]);
    }
    static inline void exp_block_float(const float* d, float* e, Py_ssize_t w) {
    #if TL_HAVE_VEXP
        tl_exp_float(d, e, w);
    #else
        Py_ssize_t j;
        _Pragma("omp simd")
        for (j = 0; j < w; j++) e[j] = expf(d[j]);
    #endif
    }
    #define STRIDED_PARALLEL(outer, n, inner, per) \\
        ((outer) * (n) * (inner) > 32768 && (outer) * (per) > 1)
    #define STRIDED_TASKS(outer, n, inner, ...)                                             \\
        Py_ssize_t per = ((inner) + STRIDED_BLOCK - 1) / STRIDED_BLOCK, t;                  \\
        _Pragma("omp parallel for schedule(static) num_threads(nt) if (STRIDED_PARALLEL(outer, n, inner, per))") \\
        for (t = 0; t < (outer) * per; t++) {                                               \\
            Py_ssize_t o = t / per, i0 = t % per * STRIDED_BLOCK, k, j;                     \\
            Py_ssize_t w = (inner) - i0 < STRIDED_BLOCK ? (inner) - i0 : STRIDED_BLOCK;     \\
            Py_ssize_t base = o * (n) * (inner) + i0;                                       \\
            __VA_ARGS__                                                                     \\
        }
    #define DEFINE_SOFTMAX_STRIDED(T, LOG)                                                  \\
    static void softmax_fwd_strided_##T(const T* x, T* y, Py_ssize_t outer, Py_ssize_t n,   \\
                                        Py_ssize_t inner, int lg, int nt) {                 \\
        STRIDED_TASKS(outer, n, inner,                                                      \\
            T m[STRIDED_BLOCK], s[STRIDED_BLOCK], d[STRIDED_BLOCK], e[STRIDED_BLOCK];       \\
            const T* xb = x + base; T* yb = y + base;                                       \\
            for (j = 0; j < w; j++) { m[j] = -INFINITY; s[j] = 0; }                         \\
            for (k = 0; k < n; k++) {                                                       \\
                const T* xr = xb + k * (inner);                                             \\
                _Pragma("omp simd")                                                         \\
                for (j = 0; j < w; j++) m[j] = xr[j] > m[j] ? xr[j] : m[j];                 \\
            }                                                                               \\
            for (k = 0; k < n; k++) {                                                       \\
                const T* xr = xb + k * (inner); T* yr = yb + k * (inner);                   \\
                _Pragma("omp simd")                                                         \\
                for (j = 0; j < w; j++) d[j] = xr[j] - m[j];                                \\
                exp_block_##T(d, e, w);                                                     \\
                _Pragma("omp simd")                                                         \\
                for (j = 0; j < w; j++) { yr[j] = lg ? d[j] : e[j]; s[j] += e[j]; }         \\
            }                                                                               \\
            if (lg) {                                                                       \\
                for (j = 0; j < w; j++) s[j] = LOG(s[j]);                                   \\
                for (k = 0; k < n; k++) {                                                   \\
                    T* yr = yb + k * (inner);                                               \\
                    _Pragma("omp simd")                                                     \\
                    for (j = 0; j < w; j++) yr[j] -= s[j];                                  \\
                }                                                                           \\
            } else {                                                                        \\
                for (j = 0; j < w; j++) s[j] = (T)1 / s[j];                                 \\
                for (k = 0; k < n; k++) {                                                   \\
                    T* yr = yb + k * (inner);                                               \\
                    _Pragma("omp simd")                                                     \\
                    for (j = 0; j < w; j++) yr[j] *= s[j];                                  \\
                }                                                                           \\
            })                                                                              \\
    }                                                                                       \\
    static void softmax_bwd_strided_##T(const T* g, const T* y, T* gi, Py_ssize_t outer,    \\
                                        Py_ssize_t n, Py_ssize_t inner, int lg, int nt) {   \\
        STRIDED_TASKS(outer, n, inner,                                                      \\
            T s[STRIDED_BLOCK], e[STRIDED_BLOCK];                                           \\
            const T* gb = g + base; const T* yb = y + base; T* ob = gi + base;              \\
            for (j = 0; j < w; j++) s[j] = 0;                                               \\
            for (k = 0; k < n; k++) {                                                       \\
                const T* gr = gb + k * (inner); const T* yr = yb + k * (inner);             \\
                _Pragma("omp simd")                                                         \\
                for (j = 0; j < w; j++) s[j] += lg ? gr[j] : gr[j] * yr[j];                 \\
            }                                                                               \\
            for (k = 0; k < n; k++) {                                                       \\
                const T* gr = gb + k * (inner); const T* yr = yb + k * (inner);             \\
                T* orow = ob + k * (inner);                                                 \\
                if (lg) {                                                                   \\
                    exp_block_##T(yr, e, w);                                                \\
                    _Pragma("omp simd")                                                     \\
                    for (j = 0; j < w; j++) orow[j] = gr[j] - e[j] * s[j];                  \\
                } else {                                                                    \\
                    _Pragma("omp simd")                                                     \\
                    for (j = 0; j < w; j++) orow[j] = yr[j] * (gr[j] - s[j]);               \\
                }                                                                           \\
            })                                                                              \\
    }
    DEFINE_SOFTMAX_STRIDED(float, logf)
    DEFINE_SOFTMAX_STRIDED(double, log)
    """
    enum: SMALL_ROW
    void softmax_fwd_small_float(const float* x, float* y, Py_ssize_t rows, Py_ssize_t n,
                                 int lg, int nt) nogil
    void softmax_fwd_small_double(const double* x, double* y, Py_ssize_t rows, Py_ssize_t n,
                                  int lg, int nt) nogil
    void log_softmax_bwd_small_float(const float* g, const float* y, float* gi,
                                     Py_ssize_t rows, Py_ssize_t n, int nt) nogil
    void log_softmax_bwd_small_double(const double* g, const double* y, double* gi,
                                      Py_ssize_t rows, Py_ssize_t n, int nt) nogil
    void softmax_fwd_float(const float* x, float* y, Py_ssize_t rows, Py_ssize_t n,
                           int lg, int nt) nogil
    void softmax_fwd_double(const double* x, double* y, Py_ssize_t rows, Py_ssize_t n,
                            int lg, int nt) nogil
    void softmax_bwd_float(const float* g, const float* y, float* gi, Py_ssize_t rows,
                           Py_ssize_t n, int lg, int nt) nogil
    void softmax_bwd_double(const double* g, const double* y, double* gi, Py_ssize_t rows,
                            Py_ssize_t n, int lg, int nt) nogil
    void softmax_fwd_vexp(const float* x, float* y, Py_ssize_t rows, Py_ssize_t n,
                          int lg, int nt) nogil
    void log_softmax_bwd_vexp(const float* g, const float* y, float* gi, Py_ssize_t rows,
                              Py_ssize_t n, int nt) nogil
    void softmax_fwd_strided_float(const float* x, float* y, Py_ssize_t outer, Py_ssize_t n,
                                   Py_ssize_t inner, int lg, int nt) nogil
    void softmax_fwd_strided_double(const double* x, double* y, Py_ssize_t outer, Py_ssize_t n,
                                    Py_ssize_t inner, int lg, int nt) nogil
    void softmax_bwd_strided_float(const float* g, const float* y, float* gi, Py_ssize_t outer,
                                   Py_ssize_t n, Py_ssize_t inner, int lg, int nt) nogil
    void softmax_bwd_strided_double(const double* g, const double* y, double* gi,
                                    Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner,
                                    int lg, int nt) nogil


cdef bint _usable(cnp.ndarray a, object dtype):
    return a.dtype == dtype and cnp.PyArray_IS_C_CONTIGUOUS(a) and a.ndim > 0


cdef void _forward(void* x, void* y, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner,
                   bint log, bint double, int nt) noexcept nogil:
    if inner != 1:
        if double:
            softmax_fwd_strided_double(<double*>x, <double*>y, outer, n, inner, log, nt)
        else:
            softmax_fwd_strided_float(<float*>x, <float*>y, outer, n, inner, log, nt)
    elif double:
        if n < SMALL_ROW:
            softmax_fwd_small_double(<double*>x, <double*>y, outer, n, log, nt)
        else:
            softmax_fwd_double(<double*>x, <double*>y, outer, n, log, nt)
    elif n < SMALL_ROW:
        softmax_fwd_small_float(<float*>x, <float*>y, outer, n, log, nt)
    else:
        softmax_fwd_vexp(<float*>x, <float*>y, outer, n, log, nt)


cdef void _backward(void* g, void* y, void* gi, Py_ssize_t outer, Py_ssize_t n,
                    Py_ssize_t inner, bint log, bint double, int nt) noexcept nogil:
    if inner != 1:
        if double:
            softmax_bwd_strided_double(<double*>g, <double*>y, <double*>gi, outer, n, inner,
                                       log, nt)
        else:
            softmax_bwd_strided_float(<float*>g, <float*>y, <float*>gi, outer, n, inner, log,
                                      nt)
    elif double:
        if log and n < SMALL_ROW:
            log_softmax_bwd_small_double(<double*>g, <double*>y, <double*>gi, outer, n, nt)
        else:
            softmax_bwd_double(<double*>g, <double*>y, <double*>gi, outer, n, log, nt)
    elif log and n < SMALL_ROW:
        log_softmax_bwd_small_float(<float*>g, <float*>y, <float*>gi, outer, n, nt)
    elif log:
        log_softmax_bwd_vexp(<float*>g, <float*>y, <float*>gi, outer, n, nt)
    else:
        softmax_bwd_float(<float*>g, <float*>y, <float*>gi, outer, n, log, nt)


cdef bint _split(tuple shape, Py_ssize_t dim, Py_ssize_t* outer, Py_ssize_t* n,
                 Py_ssize_t* inner) except -1:
    """The (outer, n, inner) view of a contiguous `shape` around `dim` (in range, may be
    negative); False when the shape has no elements."""
    cdef Py_ssize_t d, size
    if dim < 0:
        dim += len(shape)
    outer[0] = 1
    inner[0] = 1
    for d in range(len(shape)):
        size = shape[d]
        if d < dim:
            outer[0] *= size
        elif d > dim:
            inner[0] *= size
    n[0] = shape[dim]
    return outer[0] * n[0] * inner[0] != 0


def forward(cnp.ndarray x, cnp.ndarray y, bint log, Py_ssize_t dim=-1):
    """y = softmax(x) (log_softmax with `log`) along `dim` of C-contiguous float arrays, in
    one fused pass per row (the last dim) or per block of columns (any other dim)."""
    if x.dtype != y.dtype or not (_usable(x, x.dtype) and _usable(y, x.dtype)):
        return False
    cdef bint double = x.dtype == np.float64
    if not double and x.dtype != np.float32:
        return False
    cdef Py_ssize_t outer, n, inner
    cdef int nt = fastreduce.threads_now()
    if (<object>x).shape != (<object>y).shape or not x.ndim > dim >= -x.ndim:
        return False
    if not _split((<object>x).shape, dim, &outer, &n, &inner):
        return True
    with nogil:
        _forward(cnp.PyArray_DATA(x), cnp.PyArray_DATA(y), outer, n, inner, log, double, nt)
    return True


def backward(cnp.ndarray g, cnp.ndarray y, cnp.ndarray gi, bint log, Py_ssize_t dim=-1):
    """gi = y * (g - sum(g * y)) for softmax, g - exp(y) * sum(g) for log_softmax."""
    if not (g.dtype == y.dtype == gi.dtype and _usable(g, y.dtype) and _usable(y, y.dtype)
            and _usable(gi, y.dtype)) or \
            not (<object>g).shape == (<object>y).shape == (<object>gi).shape:
        return False
    cdef bint double = y.dtype == np.float64
    if not double and y.dtype != np.float32:
        return False
    cdef Py_ssize_t outer, n, inner
    cdef int nt = fastreduce.threads_now()
    if not y.ndim > dim >= -y.ndim:
        return False
    if not _split((<object>y).shape, dim, &outer, &n, &inner):
        return True
    with nogil:
        _backward(cnp.PyArray_DATA(g), cnp.PyArray_DATA(y), cnp.PyArray_DATA(gi),
                  outer, n, inner, log, double, nt)
    return True


cdef void* _data_of(TensorImpl t, TensorImpl like):
    """t's data when it is a C-contiguous host float tensor of like's dtype and sizes, of at
    least one dim; NULL otherwise."""
    if (t._dtype is not like._dtype or t._sizes != like._sizes or len(t._sizes) == 0
            or type(t._storage.handle) is not np.ndarray or not is_contiguous(t)):
        return NULL
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>t._storage.handle) + \
        t._offset * t._dtype.itemsize


def forward_tensor(TensorImpl out, TensorImpl x, Py_ssize_t dim, bint log):
    """forward() read straight off contiguous tensors, with no numpy views (~3 us of a 128x10
    call); False, writing nothing, for any other layout or dtype."""
    if x._dtype.code != FLOAT32 and x._dtype.code != FLOAT64:
        return False
    cdef void* xp = _data_of(x, x)
    cdef void* op = _data_of(out, x)
    if xp == NULL or op == NULL:
        return False
    cdef Py_ssize_t outer, n, inner
    cdef bint double = x._dtype.code == FLOAT64
    cdef int nt = fastreduce.threads_now()
    if _split(x._sizes, dim, &outer, &n, &inner):
        with nogil:
            _forward(xp, op, outer, n, inner, log, double, nt)
    return True


def backward_tensor(TensorImpl grad_input, TensorImpl grad, TensorImpl y, Py_ssize_t dim,
                    bint log):
    """backward() read straight off contiguous tensors; False for other layouts."""
    if y._dtype.code != FLOAT32 and y._dtype.code != FLOAT64:
        return False
    cdef void* yp = _data_of(y, y)
    cdef void* gp = _data_of(grad, y)
    cdef void* op = _data_of(grad_input, y)
    if yp == NULL or gp == NULL or op == NULL:
        return False
    cdef Py_ssize_t outer, n, inner
    cdef bint double = y._dtype.code == FLOAT64
    cdef int nt = fastreduce.threads_now()
    if _split(y._sizes, dim, &outer, &n, &inner):
        with nogil:
            _backward(gp, yp, op, outer, n, inner, log, double, nt)
    return True
