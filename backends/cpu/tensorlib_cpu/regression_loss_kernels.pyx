# cython: boundscheck=False, wraparound=False, cdivision=True
"""The regression losses (l1, mse, smooth_l1, huber) of two dense float tensors of one
shape, reduced, forward and backward in one pass each (the contract of `_RegressionLoss` in
nn/_functional/loss_fused.py). Composed of ops they took 3-9 passes each way: mse on 1M
floats ran at 0.4-0.7x PyTorch (AMD EPYC Zen 4, 2 threads).

Built without -ffast-math (setup.py's EXACT_MATH): a NaN difference must give a NaN
gradient, which fast-math's comparisons folded away."""
import numpy as np

cimport numpy as cnp

from tensorlib._C.tensor_impl cimport TensorImpl, host_array, is_contiguous, numel

from tensorlib_cpu import fastreduce

cnp.import_array()

cdef extern from *:
    """
    #include <math.h>
    #include <stdlib.h>
    /* The loss is reduced to a sum (times `scale`: 1 or 1/n) in one pass, each piece of
       PL_PIECE elements summed in the dtype (independent lanes) and the pieces' sums added
       in double in piece order: the value does not depend on the thread count. The
       backward writes scale * grad * dloss/dx in one pass, PyTorch's derivatives (l1: the
       sign, 0 at 0 and for NaN). */
    #define PL_PIECE 4096
    #define PL_LOSS(T, FABS, kind, d, p)                                                     \\
        (kind == 0 ? FABS(d)                                                                 \\
         : kind == 1 ? (d) * (d)                                                             \\
         : kind == 2 ? (FABS(d) < (p) ? (T)0.5 * (d) * (d) / (p) : FABS(d) - (T)0.5 * (p))   \\
         : (FABS(d) < (p) ? (T)0.5 * (d) * (d) : (p) * (FABS(d) - (T)0.5 * (p))))
    #define DEFINE_PL(T, FABS)                                                              \\
    static int pl_sum_##T(const T* x, const T* y, Py_ssize_t n, int kind, T p, int nt,     \\
                          double* out) {                                                    \\
        const Py_ssize_t pieces = (n + PL_PIECE - 1) / PL_PIECE;                            \\
        double* part = (double*)malloc((size_t)(pieces > 0 ? pieces : 1) * sizeof(double)); \\
        if (!part) return 0;                                                                \\
        _Pragma("omp parallel for num_threads(nt) if (n >= 65536)")                         \\
        for (Py_ssize_t q = 0; q < pieces; q++) {                                           \\
            const Py_ssize_t lo = q * PL_PIECE, hi = lo + PL_PIECE < n ? lo + PL_PIECE : n; \\
            T acc = 0;                                                                      \\
            switch (kind) {                                                                 \\
            case 0: _Pragma("omp simd reduction(+:acc)") for (Py_ssize_t i = lo; i < hi; i++) { \\
                T d = x[i] - y[i]; acc += PL_LOSS(T, FABS, 0, d, p); } break;              \\
            case 1: _Pragma("omp simd reduction(+:acc)") for (Py_ssize_t i = lo; i < hi; i++) { \\
                T d = x[i] - y[i]; acc += PL_LOSS(T, FABS, 1, d, p); } break;              \\
            case 2: _Pragma("omp simd reduction(+:acc)") for (Py_ssize_t i = lo; i < hi; i++) { \\
                T d = x[i] - y[i]; acc += PL_LOSS(T, FABS, 2, d, p); } break;              \\
            default: _Pragma("omp simd reduction(+:acc)") for (Py_ssize_t i = lo; i < hi; i++) { \\
                T d = x[i] - y[i]; acc += PL_LOSS(T, FABS, 3, d, p); } break;              \\
            }                                                                               \\
            part[q] = acc;                                                                  \\
        }                                                                                   \\
        double total = 0;                                                                   \\
        for (Py_ssize_t q = 0; q < pieces; q++) total += part[q];                           \\
        free(part);                                                                         \\
        *out = total;                                                                       \\
        return 1;                                                                           \\
    }                                                                                       \\
    /* gx = s * dloss/dx, s = scale * grad */                                               \\
    static void pl_grad_##T(const T* x, const T* y, T* gx, Py_ssize_t n, int kind, T p,    \\
                            T s, int nt) {                                                  \\
        Py_ssize_t i;                                                                       \\
        const T two_s = 2 * s, ps = p * s;                                                  \\
        switch (kind) {                                                                     \\
        case 0:                                                                             \\
            _Pragma("omp parallel for simd num_threads(nt) if (n >= 65536)")                \\
            for (i = 0; i < n; i++) { T d = x[i] - y[i];                                    \\
                gx[i] = s * (T)((d > 0) - (d < 0)); } break;                                \\
        case 1:                                                                             \\
            _Pragma("omp parallel for simd num_threads(nt) if (n >= 65536)")                \\
            for (i = 0; i < n; i++) gx[i] = two_s * (x[i] - y[i]); break;                   \\
        case 2:                                                                             \\
            _Pragma("omp parallel for simd num_threads(nt) if (n >= 65536)")                \\
            for (i = 0; i < n; i++) { T d = x[i] - y[i];                                    \\
                gx[i] = d < -p ? -s : (d > p ? s : s * d / p); } break;                     \\
        default:                                                                            \\
            _Pragma("omp parallel for simd num_threads(nt) if (n >= 65536)")                \\
            for (i = 0; i < n; i++) { T d = x[i] - y[i];                                    \\
                gx[i] = d < -p ? -ps : (d > p ? ps : s * d); } break;                       \\
        }                                                                                   \\
    }
    DEFINE_PL(float, fabsf)
    DEFINE_PL(double, fabs)
    """
    int pl_sum_float(const float* x, const float* y, Py_ssize_t n, int kind, float p,
                     int nt, double* out) nogil
    int pl_sum_double(const double* x, const double* y, Py_ssize_t n, int kind, double p,
                      int nt, double* out) nogil
    void pl_grad_float(const float* x, const float* y, float* gx, Py_ssize_t n, int kind,
                       float p, float s, int nt) nogil
    void pl_grad_double(const double* x, const double* y, double* gx, Py_ssize_t n, int kind,
                        double p, double s, int nt) nogil


