# cython: boundscheck=False, wraparound=False, cdivision=True
"""A large numpy ufunc call split over the backend's OpenMP threads.

numpy's ufunc machinery runs its inner loop on the calling thread. Here the inner loop itself
(the same function numpy would pick for these exact dtypes, SIMD-dispatched) is called from
each OpenMP thread on its share of the output, so results are bit-identical to numpy's, and the
threads are the ones GEMM, reductions and the other kernels use (tensorlib_cpu.gemm says why
one team matters). Floating-point errors are not reported (the kernels using this are quiet,
as PyTorch is); a layout, dtype combination or overlap this cannot take returns False and the
caller runs numpy itself, as does a loop that reports errors through Python (integer power):
the threads run without the GIL."""
import numpy as np

cimport numpy as cnp
from cython.parallel cimport prange

from tensorlib_cpu import fastreduce

cnp.import_array()

# Below this many output elements one thread does it (a region costs ~1 us with spinning
# threads; an add of 64K floats ~6 us).
PARALLEL_MIN = 1 << 16
# Element shares of a 1-D split are multiples of this, so each keeps the array's alignment
# and numpy's loop takes the same SIMD path on every share.
cdef enum:
    _ALIGN = 1024
    _MAX_ARGS = 3
    _MAX_DIMS = 32

ctypedef void (*inner_loop)(char** args, const cnp.npy_intp* dims, const cnp.npy_intp* steps,
                            void* data) noexcept nogil

_loops = {}     # (ufunc, dtype numbers) -> index of the exact loop in ufunc.functions, or -1


cdef int _loop_index(cnp.ufunc f, tuple nums):
    key = (f, nums)
    found = _loops.get(key)
    if found is not None:
        return found
    cdef int i, index = -1
    # the loops' signatures through the Python attribute ('ff->f', in the order of the C
    # arrays): numpy >= 2.5's Cython declarations no longer expose the C `types` field, and
    # Cython then reads `f.types` as this list
    for i, signature in enumerate((<object>f).types):
        if i >= f.ntypes or f.functions[i] == NULL:
            continue
        try:
            codes = tuple(np.dtype(c).num for c in signature.replace("->", ""))
        except TypeError:
            continue
        if codes == nums:
            index = i
            break
    _loops[key] = index
    return index


cdef bint _partial_overlap(cnp.ndarray out, cnp.ndarray a):
    """a shares memory with out other than element for element (an in-place op is fine)."""
    if not np.may_share_memory(a, out):
        return False
    return not (cnp.PyArray_DATA(a) == cnp.PyArray_DATA(out)
                and (<object>a).strides == (<object>out).strides and a.itemsize == out.itemsize)


cdef void _row(inner_loop loop, void* data, char** base, int nargs, int nd,
               const cnp.npy_intp* shape, const cnp.npy_intp* strides, cnp.npy_intp r,
               const cnp.npy_intp* steps) noexcept nogil:
    """The loop over row r of the innermost dim (its own argument pointers: one per call,
    so threads share nothing)."""
    cdef char* args[_MAX_ARGS]
    cdef cnp.npy_intp rest = r, i, count = shape[nd - 1]
    cdef int k, d
    for k in range(nargs):
        args[k] = base[k]
    for d in range(nd - 2, -1, -1):
        i = rest % shape[d]
        rest = rest // shape[d]
        for k in range(nargs):
            args[k] = args[k] + i * strides[k * _MAX_DIMS + d]
    loop(args, &count, steps, data)


cdef void _share(inner_loop loop, void* data, char** base, int nargs,
                 const cnp.npy_intp* steps, cnp.npy_intp lo, cnp.npy_intp hi) noexcept nogil:
    """Elements lo..hi of a one-dim call."""
    cdef char* args[_MAX_ARGS]
    cdef cnp.npy_intp count = hi - lo
    cdef int k
    if count <= 0:
        return
    for k in range(nargs):
        args[k] = base[k] + lo * steps[k]
    loop(args, &count, steps, data)


