# cython: boundscheck=False, wraparound=False
"""Fused layer_norm forward over the last dims of a contiguous float tensor: each row read
twice while it is in cache (mean, then variance around it, accumulated in double) and
written once with the affine step applied, rows split across the OpenMP team. The
decomposition (mean, var, sub, mul, add: five passes and four temporaries) ran at ~0.1x
PyTorch here. Used for inference, per the contract in nn/_functional/normalization.py."""
import numpy as np
cimport numpy as cnp

from tensorlib._C.tensor_impl cimport TensorImpl, host_array
from tensorlib_cpu import fastreduce

cnp.import_array()

cdef extern from *:
    """
    #include <math.h>
    #define DEFINE_LAYER_NORM(T)                                                            \\
    static void layer_norm_##T(const T* x, const T* w, const T* b, T* y, Py_ssize_t rows,  \\
                               Py_ssize_t n, double eps, int nt) {                          \\
        Py_ssize_t r;                                                                       \\
        _Pragma("omp parallel for schedule(static) num_threads(nt) if (rows * n > 32768 && rows > 1)") \\
        for (r = 0; r < rows; r++) {                                                        \\
            const T* xr = x + r * n; T* yr = y + r * n; double s = 0, q = 0; Py_ssize_t i;  \\
            _Pragma("omp simd reduction(+:s)")                                              \\
            for (i = 0; i < n; i++) s += xr[i];                                             \\
            const double mean = s / n;                                                      \\
            _Pragma("omp simd reduction(+:q)")                                              \\
            for (i = 0; i < n; i++) { double d = xr[i] - mean; q += d * d; }               \\
            const T rstd = (T)(1.0 / sqrt(q / n + eps)), m = (T)mean;                       \\
            if (w && b) { _Pragma("omp simd") for (i = 0; i < n; i++) yr[i] = (xr[i] - m) * rstd * w[i] + b[i]; } \\
            else if (w) { _Pragma("omp simd") for (i = 0; i < n; i++) yr[i] = (xr[i] - m) * rstd * w[i]; } \\
            else if (b) { _Pragma("omp simd") for (i = 0; i < n; i++) yr[i] = (xr[i] - m) * rstd + b[i]; } \\
            else { _Pragma("omp simd") for (i = 0; i < n; i++) yr[i] = (xr[i] - m) * rstd; } \\
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
