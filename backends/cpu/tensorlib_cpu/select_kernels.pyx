# cython: boundscheck=False, wraparound=False, cdivision=True
"""Elementwise selects as branch-free OpenMP loops: `where`, relu and relu's backward. numpy's where branches per
element (a random mask, as relu's backward has, mispredicts half of them), the bit-mask form
of kernels/pointwise.where takes five passes and a mask conversion, and numpy's maximum(x, 0)
runs at a quarter of memory speed. Built without -ffast-math (setup.py): relu tests for NaN."""
import numpy as np

cimport numpy as cnp
from cython.parallel cimport prange
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t

from tensorlib._C.dtypes cimport BOOL
from tensorlib._C.tensor_impl cimport TensorImpl, host_array, is_contiguous, numel

from tensorlib_cpu import fastreduce

cnp.import_array()

# Below this many elements one thread does it.
cdef Py_ssize_t PARALLEL_MIN = 1 << 16

ctypedef fused bits:
    uint8_t
    uint16_t
    uint32_t
    uint64_t

ctypedef fused real:
    float
    double


cdef void _where(const uint8_t* c, const bits* a, const bits* b, bits* o, Py_ssize_t n,
                 bint a_full, bint b_full, int nt) noexcept nogil:
    """o = c ? a : b on the bits; a and b either full arrays or one broadcast value."""
    cdef Py_ssize_t i
    cdef bits av = a[0], bv = b[0]
    if a_full and b_full:
        for i in prange(n, num_threads=nt, schedule="static"):
            o[i] = a[i] if c[i] else b[i]
    elif a_full:
        for i in prange(n, num_threads=nt, schedule="static"):
            o[i] = a[i] if c[i] else bv
    elif b_full:
        for i in prange(n, num_threads=nt, schedule="static"):
            o[i] = av if c[i] else b[i]
    else:
        for i in prange(n, num_threads=nt, schedule="static"):
            o[i] = av if c[i] else bv


cdef int _layout(TensorImpl x, tuple sizes):
    """1: contiguous with out's sizes; 0: one value broadcast everywhere; -1: neither."""
    for st in x._strides:
        if st != 0:
            break
    else:
        return 0
    if x._sizes == sizes and is_contiguous(x):
        return 1
    return -1


cdef inline char* _data(TensorImpl t):
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>t._storage.handle) + \
        t._offset * t._dtype.itemsize


def where(TensorImpl out, TensorImpl cond, TensorImpl a, TensorImpl b):
    """out = where(cond, a, b) for a contiguous out and cond; a, b of out's dtype, each
    contiguous or a broadcast value. False (nothing written) for other layouts. Read off the
    tensors' fields: numpy views of the four operands cost more than a small where."""
    cdef tuple sizes = out._sizes
    cdef int size = out._dtype.itemsize
    if (cond._dtype.code != BOOL or a._dtype is not out._dtype or b._dtype is not out._dtype
            or cond._sizes != sizes or not is_contiguous(out) or not is_contiguous(cond)
            or size not in (1, 2, 4, 8)):
        return False
    for t in (out, cond, a, b):
        if type((<TensorImpl>t)._storage.handle) is not np.ndarray:
            return False
    cdef int la = _layout(a, sizes), lb = _layout(b, sizes)
    if la < 0 or lb < 0:
        return False
    cdef Py_ssize_t n = numel(sizes)
    if n == 0:
        return True
    cdef int nt = fastreduce.get_num_threads() if n >= PARALLEL_MIN else 1
    cdef const uint8_t* cp = <uint8_t*>_data(cond)
    cdef void* ap = _data(a)
    cdef void* bp = _data(b)
    cdef void* op = _data(out)
    with nogil:
        if size == 1:
            _where[uint8_t](cp, <uint8_t*>ap, <uint8_t*>bp, <uint8_t*>op, n, la, lb, nt)
        elif size == 2:
            _where[uint16_t](cp, <uint16_t*>ap, <uint16_t*>bp, <uint16_t*>op, n, la, lb, nt)
        elif size == 4:
            _where[uint32_t](cp, <uint32_t*>ap, <uint32_t*>bp, <uint32_t*>op, n, la, lb, nt)
        else:
            _where[uint64_t](cp, <uint64_t*>ap, <uint64_t*>bp, <uint64_t*>op, n, la, lb, nt)
    return True


cdef void _relu(const real* x, real* o, Py_ssize_t n, int nt) noexcept nogil:
    cdef Py_ssize_t i
    cdef real v
    for i in prange(n, num_threads=nt, schedule="static"):
        v = x[i]
        o[i] = v if (v > 0) | (v != v) else 0


def relu(TensorImpl out, TensorImpl x):
    """out = max(x, 0) with NaN kept, for contiguous float32/float64; False (nothing written)
    otherwise."""
    cdef cnp.ndarray o = host_array(out), xv = host_array(x)
    if (o.dtype != xv.dtype or o.dtype.type not in (np.float32, np.float64)
            or not (o.flags.c_contiguous and xv.flags.c_contiguous)
            or (<object>o).shape != (<object>xv).shape):
        return False
    cdef Py_ssize_t n = o.size
    cdef int nt = fastreduce.get_num_threads() if n >= PARALLEL_MIN else 1
    cdef void* xp = cnp.PyArray_DATA(xv)
    cdef void* op = cnp.PyArray_DATA(o)
    cdef bint single = o.dtype.type is np.float32
    with nogil:
        if single:
            _relu[float](<float*>xp, <float*>op, n, nt)
        else:
            _relu[double](<double*>xp, <double*>op, n, nt)
    return True


cdef void _relu_backward(const real* g, const real* y, real* o, Py_ssize_t n,
                         int nt) noexcept nogil:
    cdef Py_ssize_t i
    for i in prange(n, num_threads=nt, schedule="static"):
        o[i] = 0 if y[i] <= 0 else g[i]


def relu_backward(TensorImpl out, TensorImpl grad, TensorImpl y):
    """out = 0 where relu's output y <= 0, else grad (torch's threshold_backward: a NaN
    output passes its gradient). One pass for contiguous float32/float64 operands of one
    shape, numpy for every other layout."""
    cdef cnp.ndarray o = host_array(out), gv = host_array(grad), yv = host_array(y)
    shape = (<object>o).shape
    if (o.dtype.type not in (np.float32, np.float64) or gv.dtype != o.dtype
            or yv.dtype != o.dtype or (<object>gv).shape != shape
            or (<object>yv).shape != shape or not (o.flags.c_contiguous
                                                    and gv.flags.c_contiguous
                                                    and yv.flags.c_contiguous)):
        np.copyto(o, np.where(yv <= 0, 0, gv), casting="unsafe")
        return
    cdef Py_ssize_t n = o.size
    cdef int nt = fastreduce.get_num_threads() if n >= PARALLEL_MIN else 1
    cdef void* gp = cnp.PyArray_DATA(gv)
    cdef void* yp = cnp.PyArray_DATA(yv)
    cdef void* op = cnp.PyArray_DATA(o)
    cdef bint single = o.dtype.type is np.float32
    with nogil:
        if single:
            _relu_backward[float](<float*>gp, <float*>yp, <float*>op, n, nt)
        else:
            _relu_backward[double](<double*>gp, <double*>yp, <double*>op, n, nt)


KERNELS = {"relu": relu, "relu_backward": relu_backward}
