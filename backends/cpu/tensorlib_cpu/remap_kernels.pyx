# cython: boundscheck=False, wraparound=False, cdivision=True
"""Copies in which each output position reads one input position, found per dim: F.pad
(constant, reflect, replicate, circular; negative pads crop) and flip, in one pass that writes
each output element once. The composites they replace filled the whole padded output and then
copied the input into it (constant), or ran one index_select per dim (the other pads, flip):
0.25-0.4x PyTorch on 1M floats.

Per dim, a mode (keep, flip or a pad mode) maps output index i to the input index it reads, or
to none (the constant pad's fill value). The last dim's map is a few linear pieces (a fill, or
input positions stepping by +1, -1 or 0), so a row is a few short loops; the other dims give
each output row its input row's offset, or mark it all fill. Dims kept as they are and
adjacent in memory are merged first (a pad of the last two dims of N, C, H, W runs over N*C,
H, W). Rows (or, for fewer rows than threads, columns) are shared out over the backend's
OpenMP threads. Any input strides, any dtype (elements moved as 1-16 byte words).

pad_backward runs the same maps the other way for the reflect/replicate/circular pads' gradient
(an input element read by several outputs sums their gradients, in output order), float32 and
float64; the composite built a full index map and scatter-added through it (0.3x PyTorch)."""
import numpy as np

cimport numpy as cnp
from libc.stdint cimport int64_t

from libc.string cimport memcpy

from tensorlib._C.dtypes cimport FLOAT32, FLOAT64
from tensorlib._C.tensor_impl cimport TensorImpl, host_array, is_contiguous

from tensorlib_cpu import fastreduce

