# cython: boundscheck=False, wraparound=False
"""Fused cross entropy with class targets, forward and backward, one pass over each row of
(N, C) logits (the contract of `_CrossEntropyRows` in nn/_functional/loss.py). Composed of
ops (log_softmax, the target checks, gather, where, the weights, the mean) the MLP's loss
took ~440 us a call at 128x10 against PyTorch's ~16 us: a dozen small ops and an `.item()`.

Both kernels check the targets while they read them (IndexError, as PyTorch, for a target
outside [0, C) that is not ignore_index), so the caller need not (`checks_targets`); the
forward returns the number of rows that are not ignored, the divisor of the mean."""
import numpy as np
cimport numpy as cnp

from tensorlib._C.tensor_impl cimport TensorImpl, host_array

cnp.import_array()

cdef extern from *:
    """
    #include <math.h>
    #include "vexp.h"
    #define CE_PARALLEL(rows, n) ((rows) * (n) > 32768 && (rows) > 1)

    /* NOTE [ cross entropy rows in vectors ]: a float32 row's max and sum of exp(x - max)
       16 lanes at a time (vexp.h), the last vector masked. libm's scalar expf/logf ran the
       MLP's 128x10 logits at ~10 us a call (gcc left the 10-long `omp simd` loop scalar);
       the float64 rows and builds without AVX-512 keep the scalar loop. `e`, when not NULL,
       gets exp(x - max) (the backward scales it into the gradient). */
    #if TL_HAVE_VEXP
    #define CE_VECTOR_FLOAT 1
    static inline float ce_row_float(const float* x, Py_ssize_t C, float* e, float* s_out) {
        const __m512 lowest = _mm512_set1_ps(-INFINITY);
        __m512 vm = lowest, vs = _mm512_setzero_ps();
        Py_ssize_t j;
        __mmask16 k;
        for (j = 0; j < C; j += 16) {
            k = C - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (C - j)) - 1u);
            vm = _mm512_max_ps(vm, _mm512_mask_loadu_ps(lowest, k, x + j));
        }
        const float m = _mm512_reduce_max_ps(vm);
        const __m512 vmax = _mm512_set1_ps(m);
        for (j = 0; j < C; j += 16) {
            k = C - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (C - j)) - 1u);
            __m512 v = tl_exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + j), vmax));
            vs = _mm512_mask_add_ps(vs, k, vs, v);
            if (e) _mm512_mask_storeu_ps(e + j, k, v);
        }
        *s_out = _mm512_reduce_add_ps(vs);
        return m;
    }
    #else
    #define CE_VECTOR_FLOAT 0
    static inline float ce_row_float(const float* x, Py_ssize_t C, float* e, float* s_out) {
        (void)x; (void)C; (void)e; (void)s_out;     /* never called: CE_VECTOR_FLOAT is 0 */
        return 0;
    }
    #endif
    #define CE_VECTOR(T) (CE_VECTOR_FLOAT && sizeof(T) == sizeof(float))

    /* the first row whose target is out of range and not ignored, or -1 */
    static Py_ssize_t ce_bad_target(const long long* t, Py_ssize_t rows, Py_ssize_t C,
                                    long long ignore, Py_ssize_t* kept) {
        Py_ssize_t r, k = 0;
        for (r = 0; r < rows; r++) {
            if (t[r] == ignore) continue;
            if (t[r] < 0 || t[r] >= C) return r;
            k++;
        }
        *kept = k;
        return -1;
    }

    #define DEFINE_CE(T, EXP, LOG)                                                          \\
    static void ce_fwd_##T(const T* x, const long long* t, T* out, Py_ssize_t rows,        \\
                           Py_ssize_t C, long long ignore) {                               \\
        Py_ssize_t r;                                                                       \\
        _Pragma("omp parallel for schedule(static) if (CE_PARALLEL(rows, C))")             \\
        for (r = 0; r < rows; r++) {                                                        \\
            const T* xr = x + r * C; T m = -INFINITY, s = 0; Py_ssize_t j;                  \\
            if (t[r] == ignore) { out[r] = 0; continue; }                                   \\
            if (CE_VECTOR(T)) {                                                             \\
                float fs; m = (T)ce_row_float((const float*)xr, C, NULL, &fs); s = (T)fs;  \\
            } else {                                                                        \\
                for (j = 0; j < C; j++) m = xr[j] > m ? xr[j] : m;                          \\
                _Pragma("omp simd reduction(+:s)")                                          \\
                for (j = 0; j < C; j++) s += EXP(xr[j] - m);                                \\
            }                                                                               \\
            out[r] = m + LOG(s) - xr[t[r]];                                                 \\
        }                                                                                   \\
    }                                                                                       \\
    static void ce_bwd_##T(const T* x, const long long* t, const T* g, Py_ssize_t g_stride, \\
                           T* gx, Py_ssize_t rows, Py_ssize_t C, long long ignore) {       \\
        Py_ssize_t r;                                                                       \\
        _Pragma("omp parallel for schedule(static) if (CE_PARALLEL(rows, C))")             \\
        for (r = 0; r < rows; r++) {                                                        \\
            const T* xr = x + r * C; T* gr = gx + r * C; T m = -INFINITY, s = 0, w;         \\
            Py_ssize_t j;                                                                   \\
            if (t[r] == ignore) { for (j = 0; j < C; j++) gr[j] = 0; continue; }            \\
            if (CE_VECTOR(T)) {                                                             \\
                float fs; ce_row_float((const float*)xr, C, (float*)gr, &fs); s = (T)fs;  \\
            } else {                                                                        \\
                for (j = 0; j < C; j++) m = xr[j] > m ? xr[j] : m;                          \\
                _Pragma("omp simd reduction(+:s)")                                          \\
                for (j = 0; j < C; j++) { T e = EXP(xr[j] - m); gr[j] = e; s += e; }        \\
            }                                                                               \\
            w = g[r * g_stride] / s;                                                        \\
            _Pragma("omp simd")                                                             \\
            for (j = 0; j < C; j++) gr[j] *= w;                                             \\
            gr[t[r]] -= g[r * g_stride];                                                    \\
        }                                                                                   \\
    }
    DEFINE_CE(float, expf, logf)
    DEFINE_CE(double, exp, log)
    """
    Py_ssize_t ce_bad_target(const long long* t, Py_ssize_t rows, Py_ssize_t C,
                             long long ignore, Py_ssize_t* kept) nogil
    void ce_fwd_float(const float* x, const long long* t, float* out, Py_ssize_t rows,
                      Py_ssize_t C, long long ignore) nogil
    void ce_fwd_double(const double* x, const long long* t, double* out, Py_ssize_t rows,
                       Py_ssize_t C, long long ignore) nogil
    void ce_bwd_float(const float* x, const long long* t, const float* g, Py_ssize_t g_stride,
                      float* gx, Py_ssize_t rows, Py_ssize_t C, long long ignore) nogil
    void ce_bwd_double(const double* x, const long long* t, const double* g,
                       Py_ssize_t g_stride, double* gx, Py_ssize_t rows, Py_ssize_t C,
                       long long ignore) nogil


