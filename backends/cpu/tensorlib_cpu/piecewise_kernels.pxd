"""The runners of the one-pass activations with parameters (piecewise.h's loops), for the
modules that define more of them."""
from tensorlib._C.tensor_impl cimport TensorImpl

ctypedef void (*fwd_float)(const float*, Py_ssize_t, float*, Py_ssize_t, Py_ssize_t,
                           const double*, int) noexcept nogil
ctypedef void (*fwd_double)(const double*, Py_ssize_t, double*, Py_ssize_t, Py_ssize_t,
                            const double*, int) noexcept nogil
ctypedef void (*bwd_float)(const float*, Py_ssize_t, int, const float*, Py_ssize_t,
                           float*, Py_ssize_t, Py_ssize_t, const double*, int) noexcept nogil
ctypedef void (*bwd_double)(const double*, Py_ssize_t, int, const double*, Py_ssize_t,
                            double*, Py_ssize_t, Py_ssize_t, const double*, int) noexcept nogil

cdef bint run_forward(fwd_float f32, fwd_double f64, TensorImpl out, TensorImpl x, double a,
                      double b, double c)
cdef bint run_backward(bwd_float f32, bwd_double f64, TensorImpl out, TensorImpl grad,
                       TensorImpl x, double a, double b, double c)
