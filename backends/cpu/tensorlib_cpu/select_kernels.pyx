# cython: boundscheck=False, wraparound=False, cdivision=True
"""Elementwise selects as branch-free OpenMP loops: `where`, relu and relu's backward. numpy's where branches per
element (a random mask, as relu's backward has, mispredicts half of them), the bit-mask form
of kernels/pointwise.where takes five passes and a mask conversion, and numpy's maximum(x, 0)
runs at a quarter of memory speed. Built without -ffast-math (setup.py): relu tests for NaN."""
import numpy as np

cimport numpy as cnp
from cython.parallel cimport prange
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t

from tensorlib._C.dtypes cimport BOOL, FLOAT32, FLOAT64
from tensorlib._C.memory_format cimport is_channels_last
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
    """o = c ? a : b on the bits; a and b either full arrays or one broadcast value. One
    thread runs outside any parallel region: entering one, even of one thread (prange's
    use_threads_if too), took 0.6 us, six times a 4-element select."""
    cdef Py_ssize_t i
    cdef bits av = a[0], bv = b[0]
    if nt == 1:
        for i in range(n):
            o[i] = (a[i] if a_full else av) if c[i] else (b[i] if b_full else bv)
        return
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
    cdef int nt = fastreduce.threads_now() if n >= PARALLEL_MIN else 1
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
    if nt == 1:                  # see _where
        for i in range(n):
            v = x[i]
            o[i] = v if (v > 0) | (v != v) else 0
        return
    for i in prange(n, num_threads=nt, schedule="static"):
        v = x[i]
        o[i] = v if (v > 0) | (v != v) else 0


cdef inline bint _dense_alike(TensorImpl a, TensorImpl b):
    """a and b hold their elements in the same dense order (both contiguous, or both
    channels-last with one set of strides), so one flat loop pairs them."""
    if a._sizes != b._sizes:
        return False
    if is_contiguous(a) and is_contiguous(b):
        return True
    return a._strides == b._strides and len(a._sizes) in (4, 5) and is_channels_last(a)


cdef inline int _real_kind(TensorImpl t):
    """1 float32, 2 float64, 0 another dtype."""
    return 1 if t._dtype.code == FLOAT32 else 2 if t._dtype.code == FLOAT64 else 0


def relu(TensorImpl out, TensorImpl x):
    """out = max(x, 0) with NaN kept, any dtype and layout (out has x's sizes): one C loop
    for float32/float64 in one dense order (contiguous, channels-last), read straight from
    the storage (no array objects: a 4-element relu is mostly call overhead); numpy for the
    rest. Returns True."""
    cdef int kind = _real_kind(x)
    cdef Py_ssize_t n
    cdef int nt
    cdef void* xp
    cdef void* op
    if kind != 0 and out._dtype is x._dtype and _dense_alike(out, x):
        n = numel(x._sizes)
        nt = fastreduce.threads_now() if n >= PARALLEL_MIN else 1
        xp = _data(x)
        op = _data(out)
        with nogil:
            if kind == 1:
                _relu[float](<float*>xp, <float*>op, n, nt)
            else:
                _relu[double](<double*>xp, <double*>op, n, nt)
        return True
    cdef cnp.ndarray o = host_array(out), xv = host_array(x)
    keep = (xv > 0) | np.isnan(xv) if xv.dtype.kind in "fc" else xv > 0
    np.copyto(o, np.where(keep, xv, 0), casting="unsafe")
    return True


cdef void _relu_backward(const real* g, bint g_full, const real* y, real* o, Py_ssize_t n,
                         int nt) noexcept nogil:
    """o = y <= 0 ? 0 : g, g a full array or one broadcast value (a sum's gradient)."""
    cdef Py_ssize_t i
    cdef real gv = g[0]
    if nt == 1:                  # see _where
        if g_full:
            for i in range(n):
                o[i] = 0 if y[i] <= 0 else g[i]
        else:
            for i in range(n):
                o[i] = 0 if y[i] <= 0 else gv
        return
    if g_full:
        for i in prange(n, num_threads=nt, schedule="static"):
            o[i] = 0 if y[i] <= 0 else g[i]
    else:
        for i in prange(n, num_threads=nt, schedule="static"):
            o[i] = 0 if y[i] <= 0 else gv


def relu_backward(TensorImpl out, TensorImpl grad, TensorImpl y):
    """out = 0 where relu's output y <= 0, else grad (torch's threshold_backward: a NaN
    output passes its gradient). One pass for float32/float64 operands of one shape in one
    dense order, straight from the storage, grad also as one broadcast value (`y.sum()`'s
    gradient, an expanded scalar: numpy's where took 4.0 ms for 1M floats of it against
    0.09 for the loop); numpy for every other layout."""
    cdef int kind = _real_kind(out)
    cdef Py_ssize_t n
    cdef int nt
    cdef bint g_full
    cdef void* gp
    cdef void* yp
    cdef void* op
    if (kind != 0 and grad._dtype is out._dtype and y._dtype is out._dtype
            and grad._sizes == out._sizes and _dense_alike(out, y)):
        g_full = _dense_alike(out, grad)
        if g_full or _layout(grad, out._sizes) == 0:
            n = numel(out._sizes)
            if n == 0:
                return
            nt = fastreduce.threads_now() if n >= PARALLEL_MIN else 1
            gp = _data(grad)
            yp = _data(y)
            op = _data(out)
            with nogil:
                if kind == 1:
                    _relu_backward[float](<float*>gp, g_full, <float*>yp, <float*>op, n, nt)
                else:
                    _relu_backward[double](<double*>gp, g_full, <double*>yp, <double*>op, n,
                                           nt)
            return
    cdef cnp.ndarray o = host_array(out), gv = host_array(grad), yv = host_array(y)
    np.copyto(o, np.where(yv <= 0, 0, gv), casting="unsafe")


KERNELS = {"relu": relu, "relu_backward": relu_backward}
