"""Ops that pick or write elements by an index vector or a mask: index_select/add/copy/fill,
masked_fill/select/scatter, nonzero/argwhere, take/take_along_dim. Built from the primitives
index_select, gather, scatter_add, cumsum and where, so they run on any backend."""
import tensorlib._C.dtypes as dt
from tensorlib._C import views as _v
from tensorlib._C.broadcast import broadcast_shapes
from tensorlib._C.dispatch import lookup
from tensorlib._C.factory import empty
from tensorlib._C.tensor_impl import TensorImpl, contiguous_strides, numel
from tensorlib._layout import SPARSE_TYPES
from tensorlib.backends.interface import IndexOutOfBounds
from tensorlib.ops._composites import optional_kernel
from tensorlib.ops._opdef import differentiable
from tensorlib.ops._unsigned import refuse_unsigned
from tensorlib.ops._where import where as _where
from tensorlib.ops._index_common import (_INDEX_DTYPES, _as_dtype, _check_index_dtype,
                                         _cumsum, _full, _long, _method, _same_device,
                                         _scatter_add_into, _select1d, check_bounds,
                                         dim_positions, mask_positions, overwrite, true_count,
                                         wrap_index)
from tensorlib.ops.scatter_gather import _as1d, _scatter_add, gather



# ---- index_* -------------------------------------------------------------------------------
def _check_vector_index(name, index, dtypes=_INDEX_DTYPES, what="int32 or int64"):
    _check_index_dtype(name, index, dtypes, what)
    if index.dim() > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")


def _slice_view(index, dim, ndim):
    """index (1-D) shaped to broadcast along `dim` of an ndim tensor."""
    shape = [1] * max(ndim, 1)
    shape[dim] = index.numel()
    return index.reshape(tuple(shape))


@differentiable("index_select")
def _index_select(x, dim, index):
    if x.dim() == 0:
        return x.clone()
    if len(index._sizes) != 1:
        index = index.reshape(-1)
    sizes = x._sizes[:dim] + index._sizes + x._sizes[dim + 1:]
    out = empty(sizes, x._dtype, x._device)
    if numel(sizes):
        lookup("index_select", x._device)(out, x, dim, index)
    return out


def index_select(input, dim, index):  # noqa: A002
    """The slices of input along dim at the positions in the 1-D index (repeats allowed)."""
    if type(input) in SPARSE_TYPES:                 # a COO tensor selects its own entries
        return input.index_select(dim, index)
    refuse_unsigned("index_select", input._dtype)
    _check_vector_index("index_select", index)
    _same_device("index_select", input, index)
    d = _v.wrap_dim(dim, max(input.dim(), 1))
    if input.dim() == 0 and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{index.numel()} value(s)")
    size = input._sizes[d] if input.dim() else 1
    rest = numel(input._sizes[:d] + input._sizes[d + 1:])      # an empty output runs no kernel
    check_bounds(index, size, d, exc=IndexOutOfBounds, kernel="index_select" if rest else None)
    index = _long(index)
    return _index_select(input, d, index if len(index._sizes) == 1 else index.reshape(-1))


def _check_source(name, x, dim, index, source):
    n = index.numel()
    src_dim = source._sizes[dim] if source.dim() else 1
    if n != src_dim:           # (index_copy's is an IndexError in PyTorch, index_add's not)
        raise (IndexError if name == "index_copy" else RuntimeError)(
            f"{name}(): Number of indices ({n}) should be equal to source.size(dim) "
            f"({src_dim}), for dim: {dim}")
    for d in range(max(x.dim(), source.dim())):
        a = x._sizes[d] if d < x.dim() else 1
        b = source._sizes[d] if d < source.dim() else 1
        if d != dim and a != b or (x.dim() != source.dim() and max(x.dim(), source.dim()) > 1):
            raise RuntimeError(f"source tensor shape must match self tensor shape, excluding "
                               f"the specified dimension. Got self.shape = {list(x._sizes)} "
                               f"source.shape = {list(source._sizes)}")
    if source._dtype is not x._dtype:
        raise RuntimeError(f"{name}(): self ({x._dtype.scalar_name}) and source "
                           f"({source._dtype.scalar_name}) must have the same scalar type")


