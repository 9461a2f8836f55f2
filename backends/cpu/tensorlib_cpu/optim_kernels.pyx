# cython: boundscheck=False, wraparound=False
"""Fused optimizer updates: one pass over each parameter's memory instead of the 4-6 passes
(and temporaries) of the same update written as tensor ops. Registered as composite kernels;
tensorlib.optim uses them when the backend has them, its tensor-op form otherwise."""
import numpy as np
cimport numpy as cnp
from cython.parallel cimport prange

from tensorlib._C.tensor_impl cimport TensorImpl, host_array

cnp.import_array()

ctypedef fused real:
    float
    double


cdef void _sgd(real* p, const real* g, real* buf, Py_ssize_t n, double lr, double wd,
               double momentum, double dampening, bint nesterov, bint maximize,
               bint first) noexcept nogil:
    cdef Py_ssize_t i
    cdef real d, b
    for i in prange(n, schedule="static", nogil=True):
        d = -g[i] if maximize else g[i]
        if wd != 0:
            d = d + <real>wd * p[i]
        if momentum != 0:
            if first:
                b = d
            else:
                b = <real>momentum * buf[i] + <real>(1 - dampening) * d
            buf[i] = b
            d = d + <real>momentum * b if nesterov else b
        p[i] = p[i] - <real>lr * d


cdef bint _flat(object a, object dtype):
    return a.dtype == dtype and a.flags.c_contiguous


def sgd_update(TensorImpl param, TensorImpl grad, buf, double lr, double weight_decay,
               double momentum, double dampening, bint nesterov, bint maximize, bint first):
    """param -= lr * (SGD direction), updating `buf` (the momentum buffer) in place; `first`
    starts the buffer from the gradient. Returns False for layouts it does not take."""
    p, g = host_array(param), host_array(grad)
    b = host_array(buf) if buf is not None else p
    if not (_flat(p, p.dtype) and _flat(g, p.dtype) and _flat(b, p.dtype)):
        return False
    cdef Py_ssize_t n = p.size
    if p.dtype == np.float32:
        _sgd[float](<float*>cnp.PyArray_DATA(p), <float*>cnp.PyArray_DATA(g),
                    <float*>cnp.PyArray_DATA(b), n, lr, weight_decay, momentum, dampening,
                    nesterov, maximize, first)
    elif p.dtype == np.float64:
        _sgd[double](<double*>cnp.PyArray_DATA(p), <double*>cnp.PyArray_DATA(g),
                     <double*>cnp.PyArray_DATA(b), n, lr, weight_decay, momentum, dampening,
                     nesterov, maximize, first)
    else:
        return False
    param._storage.version += 1
    if buf is not None:
        (<TensorImpl>buf)._storage.version += 1
    return True


KERNELS = {"sgd_update": sgd_update}