cnp.import_array()

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    typedef struct { uint64_t lo, hi; } rm_pair64;
    /* one run of a row: len elements, read from the row's byte offset off stepping by step
       elements (off < 0: the fill value) */
    typedef struct { int64_t len, off, step; } rm_run;
    #define RM_MAX_RUNS 8
    #define RM_DEFINE(T)                                                                   \\
    /* a short row's copy as an inline loop: memcpy's call costs more than 128 bytes */     \\
    static inline void rm_copy_##T(T* __restrict o, const T* __restrict s, Py_ssize_t n) { \\
        if (n * (Py_ssize_t)sizeof(T) > 512) { memcpy(o, s, n * sizeof(T)); return; }      \\
        for (Py_ssize_t j = 0; j < n; j++) o[j] = s[j];                                   \\
    }                                                                                     \\
    /* output rows [first, stop), of each only the columns [c0, c1); the runs clipped to  \\
       the columns and everything the loop reads held in locals first (the stores through \\
       T* may alias anything: Python's -fno-strict-aliasing), the rows walked along the    \\
       last leading dim with one base offset (1.5x on 34x34 rows against per-row indices) */ \\
    static void rm_rows_##T(const char* __restrict src, T* __restrict dst, int nl,        \\
                            const Py_ssize_t* shape_, const int64_t* __restrict offs,    \\
                            const Py_ssize_t* starts_, Py_ssize_t width,                 \\
                            const rm_run* runs_, Py_ssize_t nruns_, const T* fill,       \\
                            Py_ssize_t first, Py_ssize_t stop, Py_ssize_t c0, Py_ssize_t c1) { \\
        Py_ssize_t pos[64], shape[64], starts[64], rest = first, r, j, k, nruns = 0, at = 0; \\
        int64_t len[RM_MAX_RUNS], roff[RM_MAX_RUNS], rstep[RM_MAX_RUNS]; int d;            \\
        const T v = *fill;                                                                \\
        for (d = 0; d < nl; d++) { shape[d] = shape_[d]; starts[d] = starts_[d]; }         \\
        for (k = 0; k < nruns_; at += runs_[k].len, k++) {                                \\
            const Py_ssize_t a = at > c0 ? at : c0;                                       \\
            const Py_ssize_t b = at + runs_[k].len < c1 ? at + runs_[k].len : c1;         \\
            if (b <= a) continue;                                                         \\
            len[nruns] = b - a; rstep[nruns] = runs_[k].step;                             \\
            roff[nruns] = runs_[k].off < 0 ? -1                                           \\
                : runs_[k].off + (a - at) * runs_[k].step * (int64_t)sizeof(T);           \\
            nruns++;                                                                      \\
        }                                                                                 \\
        for (d = nl - 1; d >= 0; d--) { pos[d] = rest % shape[d]; rest /= shape[d]; }      \\
        for (r = first; r < stop; ) {                                                     \\
            /* the rows along the last leading dim from pos[nl - 1]: one base offset */    \\
            int64_t base = 0; const int inner = nl - 1;                                   \\
            for (d = 0; d < inner; d++) {                                                 \\
                const int64_t o = offs[starts[d] + pos[d]];                               \\
                if (o < 0) { base = -1; break; }                                          \\
                base += o;                                                                \\
            }                                                                             \\
            const Py_ssize_t h0 = pos[inner];                                             \\
            const Py_ssize_t h1 = h0 + (stop - r) < shape[inner]                          \\
                ? h0 + (stop - r) : shape[inner];                                         \\
            const int64_t* lo_ = offs + starts[inner];                                    \\
            for (Py_ssize_t h = h0; h < h1; h++, r++) {                                   \\
                const int64_t o = lo_[h];                                                 \\
                T* out = dst + r * width + c0;                                            \\
                if (base < 0 || o < 0) {                                                  \\
                    for (j = 0; j < c1 - c0; j++) out[j] = v;                             \\
                    continue;                                                             \\
                }                                                                         \\
                const char* row = src + base + o;                                         \\
                for (k = 0; k < nruns; k++) {                                             \\
                    const Py_ssize_t n = len[k], step = rstep[k];                         \\
                    if (roff[k] < 0) {                                                    \\
                        if (n == 1) out[0] = v; else for (j = 0; j < n; j++) out[j] = v;  \\
                    } else {                                                              \\
                        const T* s = (const T*)(row + roff[k]);                           \\
                        if (n == 1) out[0] = s[0];                                        \\
                        else if (step == 1) rm_copy_##T(out, s, n);                       \\
                        else if (step == -1) for (j = 0; j < n; j++) out[j] = s[-j];      \\
                        else if (step == 0)                                               \\
                            for (j = 0; j < n; j++) out[j] = s[0];                        \\
                        else for (j = 0; j < n; j++) out[j] = s[j * step];                \\
                    }                                                                     \\
                    out += n;                                                             \\
                }                                                                         \\
            }                                                                             \\
            pos[inner] = h1 == shape[inner] ? 0 : h1;                                     \\
            if (h1 == shape[inner])                                                       \\
                for (d = inner - 1; d >= 0; d--) {                                        \\
                    if (++pos[d] < shape[d]) break;                                       \\
                    pos[d] = 0;                                                           \\
                }                                                                         \\
        }                                                                                 \\
    }
    /* the adjoint, for gradients: gi[source of (r, col)] += g[r, col] over g's rows
       [first, stop) in order (a source read by several outputs adds them in output order);
       g contiguous, offsets and runs as rm_rows' but into gi */
    #define RM_DEFINE_ADJOINT(T)                                                           \\
    static void rm_adjoint_rows_##T(T* __restrict gi, const T* __restrict g, int nl,      \\
                                    const Py_ssize_t* shape, const int64_t* offs,         \\
                                    const Py_ssize_t* starts, Py_ssize_t width,           \\
                                    const rm_run* runs, Py_ssize_t nruns, Py_ssize_t first, \\
                                    Py_ssize_t stop) {                                    \\
        Py_ssize_t pos[64], rest = first, r, j, k; int d;                                 \\
        for (d = nl - 1; d >= 0; d--) { pos[d] = rest % shape[d]; rest /= shape[d]; }      \\
        for (r = first; r < stop; r++) {                                                  \\
            int64_t off = 0; const T* grow = g + r * width;                               \\
            for (d = 0; d < nl; d++) {                                                    \\
                const int64_t o = offs[starts[d] + pos[d]];                               \\
                if (o < 0) { off = -1; break; }                                           \\
                off += o;                                                                 \\
            }                                                                             \\
            if (off >= 0) {                                                               \\
                T* row = (T*)((char*)gi + off);                                           \\
                for (k = 0; k < nruns; k++) {                                             \\
                    const Py_ssize_t n = runs[k].len, step = runs[k].step;                \\
                    if (runs[k].off >= 0) {                                               \\
                        T* s = (T*)((char*)row + runs[k].off);                            \\
                        if (step == 1) for (j = 0; j < n; j++) s[j] += grow[j];           \\
                        else for (j = 0; j < n; j++) s[j * step] += grow[j];              \\
                    }                                                                     \\
                    grow += n;                                                            \\
                }                                                                         \\
            }                                                                             \\
            for (d = nl - 1; d >= 0; d--) {                                               \\
                if (++pos[d] < shape[d]) break;                                           \\
                pos[d] = 0;                                                               \\
            }                                                                             \\
        }                                                                                 \\
    }
    RM_DEFINE_ADJOINT(float)
    RM_DEFINE_ADJOINT(double)
    /* threads split the first dim when it is kept (its rows read disjoint gi rows) */
    static void rm_adjoint(int dbl, char* gi, const char* g, int nl, const Py_ssize_t* shape,
                           const int64_t* offs, const Py_ssize_t* starts, Py_ssize_t width,
                           const rm_run* runs, Py_ssize_t nruns, Py_ssize_t rows, int nt) {
        const Py_ssize_t per_first = rows / shape[0];
        const Py_ssize_t per = (shape[0] + nt - 1) / nt;
        int t;
        _Pragma("omp parallel for schedule(static) num_threads(nt) if (nt > 1)")
        for (t = 0; t < nt; t++) {
            const Py_ssize_t a = t * per, b = a + per < shape[0] ? a + per : shape[0];
            if (a >= b) continue;
            if (dbl) rm_adjoint_rows_double((double*)gi, (const double*)g, nl, shape, offs,
                                            starts, width, runs, nruns, a * per_first,
                                            b * per_first);
            else rm_adjoint_rows_float((float*)gi, (const float*)g, nl, shape, offs, starts,
                                       width, runs, nruns, a * per_first, b * per_first);
        }
    }
    RM_DEFINE(uint8_t)
    RM_DEFINE(uint16_t)
    RM_DEFINE(uint32_t)
    RM_DEFINE(uint64_t)
    RM_DEFINE(rm_pair64)
    /* the output split evenly over nt threads: by rows, or by columns when the rows are
       fewer than the threads (a 1-D flip or pad) */
    static void rm_remap(int size, const char* src, char* dst, int nl, const Py_ssize_t* shape,
                         const int64_t* offs, const Py_ssize_t* starts, Py_ssize_t width,
                         const rm_run* runs, Py_ssize_t nruns, const char* fill,
                         Py_ssize_t rows, int nt) {
        const int by_rows = rows >= nt;
        const Py_ssize_t span = by_rows ? rows : width, per = (span + nt - 1) / nt;
        int t;
        _Pragma("omp parallel for schedule(static) num_threads(nt) if (nt > 1)")
        for (t = 0; t < nt; t++) {
            const Py_ssize_t a = t * per, b = a + per < span ? a + per : span;
            const Py_ssize_t r0 = by_rows ? a : 0, r1 = by_rows ? b : rows;
            const Py_ssize_t c0 = by_rows ? 0 : a, c1 = by_rows ? width : b;
            if (a >= b) continue;
            switch (size) {
            case 1: rm_rows_uint8_t(src, (uint8_t*)dst, nl, shape, offs, starts, width, runs,
                                    nruns, (const uint8_t*)fill, r0, r1, c0, c1); break;
            case 2: rm_rows_uint16_t(src, (uint16_t*)dst, nl, shape, offs, starts, width, runs,
                                     nruns, (const uint16_t*)fill, r0, r1, c0, c1); break;
            case 4: rm_rows_uint32_t(src, (uint32_t*)dst, nl, shape, offs, starts, width, runs,
                                     nruns, (const uint32_t*)fill, r0, r1, c0, c1); break;
            case 8: rm_rows_uint64_t(src, (uint64_t*)dst, nl, shape, offs, starts, width, runs,
                                     nruns, (const uint64_t*)fill, r0, r1, c0, c1); break;
            default: rm_rows_rm_pair64(src, (rm_pair64*)dst, nl, shape, offs, starts, width,
                                       runs, nruns, (const rm_pair64*)fill, r0, r1, c0, c1);
            }
        }
    }
    """
    ctypedef struct rm_run:
        int64_t len, off, step
    void rm_remap(int size, const char* src, char* dst, int nl, const Py_ssize_t* shape,
                  const int64_t* offs, const Py_ssize_t* starts, Py_ssize_t width,
                  const rm_run* runs, Py_ssize_t nruns, const char* fill, Py_ssize_t rows,
                  int nt) nogil
    void rm_adjoint(int dbl, char* gi, const char* g, int nl, const Py_ssize_t* shape,
                    const int64_t* offs, const Py_ssize_t* starts, Py_ssize_t width,
                    const rm_run* runs, Py_ssize_t nruns, Py_ssize_t rows, int nt) nogil

DEF MAXD = 64
DEF MAX_RUNS = 8                          # a pad's last dim has at most 5 pieces
cdef Py_ssize_t PARALLEL_MIN = 1 << 16   # output elements: below, one thread

cdef enum Mode:
    KEEP, FLIP, CONSTANT, REFLECT, REPLICATE, CIRCULAR

PAD_MODES = {"constant": CONSTANT, "reflect": REFLECT, "replicate": REPLICATE,
             "circular": CIRCULAR}


cdef inline Py_ssize_t _source(Py_ssize_t i, Py_ssize_t n, Py_ssize_t left, Py_ssize_t right,
                               int mode) noexcept nogil:
    """The input index output index i reads along a dim of n (-1: the fill value)."""
    cdef Py_ssize_t j = i - left, lo, span, a
    if mode == KEEP:
        return j
    if mode == FLIP:
        return n - 1 - j
    if mode == CONSTANT:
        return j if 0 <= j < n else -1
    if mode == REFLECT:
        a = j if j >= 0 else -j
        a = (n - 1) - a
        return (n - 1) - (a if a >= 0 else -a)
    if mode == REPLICATE:
        return 0 if j < 0 else (n - 1 if j >= n else j)
    lo = left if left < 0 else 0
    lo = -lo
    span = n - lo - (-right if right < 0 else 0)
    a = (j - lo) % span
    return lo + (a + span if a < 0 else a)


cdef Py_ssize_t _piece(Py_ssize_t j, Py_ssize_t jhi, Py_ssize_t n, Py_ssize_t left,
                       Py_ssize_t right, int mode, Py_ssize_t* source,
                       Py_ssize_t* step) noexcept nogil:
    """The linear piece of a dim's map that starts at input index j (output index j + left)
    and ends before jhi: its first source (-1: the fill value) and step (+1, -1 or 0) set;
    returns where it ends."""
    cdef Py_ssize_t lo, span, s
    if mode == KEEP or mode == FLIP:
        source[0] = j if mode == KEEP else n - 1 - j
        step[0] = 1 if mode == KEEP else -1
        return jhi
    if mode == CIRCULAR:
        s = _source(j + left, n, left, right, mode)
        lo = -left if left < 0 else 0
        span = n - lo - (-right if right < 0 else 0)
        source[0], step[0] = s, 1
        return min(jhi, j + lo + span - s)
    if 0 <= j < n:
        source[0], step[0] = j, 1
        return min(jhi, n)
    if mode == CONSTANT:
        source[0], step[0] = -1, 0
    elif mode == REPLICATE:
        source[0], step[0] = (0 if j < 0 else n - 1), 0
    else:                                  # reflect: mirrored about the first or last index
        source[0], step[0] = (-j if j < 0 else 2 * (n - 1) - j), -1
    return min(jhi, 0) if j < 0 else jhi


cdef struct Plan:
    # the copy's dims after merging (strides in x's elements), their output sizes, the
    # leading dims' rows in the offsets table (starts, total), rows and row width
    int nd
    Py_ssize_t n_in[MAXD]
    Py_ssize_t n_out[MAXD]
    Py_ssize_t stride[MAXD]
    Py_ssize_t left[MAXD]
    Py_ssize_t right[MAXD]
    Py_ssize_t starts[MAXD]
    int mode[MAXD]
    Py_ssize_t total, rows, width


cdef void _plan(Plan* p, tuple sizes, tuple strides, int* modes, Py_ssize_t* lefts,
                Py_ssize_t* rights):
    """Merge adjacent kept dims, give a one-dim copy a leading dim of 1, lay out the
    leading dims' offset rows."""
    cdef int nd = len(sizes), d, k = 0
    for d in range(nd):
        if (k > 0 and modes[d] == KEEP and p.mode[k - 1] == KEEP
                and p.stride[k - 1] == <Py_ssize_t>strides[d] * <Py_ssize_t>sizes[d]):
            p.n_in[k - 1] *= sizes[d]
            p.n_out[k - 1] = p.n_in[k - 1]
            p.stride[k - 1] = strides[d]
            continue
        p.n_in[k], p.stride[k], p.mode[k] = sizes[d], strides[d], modes[d]
        p.left[k], p.right[k] = lefts[d], rights[d]
        p.n_out[k] = p.n_in[k] + p.left[k] + p.right[k]
        k += 1
    if k == 1:
        p.n_in[1], p.n_out[1], p.stride[1] = p.n_in[0], p.n_out[0], p.stride[0]
        p.mode[1], p.left[1], p.right[1] = p.mode[0], p.left[0], p.right[0]
        p.n_in[0], p.n_out[0], p.stride[0], p.mode[0], p.left[0], p.right[0] = 1, 1, 0, KEEP, 0, 0
        k = 2
    p.nd, p.total, p.rows = k, 0, 1
    for d in range(k - 1):
        p.starts[d] = p.total
        p.total += p.n_out[d]
        p.rows *= p.n_out[d]
    p.width = p.n_out[k - 1]