def _prepare_index_op(name, x, dim, index, source=None):
    _check_vector_index(name, index)
    _same_device(name, x, index, source)
    d = _v.wrap_dim(dim, max(x.dim(), 1))
    if source is not None:
        _check_source(name, x, d, index, source)
        if source.numel() == 0:              # nothing is written: PyTorch reads no index
            return d, _long(index).reshape(-1)
    check_bounds(index, x._sizes[d] if x.dim() else 1, d, exc=IndexOutOfBounds)
    return d, _long(index).reshape(-1)


def index_targets(shape, dim, index, source_shape):
    """Flat positions in a contiguous tensor of `shape` that each element of source goes to."""
    shaped = _slice_view(index, dim, len(source_shape)).expand(tuple(source_shape) or (1,))
    return dim_positions(shaped, dim, tuple(shape) or (1,))


@differentiable("index_add")
def _index_add(x, dim, index, source, alpha):
    if alpha != 1:
        source = source * alpha
    src = _as1d(source)
    shaped = _slice_view(index, dim, src.dim()).expand(src._sizes)
    return _scatter_add.__wrapped__(x, dim, shaped, src).view(x._sizes)


def index_add(input, dim, index, source, *, alpha=1):  # noqa: A002
    """input with alpha * source's slices added at index along dim (repeats add up)."""
    refuse_unsigned("index_add_", input._dtype)
    d, index = _prepare_index_op("index_add", input, dim, index, source)
    return _index_add(input, d, index, source, alpha)


@differentiable("index_copy")
def _index_copy(x, dim, index, source):
    if index.numel() == 0:
        return x.clone()
    targets = index_targets(x._sizes, dim, index, _as1d(source)._sizes)
    return overwrite(x, targets, _as1d(source))


def index_copy(input, dim, index, source):  # noqa: A002
    """input with source's slices copied to index along dim; for a repeated index the last
    slice wins (PyTorch leaves it unspecified)."""
    refuse_unsigned("index_copy_cpu", input._dtype)
    d, index = _prepare_index_op("index_copy", input, dim, index, source)
    return _index_copy(input, d, index, source)


def dim_mask(shape, device, dim, index):
    """Bool tensor broadcasting to `shape`: True on the slices along dim that index names."""
    hit = _full((shape[dim] if shape else 1,), 0, dt.int64, device)
    _scatter_add_into(hit, 0, index, _full(index._sizes, 1, dt.int64, device))
    mask = _slice_view(hit > 0, dim, len(shape))
    return mask if shape else mask.view(())


@differentiable("index_fill")
def _index_fill(x, dim, index, value):
    if isinstance(value, TensorImpl):
        value = _as_dtype(value, x._dtype)
    return _as_dtype(_where(dim_mask(x._sizes, x._device, dim, index), value, x), x._dtype)


def _check_value(name, value):
    if isinstance(value, TensorImpl) and value.dim() != 0:
        raise RuntimeError(f"{name} only supports a 0-dimensional value tensor, but got tensor "
                           f"with {value.dim()} dimension(s).")


def index_fill(input, dim, index, value):  # noqa: A002
    """input with the slices at index along dim set to value (a number or 0-d tensor)."""
    refuse_unsigned("index_fill_cpu", input._dtype)
    _check_value("index_fill_", value)
    _check_fits(value, input._dtype)
    if index._dtype is not dt.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    d, index = _prepare_index_op("index_fill", input, dim, index)
    return _index_fill(input, d, index, value)


