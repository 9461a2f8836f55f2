# cython: boundscheck=False, wraparound=False, cdivision=True
"""gather, scatter_add and index_select along a dim, for any strides, as C loops that check
each index as they read it (the kernels' `checks_bounds`, see
tensorlib/backends/interface.py). Checked in the op instead, one small gather costs four
extra ops and a host read; through numpy, np.indices and fancy indexing cost 10-20 us more
than the loop. index_select copies whole inner blocks (memcpy where contiguous) on the
backend's threads: numpy's take of 512 of 1024 float rows took 5x PyTorch's time. A
scatter_add whose index varies along dim only (index_add's, index_select's gradient) adds
whole runs, vectorised, on threads split by element. Built without -ffast-math (setup.py):
scatter_add adds each value as numpy's add.at does, -0.0 and NaN included."""
import numpy as np

cimport numpy as cnp
from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

from tensorlib._C.dtypes cimport FLOAT32, FLOAT64, INT32, INT64
from tensorlib._C.tensor_impl cimport TensorImpl, host_array
from tensorlib.backends.interface import IndexOutOfBounds

from tensorlib_cpu import fastreduce

cnp.import_array()

DEF MAXD = 64

ctypedef struct pair64:         # a 16-byte element (complex128) moved as two words
    uint64_t lo, hi

ctypedef fused item:            # gather moves elements by their size
    uint8_t
    uint16_t
    uint32_t
    uint64_t
    pair64

ctypedef fused number:          # scatter_add adds in the element's own type
    float
    double
    int32_t
    int64_t

cdef struct walk:
    # An odometer over index's shape: dims 0..nd-2 outer, the last one inner. i: index,
    # p: the operand at index's positions (gather's out, scatter_add's src), q: the operand
    # addressed along dim by the index value (gather's x, scatter_add's out), its stride
    # along dim moved to qdim. Strides in elements.
    int nd
    Py_ssize_t shape[MAXD]
    Py_ssize_t istr[MAXD]
    Py_ssize_t pstr[MAXD]
    Py_ssize_t qstr[MAXD]
    Py_ssize_t qdim, size


cdef inline char* _data(TensorImpl t):
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>t._storage.handle) + \
        t._offset * t._dtype.itemsize


cdef bint _host(TensorImpl t):
    return type(t._storage.handle) is np.ndarray


cdef int _plan(walk* w, TensorImpl index, TensorImpl p, TensorImpl q, int dim) except -1:
    cdef int d, nd = len(index._sizes)
    if nd > MAXD or nd == 0 or len(p._sizes) != nd or len(q._sizes) != nd:
        raise ValueError(f"index_kernels: a {nd}-dim index for {len(q._sizes)}-dim tensors")
    if index._dtype.code != INT64 or p._dtype is not q._dtype:
        raise TypeError(f"index_kernels: index must be int64 ({index._dtype.name}) and both "
                        f"tensors one dtype ({p._dtype.name}, {q._dtype.name})")
    w.nd = nd
    for d in range(nd):
        w.shape[d] = index._sizes[d]
        w.istr[d] = index._strides[d]
        w.pstr[d] = p._strides[d]
        w.qstr[d] = 0 if d == dim else q._strides[d]
    w.qdim = q._strides[dim]
    w.size = q._sizes[dim]
    return 0


cdef Py_ssize_t _numel(walk* w) nogil:
    cdef Py_ssize_t n = 1
    cdef int d
    for d in range(w.nd):
        n *= w.shape[d]
    return n


cdef bint _first_bad(walk* w, const int64_t* ip, int64_t* bad) noexcept nogil:
    """The first index outside [0, size) in row-major order of the index, if any."""
    cdef Py_ssize_t pos[MAXD]
    cdef Py_ssize_t o, j, io = 0, inner = w.shape[w.nd - 1], step = w.istr[w.nd - 1]
    cdef Py_ssize_t outer = _numel(w) // inner if inner else 0
    cdef int64_t v
    cdef uint64_t size = <uint64_t>w.size
    cdef int d
    for d in range(w.nd):
        pos[d] = 0
    for o in range(outer):
        for j in range(inner):
            v = ip[io + j * step]
            if <uint64_t>v >= size:          # negative values wrap to huge
                bad[0] = v
                return True
        d = w.nd - 2
        while d >= 0:
            pos[d] += 1
            io += w.istr[d]
            if pos[d] < w.shape[d]:
                break
            io -= w.istr[d] * w.shape[d]
            pos[d] = 0
            d -= 1
    return False