cdef Py_ssize_t _maps(const Plan* p, int64_t* offs, rm_run* runs, int size) noexcept nogil:
    """The leading dims' byte offsets into x (-1: fill) and the last dim's runs; returns the
    number of runs, or -1 past MAX_RUNS (not a pad's map)."""
    cdef int d, last = p.nd - 1
    cdef Py_ssize_t i, q, s, step, end, nruns = 0
    for d in range(last):
        i = 0
        while i < p.n_out[d]:
            end = _piece(i - p.left[d], p.n_out[d] - p.left[d], p.n_in[d], p.left[d],
                         p.right[d], p.mode[d], &s, &step) + p.left[d]
            for q in range(i, end):
                offs[p.starts[d] + q] = -1 if s < 0 else (s + (q - i) * step) * p.stride[d] * size
            i = end
    i = 0
    while i < p.width:
        if nruns == MAX_RUNS:
            return -1
        end = _piece(i - p.left[last], p.width - p.left[last], p.n_in[last], p.left[last],
                     p.right[last], p.mode[last], &s, &step) + p.left[last]
        runs[nruns].len = end - i
        runs[nruns].off = -1 if s < 0 else s * p.stride[last] * size
        runs[nruns].step = step * p.stride[last]
        nruns += 1
        i = end
    return nruns