cdef cnp.ndarray _compute_array(TensorImpl t):
    """t's values as a C-contiguous float32/float64 array (a view when t already is one):
    half-precision logits are computed in float32, as PyTorch does."""
    a = host_array(t)
    if a.dtype.type is not np.float64 and a.dtype.type is not np.float32:
        return np.ascontiguousarray(a, dtype=np.float32)
    return np.ascontiguousarray(a)


cdef cnp.ndarray _checked_targets(TensorImpl target, Py_ssize_t C, long long ignore,
                                  Py_ssize_t* kept):
    cdef cnp.ndarray t = np.ascontiguousarray(host_array(target), dtype=np.int64)
    cdef Py_ssize_t bad
    with nogil:
        bad = ce_bad_target(<long long*>cnp.PyArray_DATA(t), t.shape[0], C, ignore, kept)
    if bad >= 0:
        raise IndexError(f"Target {t[bad]} is out of bounds.")
    return t


cdef _store(TensorImpl dst, cnp.ndarray values):
    d = host_array(dst)
    if <object>values is not <object>d:
        d[...] = values


def cross_entropy(TensorImpl out, TensorImpl x, TensorImpl target, long long ignore_index):
    """out[r] = logsumexp(x[r]) - x[r, target[r]] (0 where target[r] == ignore_index);
    returns how many rows are not ignored."""
    cdef Py_ssize_t rows = x._sizes[0], C = x._sizes[1], kept = 0
    cdef cnp.ndarray t = _checked_targets(target, C, ignore_index, &kept)
    cdef cnp.ndarray xv = _compute_array(x)
    o = host_array(out)
    cdef cnp.ndarray ov = o if (o.dtype == xv.dtype and o.flags.c_contiguous) \
        else np.empty(rows, dtype=xv.dtype)
    cdef void* xp = cnp.PyArray_DATA(xv)
    cdef void* op_ = cnp.PyArray_DATA(ov)
    cdef long long* tp = <long long*>cnp.PyArray_DATA(t)
    if xv.dtype.type is np.float64:
        with nogil:
            ce_fwd_double(<double*>xp, tp, <double*>op_, rows, C, ignore_index)
    else:
        with nogil:
            ce_fwd_float(<float*>xp, tp, <float*>op_, rows, C, ignore_index)
    _store(out, ov)
    return kept


def cross_entropy_backward(TensorImpl grad_x, TensorImpl grad_rows, TensorImpl x,
                           TensorImpl target, long long ignore_index):
    """grad_x[r] = grad_rows[r] * (softmax(x[r]) - onehot(target[r])), 0 on ignored rows;
    grad_rows may be strided (an expanded scalar gradient of a sum or mean)."""
    cdef Py_ssize_t rows = x._sizes[0], C = x._sizes[1], kept = 0
    cdef cnp.ndarray t = _checked_targets(target, C, ignore_index, &kept)
    cdef cnp.ndarray xv = _compute_array(x)
    g = host_array(grad_rows)
    if g.dtype != xv.dtype or (rows and g.strides[0] % xv.itemsize):
        g = g.astype(xv.dtype)
    cdef cnp.ndarray gv = g
    cdef Py_ssize_t g_stride = gv.strides[0] // xv.itemsize if rows else 0
    o = host_array(grad_x)
    cdef cnp.ndarray ov = o if (o.dtype == xv.dtype and o.flags.c_contiguous) \
        else np.empty((rows, C), dtype=xv.dtype)
    cdef void* xp = cnp.PyArray_DATA(xv)
    cdef void* gp = cnp.PyArray_DATA(gv)
    cdef void* op_ = cnp.PyArray_DATA(ov)
    cdef long long* tp = <long long*>cnp.PyArray_DATA(t)
    if xv.dtype.type is np.float64:
        with nogil:
            ce_bwd_double(<double*>xp, tp, <double*>gp, g_stride, <double*>op_, rows, C,
                          ignore_index)
    else:
        with nogil:
            ce_bwd_float(<float*>xp, tp, <float*>gp, g_stride, <float*>op_, rows, C,
                         ignore_index)
    _store(grad_x, ov)


cross_entropy.checks_targets = True
KERNELS = {"cross_entropy": cross_entropy, "cross_entropy_backward": cross_entropy_backward}