cdef inline void _advance(walk* w, Py_ssize_t* pos, Py_ssize_t* io, Py_ssize_t* po,
                          Py_ssize_t* qo) noexcept nogil:
    """Step the outer dims' odometer (every dim but the last) by one, moving the index,
    output/source and self offsets along."""
    cdef int d = w.nd - 2
    while d >= 0:
        pos[d] += 1
        io[0] += w.istr[d]; po[0] += w.pstr[d]; qo[0] += w.qstr[d]
        if pos[d] < w.shape[d]:
            return
        io[0] -= w.istr[d] * w.shape[d]; po[0] -= w.pstr[d] * w.shape[d]
        qo[0] -= w.qstr[d] * w.shape[d]
        pos[d] = 0
        d -= 1


cdef void _gather(walk* w, const int64_t* ip, const item* xp, item* op) noexcept nogil:
    cdef Py_ssize_t pos[MAXD]
    cdef int last = w.nd - 1, d
    cdef Py_ssize_t o, j, io = 0, po = 0, qo = 0, inner = w.shape[last]
    cdef Py_ssize_t outer = _numel(w) // inner if inner else 0
    cdef Py_ssize_t si = w.istr[last], sp = w.pstr[last], sq = w.qstr[last], qd = w.qdim
    for d in range(w.nd):
        pos[d] = 0
    for o in range(outer):
        for j in range(inner):
            op[po + j * sp] = xp[qo + j * sq + ip[io + j * si] * qd]
        _advance(w, pos, &io, &po, &qo)


cdef void _scatter_add(walk* w, const int64_t* ip, const number* sp_, number* op) noexcept nogil:
    cdef Py_ssize_t pos[MAXD]
    cdef int last = w.nd - 1, d
    cdef Py_ssize_t o, j, io = 0, po = 0, qo = 0, inner = w.shape[last]
    cdef Py_ssize_t outer = _numel(w) // inner if inner else 0
    cdef Py_ssize_t si = w.istr[last], sp = w.pstr[last], sq = w.qstr[last], qd = w.qdim
    cdef Py_ssize_t t
    for d in range(w.nd):
        pos[d] = 0
    for o in range(outer):
        for j in range(inner):
            t = qo + j * sq + ip[io + j * si] * qd
            if number is int64_t or number is int32_t:     # wraps around, as numpy's add
                op[t] = <number>(<uint64_t>op[t] + <uint64_t>sp_[po + j * sp])
            else:
                op[t] = op[t] + sp_[po + j * sp]
        _advance(w, pos, &io, &po, &qo)


cdef struct blocks:
    # scatter_add with an index that varies along dim only (index_add's, expanded): per outer
    # position and index entry j, src's inner run added to out's run at index[j]. Elements.
    int nd
    Py_ssize_t shape[MAXD]
    Py_ssize_t pstr[MAXD]
    Py_ssize_t qstr[MAXD]
    Py_ssize_t outer, count, istep, pdim, qdim, inner, pin, qin


cdef bint _block_plan(blocks* b, walk* w, int dim):
    """False unless index is constant but along dim and the inner dims (after dim) are one
    strided run in both src and out, of more than one element (single elements: the
    elementwise loop is faster)."""
    cdef int d
    for d in range(w.nd):
        if d != dim and w.shape[d] > 1 and w.istr[d] != 0:
            return False
    b.inner, b.pin, b.qin = 1, 0, 0
    for d in range(w.nd - 1, dim, -1):
        if w.shape[d] == 1:
            continue
        if b.inner == 1:
            b.pin, b.qin = w.pstr[d], w.qstr[d]
        elif w.pstr[d] != b.pin * b.inner or w.qstr[d] != b.qin * b.inner:
            return False
        b.inner *= w.shape[d]
    if b.inner == 1:
        return False
    b.nd, b.outer = dim, 1
    for d in range(dim):
        b.shape[d], b.pstr[d], b.qstr[d] = w.shape[d], w.pstr[d], w.qstr[d]
        b.outer *= w.shape[d]
    b.count, b.istep, b.pdim, b.qdim = w.shape[dim], w.istr[dim], w.pstr[dim], w.qdim
    return True


