# cython: boundscheck=False, wraparound=False, cdivision=True
"""add/sub/mul/div of float32/float64 tensors as one C loop: a numpy ufunc call costs ~0.6 us
before its first element (argument parsing, the error-state context, an array object for the
output), more than a + b on 4 elements takes. From SMALL_MAX elements on, contiguous operands
(or broadcast values) are split over the OpenMP team in shares aligned to SHARE_ALIGN
elements: numpy's own loop, which ufunc_threads runs there otherwise, took twice this loop's
time at 64K float32 elements on the Intel Xeon (22.9 against 10.9 us at 65535, thread CPU
time; 600 against PyTorch's 554 us at 1M). Built without
-ffast-math (setup.py): each element rounds as numpy's (and torch's) ufunc does, NaN and inf
included, and a float division by zero gives inf without a warning, as in torch."""
import numpy as np

cimport numpy as cnp
from cython.parallel cimport prange

from tensorlib._C.dtypes cimport FLOAT32, FLOAT64
from tensorlib._C.tensor_impl cimport TensorImpl, is_contiguous

from tensorlib_cpu import fastreduce

cnp.import_array()

cdef Py_ssize_t SMALL_MAX = 1 << 16      # from here on the loop is split over threads
cdef Py_ssize_t SHARE_ALIGN = 1024       # thread shares start on 4 KiB (float32) boundaries

cdef enum:
    NONE = 0
    ADD = 1
    SUB = 2
    MUL = 3
    DIV = 4

ctypedef fused real:
    float
    double


def op_code(ufunc):
    """The loop a ufunc maps to here (0: none)."""
    return {np.add: ADD, np.subtract: SUB, np.multiply: MUL, np.true_divide: DIV}.get(ufunc,
                                                                                    NONE)


cdef inline char* _data(TensorImpl t):
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>t._storage.handle) + \
        t._offset * t._dtype.itemsize


cdef int _layout(TensorImpl t, tuple sizes):
    """1: contiguous with out's sizes; 0: one value everywhere (0-dim or all strides 0, a
    broadcast Python scalar); 2: rows of a 2-D out's sizes, each contiguous, at any row
    stride (an LSTM's gates: column blocks of one matrix); -1: none of these."""
    if t._sizes == sizes and is_contiguous(t):
        return 1
    for s in t._strides:
        if s != 0:
            break
    else:
        return 0
    if len(sizes) == 2 and t._sizes == sizes and t._strides[1] == 1:
        return 2
    return -1


cdef void _loop(int op, const real* a, bint a_full, const real* b, bint b_full, real* o,
                Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef real av = a[0], bv = b[0]
    if a_full and b_full:
        if op == ADD:
            for i in range(n):
                o[i] = a[i] + b[i]
        elif op == SUB:
            for i in range(n):
                o[i] = a[i] - b[i]
        elif op == MUL:
            for i in range(n):
                o[i] = a[i] * b[i]
        else:
            for i in range(n):
                o[i] = a[i] / b[i]
    elif a_full:
        if op == ADD:
            for i in range(n):
                o[i] = a[i] + bv
        elif op == SUB:
            for i in range(n):
                o[i] = a[i] - bv
        elif op == MUL:
            for i in range(n):
                o[i] = a[i] * bv
        else:
            for i in range(n):
                o[i] = a[i] / bv
    elif b_full:
        if op == ADD:
            for i in range(n):
                o[i] = av + b[i]
        elif op == SUB:
            for i in range(n):
                o[i] = av - b[i]
        elif op == MUL:
            for i in range(n):
                o[i] = av * b[i]
        else:
            for i in range(n):
                o[i] = av / b[i]
    else:                               # two broadcast values: one result everywhere
        _loop(op, a, True, b, True, o, 1)
        for i in range(1, n):
            o[i] = o[0]


cdef void _split(int op, const real* a, bint a_full, const real* b, bint b_full, real* o,
                 Py_ssize_t n):
    """_loop over n elements, one share per thread of the team (threads_now)."""
    cdef int nt = fastreduce.threads_now()
    cdef Py_ssize_t share = (n + nt - 1) // nt
    share = (share + SHARE_ALIGN - 1) // SHARE_ALIGN * SHARE_ALIGN
    nt = <int>((n + share - 1) // share)
    cdef Py_ssize_t t, lo, hi
    for t in prange(nt, num_threads=nt, schedule="static", nogil=True):
        lo = t * share
        hi = min(lo + share, n)
        _loop(op, a + (lo if a_full else 0), a_full, b + (lo if b_full else 0), b_full,
              o + lo, hi - lo)


cpdef bint run(int op, TensorImpl out, TensorImpl a, TensorImpl b):
    """out = a op b; False (nothing written) unless out is contiguous float32/float64 and a,
    b have its dtype, each contiguous with its shape, a single broadcast value (read once,
    before the loop), or (below SMALL_MAX elements) a 2-D view of contiguous rows,
    overlapping out exactly or not at all."""
    if op == NONE or b is None:
        return False
    cdef int code = out._dtype.code
    if code != FLOAT32 and code != FLOAT64:
        return False
    if a._dtype is not out._dtype or b._dtype is not out._dtype or not is_contiguous(out):
        return False
    cdef tuple sizes = out._sizes
    cdef Py_ssize_t n = 1
    for s in sizes:
        n *= <Py_ssize_t>s
    if n == 0:
        return True
    cdef int la = _layout(a, sizes), lb = _layout(b, sizes)
    if la < 0 or lb < 0 or (n >= SMALL_MAX and (la == 2 or lb == 2)):
        return False
    cdef char* ap = _data(a)
    cdef char* bp = _data(b)
    cdef char* op_ = _data(out)
    if (a._storage is out._storage and la and (ap != op_ or la == 2)) or (
            b._storage is out._storage and lb and (bp != op_ or lb == 2)):
        return False                    # a partial overlap: numpy buffers it, a loop would not
    if n >= SMALL_MAX:
        if code == FLOAT32:
            _split(op, <float*>ap, la, <float*>bp, lb, <float*>op_, n)
        else:
            _split(op, <double*>ap, la, <double*>bp, lb, <double*>op_, n)
        return True
    if la != 2 and lb != 2:
        if code == FLOAT32:
            _loop(op, <float*>ap, la, <float*>bp, lb, <float*>op_, n)
        else:
            _loop(op, <double*>ap, la, <double*>bp, lb, <double*>op_, n)
        return True
    cdef Py_ssize_t rows = sizes[0], cols = sizes[1], r
    cdef Py_ssize_t sa = _row_stride(a, la, cols), sb = _row_stride(b, lb, cols)
    for r in range(rows):
        if code == FLOAT32:
            _loop(op, <float*>ap + r * sa, la != 0, <float*>bp + r * sb, lb != 0,
                  <float*>op_ + r * cols, cols)
        else:
            _loop(op, <double*>ap + r * sa, la != 0, <double*>bp + r * sb, lb != 0,
                  <double*>op_ + r * cols, cols)
    return True


cdef inline Py_ssize_t _row_stride(TensorImpl t, int layout, Py_ssize_t cols):
    """Elements from one row of t to the next in the row loop (0: a broadcast value)."""
    if layout == 2:
        return t._strides[0]
    return cols if layout == 1 else 0