cdef inline char* _data(TensorImpl t):
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>t._storage.handle) + t._offset * t._dtype.itemsize


cdef bint _remap(TensorImpl out, TensorImpl x, int* modes, Py_ssize_t* lefts,
                 Py_ssize_t* rights, bytes fill) except -1:
    """out[i0, ..] = x[source(i0), ..] per dim (see _source), the fill element (bytes of out's
    dtype) where any dim's source is -1. False, writing nothing, where this kernel does not
    apply (out not contiguous, memory numpy does not own, over MAXD dims)."""
    cdef int size = out._dtype.itemsize
    if (x._dtype is not out._dtype or len(out._sizes) != len(x._sizes) or not x._sizes
            or len(x._sizes) > MAXD or type(x._storage.handle) is not np.ndarray
            or not is_contiguous(out) or type(out._storage.handle) is not np.ndarray
            or size not in (1, 2, 4, 8, 16) or len(fill) != size):
        return False
    cdef Plan p
    _plan(&p, x._sizes, x._strides, modes, lefts, rights)
    if p.rows * p.width == 0:
        return True
    cdef cnp.ndarray offs = np.empty(p.total + 1, dtype=np.int64)
    cdef rm_run runs[MAX_RUNS]
    cdef char fill_bytes[16]
    memcpy(fill_bytes, <char*>fill, size)
    cdef const char* src = _data(x)
    cdef char* dst = _data(out)
    cdef int nt = fastreduce.threads_now() if p.rows * p.width >= PARALLEL_MIN else 1
    cdef Py_ssize_t nruns
    with nogil:
        nruns = _maps(&p, <int64_t*>cnp.PyArray_DATA(offs), runs, size)
        if nruns < 0:
            return False
        rm_remap(size, src, dst, p.nd - 1, p.n_out, <int64_t*>cnp.PyArray_DATA(offs),
                 p.starts, p.width, runs, nruns, fill_bytes, p.rows, nt)
    return True