cdef void _add_blocks(blocks* b, const int64_t* ip, const number* sp_, number* op,
                      Py_ssize_t o0, Py_ssize_t o1, Py_ssize_t e0, Py_ssize_t e1) noexcept nogil:
    """Outer positions [o0, o1), inner elements [e0, e1): for each j in order, out's run at
    index[j] += src's run j (every element gets its additions in index order)."""
    cdef Py_ssize_t o, j, e, rest, po, qo
    cdef number* q
    cdef const number* p
    cdef int d
    for o in range(o0, o1):
        rest, po, qo = o, 0, 0
        for d in range(b.nd - 1, -1, -1):
            po += rest % b.shape[d] * b.pstr[d]
            qo += rest % b.shape[d] * b.qstr[d]
            rest //= b.shape[d]
        for j in range(b.count):
            p = sp_ + po + j * b.pdim
            q = op + qo + ip[j * b.istep] * b.qdim
            if number is int64_t or number is int32_t:          # wraps, as numpy's add
                for e in range(e0, e1):
                    q[e * b.qin] = <number>(<uint64_t>q[e * b.qin] + <uint64_t>p[e * b.pin])
            elif b.qin == 1 and b.pin == 1:
                for e in range(e0, e1):
                    q[e] = q[e] + p[e]
            elif b.qin == 1 and b.pin == 0:                     # a broadcast src (sum's grad)
                for e in range(e0, e1):
                    q[e] = q[e] + p[0]
            else:
                for e in range(e0, e1):
                    q[e * b.qin] = q[e * b.qin] + p[e * b.pin]


cdef void _scatter_blocks(blocks* b, const int64_t* ip, const number* sp_, number* op,
                          int nt) noexcept nogil:
    """The block adds shared out over threads by inner elements (or outer positions): each
    element stays with one thread, so the order of its additions does not change."""
    cdef Py_ssize_t per
    cdef int t
    if nt > 1 and b.inner >= 64 * nt:
        per = (b.inner + nt - 1) // nt
        for t in prange(nt, num_threads=nt, schedule="static"):
            _add_blocks(b, ip, sp_, op, 0, b.outer, t * per,
                        b.inner if (t + 1) * per > b.inner else (t + 1) * per)
    elif nt > 1 and b.outer >= nt:
        per = (b.outer + nt - 1) // nt
        for t in prange(nt, num_threads=nt, schedule="static"):
            _add_blocks(b, ip, sp_, op, t * per,
                        b.outer if (t + 1) * per > b.outer else (t + 1) * per, 0, b.inner)
    else:
        _add_blocks(b, ip, sp_, op, 0, b.outer, 0, b.inner)


cdef int _check(walk* w, TensorImpl index, int dim) except -1:
    cdef int64_t bad = 0
    cdef bint found
    cdef const int64_t* ip = <const int64_t*>_data(index)
    with nogil:
        found = _first_bad(w, ip, &bad)
    if found:
        raise IndexOutOfBounds(f"index {bad} is out of bounds for dimension {dim} with size "
                               f"{w.size}")
    return 0


def check_index(TensorImpl index, Py_ssize_t size, int dim):
    """IndexOutOfBounds naming the first int64 index outside [0, size), as the ops word it."""
    cdef walk w
    if index._dtype.code != INT64 or not _host(index):
        raise TypeError("check_index takes an int64 host tensor")
    if len(index._sizes) == 0:
        index = index.view((1,))
    w.nd = len(index._sizes)
    if w.nd > MAXD:
        raise ValueError(f"index_kernels: {w.nd}-dim index")
    for d in range(w.nd):
        w.shape[d] = index._sizes[d]
        w.istr[d] = index._strides[d]
    w.size = size
    if _numel(&w):
        _check(&w, index, dim)