# the losses, by the kernels' `kind`
_REGRESSION = {"l1": 0, "mse": 1, "smooth_l1": 2, "huber": 3}


cdef int _pair_kind(TensorImpl x, TensorImpl y):
    """1 float32, 2 float64, 0 when x and y are not contiguous tensors of one float dtype
    and shape."""
    if y._dtype is not x._dtype or y._sizes != x._sizes:
        return 0
    if not is_contiguous(x) or not is_contiguous(y):
        return 0
    if x._dtype.np.type is np.float32:
        return 1
    return 2 if x._dtype.np.type is np.float64 else 0


cdef inline void* _tdata(TensorImpl t):
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>t._storage.handle) + t._offset * t._dtype.itemsize


def regression_loss(TensorImpl out, TensorImpl x, TensorImpl y, str loss, double param,
                    double scale):
    """out (0-d) = scale * sum of loss(x - y) (l1, mse, smooth_l1 with beta = param, huber
    with delta = param); False for operands it does not take."""
    cdef int kind = _REGRESSION[loss], dtype = _pair_kind(x, y), ok
    if dtype == 0 or out._dtype is not x._dtype:
        return False
    cdef Py_ssize_t n = numel(x._sizes)
    cdef int nt = fastreduce.threads_now()
    cdef double total = 0
    cdef void* px = _tdata(x)
    cdef void* py = _tdata(y)
    with nogil:
        if dtype == 1:
            ok = pl_sum_float(<float*>px, <float*>py, n, kind, <float>param, nt, &total)
        else:
            ok = pl_sum_double(<double*>px, <double*>py, n, kind, param, nt, &total)
    if not ok:
        raise MemoryError(f"{loss}_loss: partial sums of {n} elements")
    host_array(out)[...] = total * scale
    return True


def regression_loss_backward(TensorImpl grad_x, TensorImpl grad, TensorImpl x, TensorImpl y,
                             str loss, double param, double scale):
    """grad_x = scale * grad * dloss/dx, grad a 0-d tensor; False for operands it does not
    take."""
    cdef int kind = _REGRESSION[loss], dtype = _pair_kind(x, y)
    if dtype == 0 or grad_x._dtype is not x._dtype or not is_contiguous(grad_x) \
            or grad_x._sizes != x._sizes or len(grad._sizes) != 0:
        return False
    cdef double s = scale * float(host_array(grad))
    cdef Py_ssize_t n = numel(x._sizes)
    cdef int nt = fastreduce.threads_now()
    cdef void* px = _tdata(x)
    cdef void* py = _tdata(y)
    cdef void* pg = _tdata(grad_x)
    with nogil:
        if dtype == 1:
            pl_grad_float(<float*>px, <float*>py, <float*>pg, n, kind, <float>param,
                          <float>s, nt)
        else:
            pl_grad_double(<double*>px, <double*>py, <double*>pg, n, kind, param, s, nt)
    return True


KERNELS = {"regression_loss": regression_loss,
           "regression_loss_backward": regression_loss_backward}