cdef bytes _element(TensorImpl out, value):
    """value as one element of out's dtype, converted as the `fill` primitive does."""
    one = np.empty(1, dtype=host_array(out).dtype)
    try:
        one.fill(value)
    except OverflowError:         # torch wraps out-of-range integers (uint8 + 1000 -> 232)
        one.fill(np.array(value).astype(one.dtype))
    return one.tobytes()


cdef int _pad_maps(int nd, tuple pads, int code, int* modes, Py_ssize_t* lefts,
                   Py_ssize_t* rights) except -1:
    """Each dim's map for F.pad's `pads` (last dim first, (left, right) pairs): `code` with
    its two widths on the padded dims, KEEP on the others."""
    cdef int d, i
    for d in range(nd):
        modes[d], lefts[d], rights[d] = KEEP, 0, 0
    for i in range(len(pads) // 2):
        d = nd - 1 - i
        modes[d], lefts[d], rights[d] = code, pads[2 * i], pads[2 * i + 1]
    return 0


def pad(TensorImpl out, TensorImpl x, tuple pads, str mode, value):
    """The `pad` kernel: (left, right) pads from the last dim on; a negative pad crops.
    Output position j (counted from the input's start) reads: constant, j itself inside the
    input and the fill value outside; reflect, its mirror image about the ends; replicate,
    the nearest end; circular, j wrapped around what the crops leave."""
    cdef int nd = len(x._sizes), code = PAD_MODES[mode]
    if nd > MAXD or len(pads) > 2 * nd:
        return False
    cdef int modes[MAXD]
    cdef Py_ssize_t lefts[MAXD]
    cdef Py_ssize_t rights[MAXD]
    _pad_maps(nd, pads, code, modes, lefts, rights)
    fill = _element(out, value) if code == CONSTANT else bytes(out._dtype.itemsize)
    return _remap(out, x, modes, lefts, rights, fill)


def flip(TensorImpl out, TensorImpl x, tuple dims):
    """The `flip` kernel: x reversed along each of dims."""
    cdef int nd = len(x._sizes), d
    if nd > MAXD:
        return False
    cdef int modes[MAXD]
    cdef Py_ssize_t zeros[MAXD]
    for d in range(nd):
        modes[d], zeros[d] = KEEP, 0
    for d in dims:
        modes[d] = FLIP
    return _remap(out, x, modes, zeros, zeros, bytes(out._dtype.itemsize))


def pad_backward(TensorImpl grad_x, TensorImpl grad, tuple pads, str mode):
    """The `pad_backward` kernel: grad_x (contiguous, the input's sizes) = the adjoint of the
    pad applied to grad: each input element gets the sum of the gradients of the output
    elements that read it, in output order. float32/float64; False elsewhere."""
    cdef int nd = len(grad_x._sizes), d, code = PAD_MODES[mode]
    if (nd == 0 or nd > MAXD or len(pads) > 2 * nd or grad._dtype is not grad_x._dtype
            or grad_x._dtype.code not in (FLOAT32, FLOAT64) or not is_contiguous(grad_x)
            or type(grad_x._storage.handle) is not np.ndarray):
        return False
    cdef int modes[MAXD]
    cdef Py_ssize_t lefts[MAXD]
    cdef Py_ssize_t rights[MAXD]
    _pad_maps(nd, pads, code, modes, lefts, rights)
    strides, step = [], 1
    for d in range(nd - 1, -1, -1):
        strides.insert(0, step)
        step *= grad_x._sizes[d]
    cdef Plan p
    _plan(&p, grad_x._sizes, tuple(strides), modes, lefts, rights)
    gx = host_array(grad_x)
    gx[...] = 0
    if p.rows * p.width == 0:
        return True
    cdef cnp.ndarray g = np.ascontiguousarray(host_array(grad))
    cdef cnp.ndarray offs = np.empty(p.total + 1, dtype=np.int64)
    cdef rm_run runs[MAX_RUNS]
    cdef int size = grad_x._dtype.itemsize, dbl = grad_x._dtype.code == FLOAT64
    cdef int nt = fastreduce.threads_now() if p.rows * p.width >= PARALLEL_MIN else 1
    if p.mode[0] != KEEP:                  # rows of one input row: one thread
        nt = 1
    cdef char* gi = _data(grad_x)
    cdef const char* gp = <char*>cnp.PyArray_DATA(g)
    cdef Py_ssize_t nruns
    with nogil:
        nruns = _maps(&p, <int64_t*>cnp.PyArray_DATA(offs), runs, size)
        if nruns >= 0:
            rm_adjoint(dbl, gi, gp, p.nd - 1, p.n_out, <int64_t*>cnp.PyArray_DATA(offs),
                       p.starts, p.width, runs, nruns, p.rows, nt)
    return nruns >= 0


KERNELS = {"pad": pad, "flip": flip, "pad_backward": pad_backward}