# ---- masked_* -------------------------------------------------------------------------------
def _check_fits(value, dtype):
    """A Python number written into an integer tensor must fit it (PyTorch's overflow
    check)."""
    if type(value) in (int, float):
        from tensorlib.ops.creation import overflows
        if overflows(value, dtype):
            raise RuntimeError(f"value cannot be converted to type "
                               f"{str(dtype).split('.')[-1]}_t without overflow")


def _check_mask(name, mask):
    if not isinstance(mask, TensorImpl) or mask._dtype is not dt.bool_:
        got = mask._dtype.scalar_name.lower() if isinstance(mask, TensorImpl) else "none"
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype {got}")


@differentiable("masked_fill")
def _masked_fill(x, mask, value):
    if isinstance(value, TensorImpl):
        value = _as_dtype(value.to(x._device), x._dtype)
    return _as_dtype(_where(mask, value, x), x._dtype)


def masked_fill(input, mask, value):  # noqa: A002
    """input with value (a number or 0-d tensor) where mask is True; broadcasts both."""
    refuse_unsigned("masked_fill", input._dtype)
    _check_mask("masked_fill_", mask)
    _check_value("masked_fill_", value)
    _check_fits(value, input._dtype)
    return _masked_fill(input, mask, value)


@differentiable("masked_select")
def _masked_select(x, mask):
    shape = broadcast_shapes(x._sizes, mask._sizes)
    kernel = optional_kernel(x._device, "masked_select")        # one pass, not two
    if kernel is not None and x._sizes == mask._sizes and x._device.type != "meta":
        out = empty((true_count(mask),), x._dtype, x._device)
        if kernel(out, x, mask):
            return out
    pos = mask_positions(mask.expand(shape), "masked_select")
    return _select1d(x.expand(shape).reshape(-1), pos)


def masked_select(input, mask):  # noqa: A002
    """1-D tensor of input's elements where mask is True (row-major; both broadcast)."""
    refuse_unsigned("masked_select", input._dtype)
    if not isinstance(mask, TensorImpl) or mask._dtype is not dt.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    _same_device("masked_select", input, mask)
    return _masked_select(input, mask)


@differentiable("masked_scatter")
def _masked_scatter(x, mask, source):
    shape = broadcast_shapes(x._sizes, mask._sizes)
    mask = mask.expand(shape)
    ranks = _cumsum(mask.reshape(-1))
    count = int(ranks[ranks.numel() - 1].item()) if ranks.numel() else 0
    if count > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if count == 0:
        return _as_dtype(x.expand(shape).clone(), x._dtype)
    picked = _select1d(source.reshape(-1), _where(ranks > 0, ranks - 1, 0))
    return _where(mask, picked.view(shape), x)


def masked_scatter(input, mask, source):  # noqa: A002
    """input with source's leading elements, in order, written where mask is True."""
    refuse_unsigned("masked_scatter", input._dtype)
    _check_mask("masked_scatter_", mask)
    if source._dtype is not input._dtype:
        raise RuntimeError(f"masked_scatter_: expected self and source to have same dtypes "
                           f"but got {input._dtype.scalar_name} and {source._dtype.scalar_name}")
    return _masked_scatter(input, mask, source)


