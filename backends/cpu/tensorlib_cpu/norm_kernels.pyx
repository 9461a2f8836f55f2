# cython: boundscheck=False, wraparound=False
"""Fused layer_norm forward over the last dims of a contiguous float tensor: each row read
twice while it is in cache (mean, then variance around it) and written once with the affine
step applied, rows split across the OpenMP team. The decomposition (mean, var, sub, mul,
add: five passes and four temporaries) ran at ~0.1x PyTorch here. Used for inference, per
the contract in nn/_functional/normalization.py.

NOTE [ layer_norm accumulation ]
A row's sums run in LANES independent partial sums (a fixed-width inner loop the compiler
turns into several vector accumulators, so the adds do not wait on one another) over blocks
of BLOCK elements; each block's total is added in double. float32 rows thus sum in float32
within a block, as PyTorch's CPU kernel does, and in double across blocks, so a long row
loses no more than a short one; float64 rows sum in double throughout. The earlier kernel
summed every element in double (half the vector width, a convert per element): at 4096x1024
it was compute-bound inside cache, 0.89x PyTorch."""
import numpy as np
cimport numpy as cnp

from tensorlib._C.tensor_impl cimport TensorImpl, host_array
from tensorlib_cpu import fastreduce

cnp.import_array()

cdef extern from *:
    """
    #include <math.h>
    #define LN_LANES 32
    #define LN_BLOCK 1024
    /* NOTE [ layer_norm streaming stores ]: an output this large leaves the caches anyway;
       written with non-temporal stores it is not first read into them (one memory pass
       saved of three: 1.5x at 4096x1024 here). Same arithmetic, same results. */
    #define LN_STREAM_BYTES (8.0 * 1024 * 1024)
    #if defined(__AVX__)
    #include <immintrin.h>
    #define LN_FENCE() _mm_sfence()
    #define DEFINE_LN_STREAM(T, V, W, SUFFIX)                                               \\
    /* y[i] for i from y's first 32-byte boundary in whole vectors, streamed; returns     \\
       where it stopped (the caller writes the rest) */                                    \\
    static inline Py_ssize_t ln_stream_##T(const T* x, const T* w, const T* b, T* y,       \\
                                           Py_ssize_t n, T m, T rstd) {                     \\
        Py_ssize_t i = 0;                                                                   \\
        for (; i < n && ((size_t)(y + i) & 31); i++) {                                      \\
            T v = (x[i] - m) * rstd; if (w) v = v * w[i]; if (b) v = v + b[i]; y[i] = v;   \\
        }                                                                                   \\
        const V vm = _mm256_set1_##SUFFIX(m), vr = _mm256_set1_##SUFFIX(rstd);             \\
        for (; i + W <= n; i += W) {                                                        \\
            V v = _mm256_mul_##SUFFIX(_mm256_sub_##SUFFIX(_mm256_loadu_##SUFFIX(x + i), vm), vr); \\
            if (w) v = _mm256_mul_##SUFFIX(v, _mm256_loadu_##SUFFIX(w + i));                \\
            if (b) v = _mm256_add_##SUFFIX(v, _mm256_loadu_##SUFFIX(b + i));                \\
            _mm256_stream_##SUFFIX(y + i, v);                                               \\
        }                                                                                   \\
        return i;                                                                           \\
    }
    DEFINE_LN_STREAM(float, __m256, 8, ps)
    DEFINE_LN_STREAM(double, __m256d, 4, pd)
    #else
    #define LN_FENCE() ((void)0)
    #define ln_stream_float(x, w, b, y, n, m, rstd) ((Py_ssize_t)0)
    #define ln_stream_double(x, w, b, y, n, m, rstd) ((Py_ssize_t)0)
    #endif
    #define DEFINE_LAYER_NORM(T)                                                            \\
    /* sum of (x[i] - c)^p over a row, p = 1 or 2: see NOTE [ layer_norm accumulation ] */  \\
    static inline double ln_sum_##T(const T* x, Py_ssize_t n, T c, int square) {           \\
        double total = 0;                                                                   \\
        for (Py_ssize_t b = 0; b < n; b += LN_BLOCK) {                                      \\
            const Py_ssize_t e = b + LN_BLOCK < n ? b + LN_BLOCK : n;                       \\
            T acc[LN_LANES] = {0}; T s = 0; Py_ssize_t i = b; int l;                        \\
            if (square) {                                                                   \\
                for (; i + LN_LANES <= e; i += LN_LANES)                                    \\
                    for (l = 0; l < LN_LANES; l++) { T d = x[i + l] - c; acc[l] += d * d; } \\
                for (; i < e; i++) { T d = x[i] - c; s += d * d; }                          \\
            } else {                                                                        \\
                for (; i + LN_LANES <= e; i += LN_LANES)                                    \\
                    for (l = 0; l < LN_LANES; l++) acc[l] += x[i + l];                      \\
                for (; i < e; i++) s += x[i];                                               \\
            }                                                                               \\
            for (l = 0; l < LN_LANES; l++) s += acc[l];                                     \\
            total += s;                                                                     \\
        }                                                                                   \\
        return total;                                                                       \\
    }                                                                                       \\
    static void layer_norm_##T(const T* x, const T* w, const T* b, T* y, Py_ssize_t rows,  \\
                               Py_ssize_t n, double eps, int nt) {                          \\
        const int stream = (double)rows * n * sizeof(T) >= LN_STREAM_BYTES;                \\
        _Pragma("omp parallel num_threads(nt) if (rows * n > 32768 && rows > 1)")           \\
        {                                                                                   \\
            Py_ssize_t r;                                                                   \\
            _Pragma("omp for schedule(static)")                                             \\
            for (r = 0; r < rows; r++) {                                                    \\
                const T* xr = x + r * n; T* yr = y + r * n; Py_ssize_t i, i0 = 0;          \\
                const T m = (T)(ln_sum_##T(xr, n, 0, 0) / n);                               \\
                const T rstd = (T)(1.0 / sqrt(ln_sum_##T(xr, n, m, 1) / n + eps));          \\
                if (stream) i0 = ln_stream_##T(xr, w, b, yr, n, m, rstd);                   \\
                if (w && b) { _Pragma("omp simd") for (i = i0; i < n; i++) yr[i] = (xr[i] - m) * rstd * w[i] + b[i]; } \\
                else if (w) { _Pragma("omp simd") for (i = i0; i < n; i++) yr[i] = (xr[i] - m) * rstd * w[i]; } \\
                else if (b) { _Pragma("omp simd") for (i = i0; i < n; i++) yr[i] = (xr[i] - m) * rstd + b[i]; } \\
                else { _Pragma("omp simd") for (i = i0; i < n; i++) yr[i] = (xr[i] - m) * rstd; } \\
            }                                                                               \\
            if (stream) LN_FENCE();                                                         \\
        }                                                                                   \\
    }
    DEFINE_LAYER_NORM(float)
    DEFINE_LAYER_NORM(double)
    """
    void layer_norm_float(const float* x, const float* w, const float* b, float* y,
                          Py_ssize_t rows, Py_ssize_t n, double eps, int nt) nogil
    void layer_norm_double(const double* x, const double* w, const double* b, double* y,
                           Py_ssize_t rows, Py_ssize_t n, double eps, int nt) nogil


