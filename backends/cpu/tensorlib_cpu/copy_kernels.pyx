# cython: boundscheck=False, wraparound=False, cdivision=True
"""cat and stack as one kernel each, and small same-dtype copies: C loops over any strides,
rows by memcpy. As a copy primitive per input, a cat of four small pieces paid four numpy
views of the slices and four np.copyto calls, several times its memory traffic; a small
copy's numpy views and np.copyto cost ~2 us before the first byte moves."""
import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

from tensorlib._C.tensor_impl cimport TensorImpl, host_array, wrap

cnp.import_array()

DEF MAXD = 64

ctypedef struct pair64:
    uint64_t lo, hi

ctypedef fused item:
    uint8_t
    uint16_t
    uint32_t
    uint64_t
    pair64


cdef inline char* _data(TensorImpl t):
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>t._storage.handle) + \
        t._offset * t._dtype.itemsize


cdef void _rows(const item* s, item* d, Py_ssize_t n, Py_ssize_t ss, Py_ssize_t ds) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(n):
        d[j * ds] = s[j * ss]


cdef void _copy(int nd, const Py_ssize_t* shape, char* src, const Py_ssize_t* ss,
                char* dst, const Py_ssize_t* ds, int size) noexcept nogil:
    """dst = src elementwise over `shape`; strides in bytes."""
    cdef Py_ssize_t pos[MAXD]
    cdef Py_ssize_t o, outer = 1, so = 0, do = 0
    cdef int last = nd - 1, d
    cdef Py_ssize_t inner = shape[last], si = ss[last], di = ds[last]
    for d in range(last):
        outer *= shape[d]
        pos[d] = 0
    cdef bint rows = si == size and di == size
    for o in range(outer):
        if rows:
            memcpy(dst + do, src + so, inner * size)
        elif size == 1:
            _rows[uint8_t](<uint8_t*>(src + so), <uint8_t*>(dst + do), inner, si, di)
        elif size == 2:
            _rows[uint16_t](<uint16_t*>(src + so), <uint16_t*>(dst + do), inner, si // 2, di // 2)
        elif size == 4:
            _rows[uint32_t](<uint32_t*>(src + so), <uint32_t*>(dst + do), inner, si // 4, di // 4)
        elif size == 8:
            _rows[uint64_t](<uint64_t*>(src + so), <uint64_t*>(dst + do), inner, si // 8, di // 8)
        else:
            _rows[pair64](<pair64*>(src + so), <pair64*>(dst + do), inner, si // 16, di // 16)
        d = last - 1
        while d >= 0:
            pos[d] += 1
            so += ss[d]
            do += ds[d]
            if pos[d] < shape[d]:
                break
            so -= ss[d] * shape[d]
            do -= ds[d] * shape[d]
            pos[d] = 0
            d -= 1


cdef int _coalesce(int nd, Py_ssize_t* shape, Py_ssize_t* ss, Py_ssize_t* ds) noexcept nogil:
    """Merge dims that both sides step through as one (row-major runs) and drop size-1 dims,
    in place; returns the new number of dims (at least 1). A cat along dim 0 of contiguous
    pieces becomes one memcpy per piece instead of one per row."""
    cdef int d, k = 0
    for d in range(nd):
        if shape[d] == 1 and nd > 1:
            continue
        if k > 0 and ss[k - 1] == ss[d] * shape[d] and ds[k - 1] == ds[d] * shape[d]:
            shape[k - 1] *= shape[d]
            ss[k - 1], ds[k - 1] = ss[d], ds[d]
            continue
        shape[k], ss[k], ds[k] = shape[d], ss[d], ds[d]
        k += 1
    if k == 0:
        shape[0], k = 1, 1
    return k


cdef void _place(TensorImpl out, TensorImpl t, int dim, Py_ssize_t start, bint stacked) except *:
    """Copy t into out at offset `start` along dim. t has out's sizes but along dim (cat), or
    out's sizes without dim (stack: t counts as size 1 there). Another dtype than out's, or
    memory numpy does not own, is converted by numpy."""
    cdef int nd = len(out._sizes), d, k, size = out._dtype.itemsize
    cdef Py_ssize_t shape[MAXD]
    cdef Py_ssize_t ss[MAXD]
    cdef Py_ssize_t ds[MAXD]
    cdef Py_ssize_t count = 1
    if len(t._sizes) != nd - stacked:
        raise ValueError(f"{'stack' if stacked else 'cat'}: an input of {len(t._sizes)} dims "
                         f"for a {nd}-dim output")
    for d in range(nd):
        ds[d] = <Py_ssize_t>out._strides[d] * size
        if stacked and d == dim:
            shape[d], ss[d] = 1, 0
            continue
        k = d - 1 if stacked and d > dim else d
        shape[d] = t._sizes[k]
        ss[d] = <Py_ssize_t>t._strides[k] * size
        count *= shape[d]
    if not count:
        return
    cdef char* dst = _data(out) + start * ds[dim]
    cdef char* src
    if t._dtype is out._dtype and type(t._storage.handle) is np.ndarray:
        src = _data(t)
        with nogil:
            _copy(_coalesce(nd, shape, ss, ds), shape, src, ss, dst, ds, size)
        return
    sizes = tuple([shape[d] for d in range(nd)])
    part = wrap(out._storage, sizes, out._strides,
                out._offset + start * <Py_ssize_t>out._strides[dim], out._dtype)
    np.copyto(host_array(part), host_array(t).reshape(sizes), casting="unsafe")


def cat(TensorImpl out, list tensors, int dim):
    """out = tensors joined along dim. Each has out's shape but along dim, where their sizes
    add up to out's; a legacy empty (0,) tensor is skipped."""
    cdef int nd = len(out._sizes)
    if nd == 0 or nd > MAXD:
        raise ValueError(f"cat: a {nd}-dim output")
    cdef Py_ssize_t start = 0
    cdef TensorImpl t
    for obj in tensors:
        t = <TensorImpl>obj
        if t._sizes == (0,):
            continue
        _place(out, t, dim, start, False)
        start += t._sizes[dim]


def stack(TensorImpl out, list tensors, int dim):
    """out = tensors joined along a new dim: each has out's shape without dim, and out's size
    there is their number (no unsqueezed view per input)."""
    cdef int nd = len(out._sizes)
    if nd == 0 or nd > MAXD:
        raise ValueError(f"stack: a {nd}-dim output")
    cdef Py_ssize_t i
    for i in range(len(tensors)):
        _place(out, <TensorImpl>tensors[i], dim, i, True)


cdef Py_ssize_t SMALL_COPY = 1 << 16     # elements: above, numpy's copy loops are as good


cdef bint _disjoint(int nd, const Py_ssize_t* shape, char* a, const Py_ssize_t* sa, char* b,
                    const Py_ssize_t* sb, int size) noexcept nogil:
    """The byte ranges two strided tensors span do not meet (numpy copies overlaps)."""
    cdef char* alo = a
    cdef char* ahi = a + size
    cdef char* blo = b
    cdef char* bhi = b + size
    cdef int d
    for d in range(nd):
        if sa[d] < 0: alo += sa[d] * (shape[d] - 1)
        else: ahi += sa[d] * (shape[d] - 1)
        if sb[d] < 0: blo += sb[d] * (shape[d] - 1)
        else: bhi += sb[d] * (shape[d] - 1)
    return ahi <= blo or bhi <= alo


cdef bint _copy_tensor(TensorImpl out, TensorImpl src):
    """The C copy for same-dtype, non-overlapping host tensors of one shape; False if not."""
    cdef int nd = len(out._sizes), d, size = out._dtype.itemsize
    if (src._dtype is not out._dtype or nd > MAXD or src._sizes != out._sizes
            or type(src._storage.handle) is not np.ndarray):
        return False
    cdef Py_ssize_t shape[MAXD]
    cdef Py_ssize_t ss[MAXD]
    cdef Py_ssize_t ds[MAXD]
    cdef Py_ssize_t count = 1
    if nd == 0:                             # one element
        nd = 1
        shape[0] = 1
        ss[0] = ds[0] = size
    for d in range(len(out._sizes)):
        shape[d] = out._sizes[d]
        count *= shape[d]
        ss[d] = <Py_ssize_t>src._strides[d] * size
        ds[d] = <Py_ssize_t>out._strides[d] * size
    if count > SMALL_COPY:
        return False
    if count == 0:
        return True
    cdef char* sp = _data(src)
    cdef char* dp = _data(out)
    if not _disjoint(nd, shape, sp, ss, dp, ds, size):
        return False
    with nogil:
        _copy(_coalesce(nd, shape, ss, ds), shape, sp, ss, dp, ds, size)
    return True


def copy(TensorImpl out, TensorImpl src):
    """out = src (same shape), converting src's dtype to out's."""
    if not _copy_tensor(out, src):
        np.copyto(host_array(out), host_array(src), casting="unsafe")


KERNELS = {"cat": cat, "stack": stack}
