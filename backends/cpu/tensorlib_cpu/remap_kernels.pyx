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
OpenMP threads. Any input strides, any dtype (elements moved as 1-16 byte words)."""
import numpy as np

cimport numpy as cnp
from libc.stdint cimport int64_t

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


cdef bint _remap(TensorImpl out, TensorImpl x, int* modes, Py_ssize_t* lefts,
                 Py_ssize_t* rights, bytes fill) except -1:
    """out[i0, ..] = x[source(i0), ..] per dim (see _source), the fill element (bytes of out's
    dtype) where any dim's source is -1. False, writing nothing, where this kernel does not
    apply (out not contiguous, memory numpy does not own, over MAXD dims)."""
    cdef int nd = len(x._sizes), d, k = 0, size = out._dtype.itemsize
    if (x._dtype is not out._dtype or len(out._sizes) != nd or nd == 0 or nd > MAXD
            or type(x._storage.handle) is not np.ndarray or not is_contiguous(out)
            or type(out._storage.handle) is not np.ndarray or size not in (1, 2, 4, 8, 16)
            or len(fill) != size):
        return False
    cdef Py_ssize_t n_in[MAXD]
    cdef Py_ssize_t n_out[MAXD]
    cdef Py_ssize_t stride[MAXD]
    cdef int mode[MAXD]
    cdef Py_ssize_t left[MAXD]
    cdef Py_ssize_t right[MAXD]
    cdef Py_ssize_t starts[MAXD]
    cdef Py_ssize_t total = 0, rows = 1, i, q, s, width, nruns = 0, step, end
    for d in range(nd):                    # merge adjacent kept dims (strides in elements)
        if (k > 0 and modes[d] == KEEP and mode[k - 1] == KEEP
                and stride[k - 1] == <Py_ssize_t>x._strides[d] * x._sizes[d]):
            n_in[k - 1] *= x._sizes[d]
            n_out[k - 1] = n_in[k - 1]
            stride[k - 1] = x._strides[d]
            continue
        n_in[k], stride[k], mode[k] = x._sizes[d], x._strides[d], modes[d]
        left[k], right[k] = lefts[d], rights[d]
        n_out[k] = n_in[k] + left[k] + right[k]
        k += 1
    if k == 1:                             # one dim: a leading dim of 1 before it
        n_in[1], n_out[1], stride[1], mode[1], left[1], right[1] = \
            n_in[0], n_out[0], stride[0], mode[0], left[0], right[0]
        n_in[0], n_out[0], stride[0], mode[0], left[0], right[0] = 1, 1, 0, KEEP, 0, 0
        k = 2
    nd = k
    for d in range(nd - 1):
        starts[d] = total
        total += n_out[d]
        rows *= n_out[d]
    width = n_out[nd - 1]
    if rows * width == 0:
        return True
    cdef cnp.ndarray offs_arr = np.empty(total + 1, dtype=np.int64)
    cdef int64_t* offs = <int64_t*>cnp.PyArray_DATA(offs_arr)
    cdef cnp.ndarray runs_arr = np.empty(3 * MAX_RUNS, dtype=np.int64)
    cdef rm_run* runs = <rm_run*>cnp.PyArray_DATA(runs_arr)
    cdef cnp.ndarray fill_arr = np.frombuffer(fill, dtype=np.uint8).copy()
    cdef const char* src = <char*>cnp.PyArray_DATA(<cnp.ndarray>x._storage.handle) + \
        x._offset * size
    cdef char* dst = <char*>cnp.PyArray_DATA(<cnp.ndarray>out._storage.handle) + \
        out._offset * size
    cdef int nt = fastreduce.threads_now() if rows * width >= PARALLEL_MIN else 1
    cdef int last = nd - 1
    with nogil:
        for d in range(last):              # each dim's byte offsets, piece by piece
            i = 0
            while i < n_out[d]:
                end = _piece(i - left[d], n_out[d] - left[d], n_in[d], left[d], right[d],
                             mode[d], &s, &step) + left[d]
                if s < 0:
                    for q in range(i, end):
                        offs[starts[d] + q] = -1
                else:
                    for q in range(i, end):
                        offs[starts[d] + q] = (s + (q - i) * step) * stride[d] * size
                i = end
        i = 0
        while i < width and nruns < MAX_RUNS:   # the last dim's runs, one piece each
            end = _piece(i - left[last], width - left[last], n_in[last], left[last],
                         right[last], mode[last], &s, &step) + left[last]
            runs[nruns].len = end - i
            runs[nruns].off = -1 if s < 0 else s * stride[last] * size
            runs[nruns].step = step * stride[last]
            nruns += 1
            i = end
        if i < width:                      # more pieces than rm_rows holds: not a pad
            return False
        rm_remap(size, src, dst, last, n_out, offs, starts, width, runs, nruns,
                 <char*>cnp.PyArray_DATA(fill_arr), rows, nt)
    return True


cdef bytes _element(TensorImpl out, value):
    """value as one element of out's dtype, converted as the `fill` primitive does."""
    one = np.empty(1, dtype=host_array(out).dtype)
    try:
        one.fill(value)
    except OverflowError:         # torch wraps out-of-range integers (uint8 + 1000 -> 232)
        one.fill(np.array(value).astype(one.dtype))
    return one.tobytes()


def pad(TensorImpl out, TensorImpl x, tuple pads, str mode, value):
    """The `pad` kernel: (left, right) pads from the last dim on; a negative pad crops.
    Output position j (counted from the input's start) reads: constant, j itself inside the
    input and the fill value outside; reflect, its mirror image about the ends; replicate,
    the nearest end; circular, j wrapped around what the crops leave."""
    cdef int nd = len(x._sizes), d, i, code = PAD_MODES[mode]
    if nd > MAXD or len(pads) > 2 * nd:
        return False
    cdef int modes[MAXD]
    cdef Py_ssize_t lefts[MAXD]
    cdef Py_ssize_t rights[MAXD]
    for d in range(nd):
        modes[d], lefts[d], rights[d] = KEEP, 0, 0
    for i in range(len(pads) // 2):
        d = nd - 1 - i
        modes[d], lefts[d], rights[d] = code, pads[2 * i], pads[2 * i + 1]
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


KERNELS = {"pad": pad, "flip": flip}
