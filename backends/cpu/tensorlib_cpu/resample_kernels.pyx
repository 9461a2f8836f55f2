# cython: boundscheck=False, wraparound=False, cdivision=True
"""Linear resampling along one dim in one pass: out[.., o, ..] = x[.., i0[o], ..] * w0[o] +
x[.., i1[o], ..] * w1[o], the step interpolate's linear modes take per spatial dim. Composed
of two index_selects, two products and a sum (five passes and four temporaries per dim),
bilinear upsampling ran at 0.5x PyTorch. Built without -ffast-math (setup.py's EXACT_MATH):
each element rounds as the composition's does, so both paths give one result."""
import numpy as np

cimport numpy as cnp
from libc.stdint cimport int64_t

from tensorlib._C.tensor_impl cimport TensorImpl, is_contiguous, numel

from tensorlib_cpu import fastreduce

cnp.import_array()

cdef extern from *:
    """
    #include <stdint.h>
    #define DEFINE_RESAMPLE(T)                                                              \\
    /* x (outer, in, inner) -> y (outer, out, inner) */                                     \\
    static void resample_##T(const T* x, T* y, Py_ssize_t outer, Py_ssize_t in,            \\
                             Py_ssize_t out, Py_ssize_t inner, const int64_t* i0,          \\
                             const int64_t* i1, const T* w0, const T* w1, int nt) {        \\
        Py_ssize_t r;                                                                       \\
        if (inner == 1) {                                                                   \\
            _Pragma("omp parallel for num_threads(nt) if (outer * out >= 65536)")           \\
            for (r = 0; r < outer; r++) {                                                   \\
                const T* xr = x + r * in; T* yr = y + r * out; Py_ssize_t o;                \\
                for (o = 0; o < out; o++) yr[o] = xr[i0[o]] * w0[o] + xr[i1[o]] * w1[o];   \\
            }                                                                               \\
            return;                                                                         \\
        }                                                                                   \\
        _Pragma("omp parallel for num_threads(nt) if (outer * out * inner >= 65536)")      \\
        for (r = 0; r < outer * out; r++) {                                                 \\
            const Py_ssize_t q = r / out, o = r % out;                                      \\
            const T* a = x + (q * in + i0[o]) * inner;                                      \\
            const T* b = x + (q * in + i1[o]) * inner;                                      \\
            const T u = w0[o], v = w1[o]; T* d = y + r * inner; Py_ssize_t j;               \\
            _Pragma("omp simd")                                                             \\
            for (j = 0; j < inner; j++) d[j] = a[j] * u + b[j] * v;                         \\
        }                                                                                   \\
    }
    DEFINE_RESAMPLE(float)
    DEFINE_RESAMPLE(double)
    """
    void resample_float(const float* x, float* y, Py_ssize_t outer, Py_ssize_t n_in,
                        Py_ssize_t n_out, Py_ssize_t inner, const int64_t* i0,
                        const int64_t* i1, const float* w0, const float* w1, int nt) nogil
    void resample_double(const double* x, double* y, Py_ssize_t outer, Py_ssize_t n_in,
                         Py_ssize_t n_out, Py_ssize_t inner, const int64_t* i0,
                         const int64_t* i1, const double* w0, const double* w1, int nt) nogil


cdef inline char* _data(TensorImpl t):
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>t._storage.handle) + t._offset * t._dtype.itemsize


def linear_resample(TensorImpl out, TensorImpl x, int axis, TensorImpl i0, TensorImpl i1,
                    TensorImpl w0, TensorImpl w1):
    """out = x[.., i0, ..] * w0 + x[.., i1, ..] * w1 along `axis` (i0, i1 int64 source
    positions in range, w0, w1 one weight per output position in x's dtype); False unless
    every tensor is contiguous, x and out float32/float64 of one dtype."""
    cdef tuple sizes = x._sizes
    if x._dtype is not out._dtype or x._dtype.np.type not in (np.float32, np.float64):
        return False
    if w0._dtype is not x._dtype or w1._dtype is not x._dtype:
        return False
    if i0._dtype.np.type is not np.int64 or i1._dtype.np.type is not np.int64:
        return False
    for t in (out, x, i0, i1, w0, w1):
        if not is_contiguous(<TensorImpl>t):
            return False
    cdef Py_ssize_t n_out = out._sizes[axis], n_in = sizes[axis]
    if numel(i0._sizes) != n_out or numel(i1._sizes) != n_out or numel(w0._sizes) != n_out \
            or numel(w1._sizes) != n_out:
        return False
    cdef Py_ssize_t outer = numel(sizes[:axis]), inner = numel(sizes[axis + 1:])
    if numel(out._sizes) == 0:
        return True
    cdef int nt = fastreduce.threads_now()
    cdef char* px = _data(x)
    cdef char* py = _data(out)
    cdef const int64_t* p0 = <const int64_t*>_data(i0)
    cdef const int64_t* p1 = <const int64_t*>_data(i1)
    cdef char* pw0 = _data(w0)
    cdef char* pw1 = _data(w1)
    with nogil:
        if x._dtype.itemsize == 4:
            resample_float(<float*>px, <float*>py, outer, n_in, n_out, inner, p0, p1,
                           <float*>pw0, <float*>pw1, nt)
        else:
            resample_double(<double*>px, <double*>py, outer, n_in, n_out, inner, p0, p1,
                            <double*>pw0, <double*>pw1, nt)
    return True


KERNELS = {"linear_resample": linear_resample}