cdef bint _dense(cnp.ndarray a, object dtype):
    return a.dtype == dtype and a.flags.c_contiguous


def layer_norm(TensorImpl out, TensorImpl x, weight, bias, int normalized_ndim, double eps):
    """The `layer_norm` kernel; falls back to numpy for layouts the C loop does not take."""
    cdef cnp.ndarray xv = host_array(x), ov = host_array(out)
    cdef cnp.ndarray wv = host_array(weight) if weight is not None else None
    cdef cnp.ndarray bv = host_array(bias) if bias is not None else None
    cdef Py_ssize_t n = 1, rows
    cdef void* xp
    cdef void* op_
    cdef void* wp
    cdef void* bp
    cdef int nt
    for s in (<object>xv).shape[xv.ndim - normalized_ndim:]:
        n *= s
    rows = xv.size // n if n else 0
    dt = xv.dtype
    if (dt.type in (np.float32, np.float64) and _dense(xv, dt) and _dense(ov, dt)
            and (wv is None or _dense(wv, dt)) and (bv is None or _dense(bv, dt)) and n > 0):
        nt = fastreduce.get_num_threads()
        xp, op_ = cnp.PyArray_DATA(xv), cnp.PyArray_DATA(ov)
        wp = cnp.PyArray_DATA(wv) if wv is not None else NULL
        bp = cnp.PyArray_DATA(bv) if bv is not None else NULL
        if dt.type is np.float32:
            with nogil:
                layer_norm_float(<float*>xp, <float*>wp, <float*>bp, <float*>op_, rows, n, eps, nt)
        else:
            with nogil:
                layer_norm_double(<double*>xp, <double*>wp, <double*>bp, <double*>op_, rows, n,
                                  eps, nt)
        return
    axes = tuple(range(xv.ndim - normalized_ndim, xv.ndim))
    acc = np.float64 if dt.type is np.float64 else np.float32
    xa = xv.astype(acc, copy=False)
    mean = xa.mean(axis=axes, keepdims=True)
    var = ((xa - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (xa - mean) / np.sqrt(var + eps)
    if wv is not None:
        y = y * wv
    if bv is not None:
        y = y + bv
    ov[...] = y


KERNELS = {"layer_norm": layer_norm}