# ---- nonzero, take --------------------------------------------------------------------------
def _coords(pos, shape):
    """Multi-dim coordinates (one int64 tensor per dim) of row-major flat positions."""
    strides = contiguous_strides(tuple(shape))
    return [(pos // st) % n if n > 1 else pos * 0 for n, st in zip(shape, strides)]


def nonzero(input, *, as_tuple=False):  # noqa: A002
    """Indices of the nonzero elements: (count, ndim) int64, or one 1-D tensor per dim."""
    refuse_unsigned("nonzero_count_cpu", input._dtype)
    mask = input if input._dtype is dt.bool_ else input != 0
    kernel = optional_kernel(mask._device, "nonzero")   # one pass, not coordinates by ops
    if kernel is not None and mask._device.type != "meta" and (input.dim() or not as_tuple):
        count = true_count(mask)
        if as_tuple:        # one contiguous row per dim, as PyTorch's: written transposed
            planar = empty((input.dim(), count), dt.int64, input._device)
            if kernel(_v.transpose(planar, 0, 1), mask):
                return tuple(planar.unbind(0))
        else:
            out = empty((count, input.dim()), dt.int64, input._device)
            if kernel(out, mask):
                return out
    pos = mask_positions(mask)
    if as_tuple:
        return tuple(_coords(pos, input._sizes)) if input.dim() else (pos,)
    out = empty((pos.numel(), input.dim()), dt.int64, input._device)
    for d, c in enumerate(_coords(pos, input._sizes)):
        lookup("copy", input._device)(_v.select(out, 1, d), c)
    return out


def argwhere(input):  # noqa: A002
    return nonzero(input)


def take(input, index):  # noqa: A002
    """input treated as 1-D, read at index (any shape; negative counts from the end)."""
    refuse_unsigned("take_cpu", input._dtype)
    from tensorlib.ops.indexing import take_flat
    if not isinstance(index, TensorImpl) or index._dtype is not dt.int64:
        got = index._dtype.scalar_name if isinstance(index, TensorImpl) else type(index).__name__
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {got}")
    n = input.numel()
    if index.numel():
        bad = (index < -n) | (index >= n)
        if bad.any().item():
            value = _select1d(index.reshape(-1), mask_positions(bad))[0].item()
            raise IndexError(f"out of range: tried to access index {value} on a tensor of {n} "
                             f"elements.")
    return take_flat(input, wrap_index(index, n))


def take_along_dim(input, indices, dim=None):  # noqa: A002
    """gather after broadcasting input and indices against each other except along dim."""
    refuse_unsigned("scatter_gather_tensor_cpu", input._dtype)
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    nd = max(input.dim(), indices.dim())
    if input.dim() != indices.dim():
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.dim()} dimensions for input, "
                           f"and {indices.dim()} dimensions for indices")
    d = _v.wrap_dim(dim, nd)
    a, b = list(input._sizes), list(indices._sizes)
    a[d] = b[d] = 1
    common = list(broadcast_shapes(tuple(a), tuple(b)))
    x_shape, i_shape = list(common), list(common)
    x_shape[d], i_shape[d] = input._sizes[d], indices._sizes[d]
    x = input if tuple(x_shape) == input._sizes else input.expand(tuple(x_shape))
    i = indices if tuple(i_shape) == indices._sizes else indices.expand(tuple(i_shape))
    if x._sizes[d] and i.numel() and isinstance(i, TensorImpl) and i._dtype in _INDEX_DTYPES:
        i = i.remainder(x._sizes[d])         # PyTorch's take_along_dim(dim=...) wraps indices
    return gather(x, d, i)


def _masked_fill_inplace(self, mask, value):
    _check_mask("masked_fill_", mask)
    if broadcast_shapes(self._sizes, mask._sizes) != self._sizes:
        raise RuntimeError(f"output with shape {list(self._sizes)} doesn't match the broadcast "
                           f"shape {list(broadcast_shapes(self._sizes, mask._sizes))}")
    return _method(masked_fill, "masked_fill_")(self, mask, value)


__all__ = ["index_select", "index_add", "index_copy", "index_fill", "masked_fill", "masked_select",
           "masked_scatter", "nonzero", "argwhere", "take", "take_along_dim"]

TENSOR_METHODS = {name: globals()[name] for name in __all__}
TENSOR_METHODS.update({
    "index_add_": _method(index_add, "index_add_"),
    "index_copy_": _method(index_copy, "index_copy_"),
    "index_fill_": _method(index_fill, "index_fill_"),
    "masked_fill_": _masked_fill_inplace,
    "masked_scatter_": _method(masked_scatter, "masked_scatter_"),
})
