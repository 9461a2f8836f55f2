"""The argument checks gather and the scatter family share (re-exported by
tensorlib/ops/sorting.py as `_prepare`), in C: as Python they cost 3 us of a 6.5 us gather
of 97x5 indices, twice the whole of torch's call."""
from tensorlib._C.dispatch cimport lookup
from tensorlib._C.dtypes cimport INT32, INT64
from tensorlib._C.factory cimport cast
from tensorlib._C.tensor_impl cimport TensorImpl, numel
from tensorlib._C.views cimport wrap_dim
from tensorlib._C import dtypes as _dt


cdef _check_shapes(str name, TensorImpl x, Py_ssize_t dim, TensorImpl index, TensorImpl src):
    cdef tuple xs = x._sizes, ix = index._sizes
    cdef Py_ssize_t nd = len(ix), d
    cdef bint too_big
    if nd != len(xs) and not (nd <= 1 and len(xs) <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           f"{'input' if name == 'gather' else 'self'} tensor")
    if src is not None and nd != len(src._sizes) and not (nd <= 1 and len(src._sizes) <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    for d in range(nd):
        too_big = (d != dim and ix[d] > xs[d]) or (src is not None and ix[d] > src._sizes[d])
        if too_big and name == "gather":
            raise RuntimeError(f"Size does not match at dimension {d} expected index "
                               f"{list(ix)} to be no larger than self "
                               f"{list(xs)} apart from dimension {dim}")
        if too_big:
            src_sizes = list(src._sizes) if src is not None else []
            raise RuntimeError(f"Expected index {list(ix)} to be no larger than self "
                               f"{list(xs)} apart from dimension {dim} and to be no "
                               f"larger size than src {src_sizes}")


def prepare(str name, TensorImpl x, dim, index, src, kernel, check_bounds):
    """Common checks of gather/scatter*: index dtype, devices, src dtype, shapes, bounds (left
    to the primitive `kernel` when its kernel checks them; else `check_bounds(index, size, dim)`
    raises); returns (dim, int64 index)."""
    if not isinstance(index, TensorImpl):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not "
                        f"{type(index).__name__}")
    cdef TensorImpl ix = index
    if ix._dtype.code != INT32 and ix._dtype.code != INT64:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    for o in (ix, src):
        if isinstance(o, TensorImpl) and (<TensorImpl>o)._device is not x._device:
            raise RuntimeError(f"{name}: Expected all tensors to be on the same device, but "
                               f"found at least two devices, {x._device} and "
                               f"{(<TensorImpl>o)._device}!")
    cdef TensorImpl s = src if isinstance(src, TensorImpl) else None
    if s is not None and s._dtype is not x._dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    cdef Py_ssize_t d = wrap_dim(dim, max(len(x._sizes), 1))
    cdef TensorImpl long_index = ix if ix._dtype.code == INT64 else cast(ix, _dt.int64)
    if numel(ix._sizes) == 0:               # PyTorch checks no shapes against an empty index
        return d, long_index
    _check_shapes(name, x, d, ix, s)
    if kernel is None or not getattr(lookup(kernel, ix._device), "checks_bounds", False):
        check_bounds(ix, x._sizes[d] if x._sizes else 1, d)
    return d, long_index