def run(cnp.ufunc f, cnp.ndarray out, *inputs):
    """f(*inputs, out=out) on the OpenMP threads; inputs of out's shape (stride-0 broadcasts
    fine) or 0-d. False (nothing written) when this cannot run it exactly as numpy would."""
    cdef int nargs = f.nargs, nd = out.ndim, k, d, j
    if f.nout != 1 or len(inputs) != f.nin or nargs > _MAX_ARGS or nd > _MAX_DIMS or nd == 0:
        return False
    arrays = list(inputs) + [out]
    for k in range(nargs - 1):
        a = arrays[k]
        if not isinstance(a, np.ndarray):
            return False
        if (<cnp.ndarray>a).ndim == 0:
            continue
        if a.shape != (<object>out).shape or _partial_overlap(out, a):
            return False
    if not all(a.dtype.isnative for a in arrays):
        return False
    if f is np.power and out.dtype.kind in "iub":
        return False        # its integer loops raise through Python (negative exponents)
    cdef int index = _loop_index(f, tuple(a.dtype.num for a in arrays))
    if index < 0:
        return False
    cdef inner_loop loop = <inner_loop>f.functions[index]
    cdef void* data = f.data[index]
    cdef char* base[_MAX_ARGS]
    cdef cnp.npy_intp shape[_MAX_DIMS]
    cdef cnp.npy_intp strides[_MAX_ARGS * _MAX_DIMS]
    cdef cnp.ndarray arr
    # walk out in memory order: the dim with the smallest stride innermost
    out_strides = (<object>out).strides
    order = sorted(range(nd), key=lambda i: -abs(out_strides[i]))
    for k in range(nargs):
        arr = arrays[k]
        base[k] = <char*>cnp.PyArray_DATA(arr)
        for d in range(nd):
            strides[k * _MAX_DIMS + d] = arr.strides[order[d]] if arr.ndim else 0
    for d in range(nd):
        shape[d] = out.shape[order[d]]
    # coalesce: merge dim d into d + 1 where every argument steps through both as one
    cdef int kept = 0
    cdef bint merge
    for d in range(nd):
        if shape[d] == 1:
            continue
        merge = kept > 0
        if merge:
            for k in range(nargs):
                if strides[k * _MAX_DIMS + kept - 1] != strides[k * _MAX_DIMS + d] * shape[d]:
                    merge = False
                    break
        if merge:
            shape[kept - 1] *= shape[d]
            for k in range(nargs):
                strides[k * _MAX_DIMS + kept - 1] = strides[k * _MAX_DIMS + d]
        else:
            shape[kept] = shape[d]
            for k in range(nargs):
                strides[k * _MAX_DIMS + kept] = strides[k * _MAX_DIMS + d]
            kept += 1
    cdef cnp.npy_intp size = out.size, rows = 1
    if size == 0:
        return True
    if kept == 0:
        shape[0] = 1
        for k in range(nargs):
            strides[k * _MAX_DIMS] = 0
        kept = 1
    for d in range(kept - 1):
        rows *= shape[d]
    cdef int nt = fastreduce.threads_now() if size >= PARALLEL_MIN else 1
    cdef cnp.npy_intp steps[_MAX_ARGS]
    cdef cnp.npy_intp share, t, r
    for k in range(nargs):
        steps[k] = strides[k * _MAX_DIMS + kept - 1]
    with nogil:
        if kept == 1:
            share = (size + nt - 1) // nt
            share = ((share + _ALIGN - 1) // _ALIGN) * _ALIGN
            for t in prange(nt, num_threads=nt, schedule="static"):
                _share(loop, data, base, nargs, steps, t * share, min(size, (t + 1) * share))
        else:
            for r in prange(rows, num_threads=min(nt, rows), schedule="static"):
                _row(loop, data, base, nargs, kept, shape, strides, r, steps)
    return True