def gather(TensorImpl out, TensorImpl x, int dim, TensorImpl index):
    """out = x gathered along dim at index (out has index's shape); checks every index."""
    cdef walk w
    _plan(&w, index, out, x, dim)
    if not _numel(&w):
        return
    _check(&w, index, dim)
    cdef const int64_t* ip = <const int64_t*>_data(index)
    cdef char* xp = _data(x)
    cdef char* op = _data(out)
    cdef int size = x._dtype.itemsize
    with nogil:
        if size == 1:
            _gather[uint8_t](&w, ip, <uint8_t*>xp, <uint8_t*>op)
        elif size == 2:
            _gather[uint16_t](&w, ip, <uint16_t*>xp, <uint16_t*>op)
        elif size == 4:
            _gather[uint32_t](&w, ip, <uint32_t*>xp, <uint32_t*>op)
        elif size == 8:
            _gather[uint64_t](&w, ip, <uint64_t*>xp, <uint64_t*>op)
        else:
            _gather[pair64](&w, ip, <pair64*>xp, <pair64*>op)


def scatter_add(TensorImpl out, int dim, TensorImpl index, TensorImpl src):
    """out[..index..] += src along dim, in row-major order of index; checks every index
    before adding anything. False: out's dtype is not one the loop adds (the caller adds)."""
    cdef walk w
    _plan(&w, index, src, out, dim)
    if not _numel(&w):
        return True
    _check(&w, index, dim)
    cdef int code = out._dtype.code
    if code != FLOAT32 and code != FLOAT64 and code != INT32 and code != INT64:
        return False
    cdef const int64_t* ip = <const int64_t*>_data(index)
    cdef char* sp = _data(src)
    cdef char* op = _data(out)
    cdef blocks b
    cdef int nt
    if _block_plan(&b, &w, dim):
        nt = fastreduce.threads_now() if _numel(&w) >= (1 << 16) else 1
        with nogil:
            if code == FLOAT32:
                _scatter_blocks[float](&b, ip, <float*>sp, <float*>op, nt)
            elif code == FLOAT64:
                _scatter_blocks[double](&b, ip, <double*>sp, <double*>op, nt)
            elif code == INT32:
                _scatter_blocks[int32_t](&b, ip, <int32_t*>sp, <int32_t*>op, nt)
            else:
                _scatter_blocks[int64_t](&b, ip, <int64_t*>sp, <int64_t*>op, nt)
        return True
    with nogil:
        if code == FLOAT32:
            _scatter_add[float](&w, ip, <float*>sp, <float*>op)
        elif code == FLOAT64:
            _scatter_add[double](&w, ip, <double*>sp, <double*>op)
        elif code == INT32:
            _scatter_add[int32_t](&w, ip, <int32_t*>sp, <int32_t*>op)
        else:
            _scatter_add[int64_t](&w, ip, <int64_t*>sp, <int64_t*>op)
    return True


cdef struct selection:
    # index_select's copy: out (outer, count, inner) row-major; x's outer dims (odometer),
    # its stride along dim and its inner block (one run of `inner` items `xin` apart).
    int nd
    Py_ssize_t shape[MAXD]
    Py_ssize_t xstr[MAXD]
    Py_ssize_t outer, count, inner, xdim, xin, size


cdef void _select_items(const item* x, Py_ssize_t xdim, const int64_t* ip, Py_ssize_t istep,
                        item* out, Py_ssize_t n) noexcept nogil:
    """out[j] = x[index[j] * xdim]: one outer row of a selection along the last dim."""
    cdef Py_ssize_t j
    for j in range(n):
        out[j] = x[ip[j * istep] * xdim]


