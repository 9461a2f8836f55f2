# cython: boundscheck=False, wraparound=False
"""Fused softmax / log_softmax (forward and backward) over the last dimension: one pass over
each row that stays in cache, rows split across OpenMP threads, exp vectorised through glibc's
libmvec. A chain of numpy temporaries runs at ~0.12x PyTorch here (DESIGN.md).

Each function takes numpy arrays and returns False (writing nothing) for layouts it does not
handle (not C-contiguous, not float32/float64); the kernels in kernels/fused.py then use numpy."""
import numpy as np
cimport numpy as cnp

cnp.import_array()

cdef extern from *:
    """
    #include <math.h>
    #define ROWS_PARALLEL(rows, n) ((rows) * (n) > 32768 && (rows) > 1)

    #define DEFINE_SOFTMAX(T, EXP, LOG)                                                     \\
    static void softmax_fwd_##T(const T* x, T* y, Py_ssize_t rows, Py_ssize_t n, int lg) {  \\
        Py_ssize_t r;                                                                       \\
        _Pragma("omp parallel for schedule(static) if (ROWS_PARALLEL(rows, n))")           \\
        for (r = 0; r < rows; r++) {                                                        \\
            const T* xr = x + r * n; T* yr = y + r * n; T m = -INFINITY, s = 0; Py_ssize_t i; \\
            for (i = 0; i < n; i++) m = xr[i] > m ? xr[i] : m;                              \\
            if (lg) {                                                                       \\
                _Pragma("omp simd reduction(+:s)")                                          \\
                for (i = 0; i < n; i++) s += EXP(xr[i] - m);                                \\
                T shift = m + LOG(s);                                                       \\
                for (i = 0; i < n; i++) yr[i] = xr[i] - shift;                              \\
            } else {                                                                        \\
                _Pragma("omp simd reduction(+:s)")                                          \\
                for (i = 0; i < n; i++) { T e = EXP(xr[i] - m); yr[i] = e; s += e; }        \\
                T inv = (T)1 / s;                                                           \\
                for (i = 0; i < n; i++) yr[i] *= inv;                                       \\
            }                                                                               \\
        }                                                                                   \\
    }                                                                                       \\
    static void softmax_bwd_##T(const T* g, const T* y, T* gi, Py_ssize_t rows,             \\
                                Py_ssize_t n, int lg) {                                     \\
        Py_ssize_t r;                                                                       \\
        _Pragma("omp parallel for schedule(static) if (ROWS_PARALLEL(rows, n))")           \\
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
    DEFINE_SOFTMAX(float, expf, logf)
    DEFINE_SOFTMAX(double, exp, log)
    """
    void softmax_fwd_float(const float* x, float* y, Py_ssize_t rows, Py_ssize_t n,
                           int lg) nogil
    void softmax_fwd_double(const double* x, double* y, Py_ssize_t rows, Py_ssize_t n,
                            int lg) nogil
    void softmax_bwd_float(const float* g, const float* y, float* gi, Py_ssize_t rows,
                           Py_ssize_t n, int lg) nogil
    void softmax_bwd_double(const double* g, const double* y, double* gi, Py_ssize_t rows,
                            Py_ssize_t n, int lg) nogil


cdef bint _usable(cnp.ndarray a, object dtype):
    return a.dtype == dtype and cnp.PyArray_IS_C_CONTIGUOUS(a) and a.ndim > 0


def forward(cnp.ndarray x, cnp.ndarray y, bint log):
    """y = softmax(x) (log_softmax with `log`) over the last dim, in one fused pass."""
    if x.dtype != y.dtype or not (_usable(x, x.dtype) and _usable(y, x.dtype)):
        return False
    cdef Py_ssize_t n = x.shape[x.ndim - 1]
    if n == 0:
        return True
    cdef Py_ssize_t rows = x.size // n
    if x.dtype == np.float32:
        with nogil:
            softmax_fwd_float(<float*>cnp.PyArray_DATA(x), <float*>cnp.PyArray_DATA(y), rows,
                              n, log)
    elif x.dtype == np.float64:
        with nogil:
            softmax_fwd_double(<double*>cnp.PyArray_DATA(x), <double*>cnp.PyArray_DATA(y),
                               rows, n, log)
    else:
        return False
    return True


def backward(cnp.ndarray g, cnp.ndarray y, cnp.ndarray gi, bint log):
    """gi = y * (g - sum(g * y)) for softmax, g - exp(y) * sum(g) for log_softmax."""
    if not (g.dtype == y.dtype == gi.dtype and _usable(g, y.dtype) and _usable(y, y.dtype)
            and _usable(gi, y.dtype)):
        return False
    cdef Py_ssize_t n = y.shape[y.ndim - 1]
    if n == 0:
        return True
    cdef Py_ssize_t rows = y.size // n
    if y.dtype == np.float32:
        with nogil:
            softmax_bwd_float(<float*>cnp.PyArray_DATA(g), <float*>cnp.PyArray_DATA(y),
                              <float*>cnp.PyArray_DATA(gi), rows, n, log)
    elif y.dtype == np.float64:
        with nogil:
            softmax_bwd_double(<double*>cnp.PyArray_DATA(g), <double*>cnp.PyArray_DATA(y),
                               <double*>cnp.PyArray_DATA(gi), rows, n, log)
    else:
        return False
    return True