cdef void _select_rows(selection* s, const int64_t* ip, Py_ssize_t istep, const char* xp,
                       char* op, Py_ssize_t first, Py_ssize_t stop) noexcept nogil:
    """out rows [first, stop) of (outer * count): each x's inner block at index[j]."""
    cdef Py_ssize_t u = first, o, j, j0, j1, rest, xo, e, nbytes = s.inner * s.size
    cdef int d
    cdef const char* base
    cdef const char* src
    cdef char* dst
    while u < stop:
        o = u // s.count
        j0 = u - o * s.count
        j1 = s.count if s.count - j0 < stop - u else j0 + stop - u
        rest, xo = o, 0
        for d in range(s.nd - 1, -1, -1):
            xo += rest % s.shape[d] * s.xstr[d]
            rest //= s.shape[d]
        base = xp + xo * s.size
        dst = op + u * nbytes
        u += j1 - j0
        if s.inner == 1 and s.size <= 16:
            if s.size == 1:
                _select_items[uint8_t](<const uint8_t*>base, s.xdim, ip + j0 * istep, istep,
                                       <uint8_t*>dst, j1 - j0)
            elif s.size == 2:
                _select_items[uint16_t](<const uint16_t*>base, s.xdim, ip + j0 * istep, istep,
                                        <uint16_t*>dst, j1 - j0)
            elif s.size == 4:
                _select_items[uint32_t](<const uint32_t*>base, s.xdim, ip + j0 * istep, istep,
                                        <uint32_t*>dst, j1 - j0)
            elif s.size == 8:
                _select_items[uint64_t](<const uint64_t*>base, s.xdim, ip + j0 * istep, istep,
                                        <uint64_t*>dst, j1 - j0)
            else:
                _select_items[pair64](<const pair64*>base, s.xdim, ip + j0 * istep, istep,
                                      <pair64*>dst, j1 - j0)
            continue
        for j in range(j0, j1):
            src = base + ip[j * istep] * s.xdim * s.size
            if s.xin == 1:
                memcpy(dst, src, nbytes)
            else:
                for e in range(s.inner):
                    memcpy(dst + e * s.size, src + e * s.xin * s.size, s.size)
            dst += nbytes


cdef bint _select_plan(selection* s, TensorImpl out, TensorImpl x, int dim, TensorImpl index):
    """False when out is not contiguous or x's dims after dim are not one strided run."""
    cdef int nd = len(x._sizes), d
    cdef Py_ssize_t expect
    if (nd == 0 or nd > MAXD or not _host(x) or not _host(out) or out._dtype is not x._dtype
            or len(index._sizes) != 1):
        return False
    expect = 1
    for d in range(nd - 1, -1, -1):
        if out._sizes[d] != 1 and out._strides[d] != expect:
            return False
        expect *= out._sizes[d]
    s.inner, s.xin = 1, 1
    for d in range(nd - 1, dim, -1):            # x's inner dims: one run of equal steps
        if x._sizes[d] == 1:
            continue
        if s.inner == 1:
            s.xin = x._strides[d]
        elif x._strides[d] != s.xin * s.inner:
            return False
        s.inner *= x._sizes[d]
    s.nd, s.outer = dim, 1
    for d in range(dim):
        s.shape[d], s.xstr[d] = x._sizes[d], x._strides[d]
        s.outer *= x._sizes[d]
    s.count, s.xdim, s.size = index._sizes[0], x._strides[dim], x._dtype.itemsize
    return True


def index_select(TensorImpl out, TensorImpl x, int dim, TensorImpl index):
    """out = x at the 1-D int64 index along dim (out contiguous, x any strides); checks every
    index first. False (nothing written, indices checked) where numpy is to copy."""
    check_index(index, x._sizes[dim] if x._sizes else 1, dim)
    cdef selection s
    if not _select_plan(&s, out, x, dim, index):
        return False
    cdef Py_ssize_t units = s.outer * s.count, per
    cdef int nt = fastreduce.threads_now() if units * s.inner >= (1 << 16) and units > 1 else 1
    cdef const int64_t* ip = <const int64_t*>_data(index)
    cdef Py_ssize_t istep = index._strides[0]
    cdef const char* xp = _data(x)
    cdef char* op = _data(out)
    cdef int t
    if nt == 1:
        with nogil:
            _select_rows(&s, ip, istep, xp, op, 0, units)
        return True
    per = (units + nt - 1) // nt
    for t in prange(nt, nogil=True, num_threads=nt, schedule="static"):
        _select_rows(&s, ip, istep, xp, op, t * per,
                     units if (t + 1) * per > units else (t + 1) * per)
    return True
