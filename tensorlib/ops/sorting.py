"""Sorting, gather/scatter, index_*, masked_* and counting ops.

Everything is built from the primitives gather, scatter_add, index_select, sort, cumsum, where,
copy and fill plus elementwise arithmetic on int64 index tensors, so it runs on any backend.

Determinism: scatter_add/index_add/index_put(accumulate=True) add in row-major order of the
index through the scatter_add primitive (deterministic on the CPU backend). Where PyTorch
leaves duplicate writes unspecified (scatter without reduce, index_copy, index_put,
x[idx] = v), tensorlib defines them: the write that comes last in row-major order of the index
wins, and the gradient goes to that element only (so gradcheck holds with duplicates).

Bounds are checked in the op (one device reduction and one .item() per index tensor), so a
backend's kernels need not check -- except where the primitive that reads the index as given
(gather, scatter_add, index_select) has a kernel that checks itself (`checks_bounds`, see
tensorlib/backends/interface.py); out-of-range errors are IndexError (for gather/scatter, where
PyTorch raises RuntimeError, the exception is both)."""
from collections import namedtuple

import tensorlib._C.dtypes as dt
from tensorlib._C import grad_mode as _gm
from tensorlib._C import scatter_args as _scatter_args
from tensorlib._C import views as _v
from tensorlib._C.broadcast import broadcast_shapes
from tensorlib._C.dispatch import lookup
from tensorlib._C.factory import empty, cast, scalar_tensor
from tensorlib._C.tensor_impl import TensorImpl, contiguous_strides, numel
from tensorlib._meta import data_dependent_on_meta
from tensorlib.backends.interface import IndexOutOfBounds
from tensorlib.ops._opdef import differentiable
from tensorlib.ops._where import where as _where

sort_result = namedtuple("sort", ["values", "indices"])
topk_result = namedtuple("topk", ["values", "indices"])
kthvalue_result = namedtuple("kthvalue", ["values", "indices"])
_INDEX_DTYPES = (dt.int32, dt.int64)




# ---- small helpers over primitives -------------------------------------------------------
def _full(shape, value, dtype, device):
    out = empty(tuple(shape), dtype, device)
    lookup("fill", device)(out, value)
    return out


def _arange(n, device):
    from tensorlib.ops.creation import arange
    return arange(n, device=device)


def _neutral(dtype):
    """The value that leaves every x unchanged under x + value: -0.0 keeps a -0.0 and nans."""
    if dtype is dt.bool_:
        return False
    return -0.0 if dtype.is_floating_point else 0


def _as_dtype(x, dtype):
    return x if x._dtype is dtype else cast(x, dtype)


def _long(index):
    return _as_dtype(index, dt.int64)


def _prim_sort(x, dim, descending=False):
    """Stable sort primitive: (values, int64 indices)."""
    values = empty(x._sizes, x._dtype, x._device)
    indices = empty(x._sizes, dt.int64, x._device)
    if x.numel():
        lookup("sort", x._device)(values, indices, x, dim, descending, True)
    return values, indices


def _cumsum(x):
    """Inclusive int64 cumsum of a 1-D tensor through the cumsum primitive."""
    out = empty(x._sizes, dt.int64, x._device)
    if x.numel():
        lookup("cumsum", x._device)(out, _long(x), 0)
    return out


def _scatter_add_into(out, dim, index, src):
    """out[..index..] += src, in place, through the primitive (no checks)."""
    if index.numel():
        lookup("scatter_add", out._device)(out, dim, _long(index), src)
    return out


def _select1d(x, index):
    out = empty((index.numel(),), x._dtype, x._device)
    if index.numel():
        lookup("index_select", x._device)(out, x, 0, _long(index).reshape(-1))
    return out


def _same_device(name, x, *others):
    for o in others:
        if isinstance(o, TensorImpl) and o._device is not x._device:
            raise RuntimeError(f"{name}: Expected all tensors to be on the same device, but "
                               f"found at least two devices, {x._device} and {o._device}!")


def _check_index_dtype(name, index, allowed=_INDEX_DTYPES, what="int32/int64"):
    if not isinstance(index, TensorImpl):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not "
                        f"{type(index).__name__}")
    if index._dtype not in allowed:
        raise RuntimeError(f"{name}(): Expected dtype {what} for index")


def check_bounds(index, size, dim, negative=False, exc=IndexError, kernel=None):
    """Raise `exc` naming the first index outside [0, size) (or [-size, size)); meta
    indices have no values to check, as in PyTorch. `kernel`: the primitive that will read
    exactly this index; when its kernel checks bounds itself, nothing is done here."""
    if kernel is not None and getattr(lookup(kernel, index._device), "checks_bounds", False):
        return
    if index.numel() == 0 or index._device.type == "meta":
        return
    lo = -size if negative else 0
    bad = (index < lo) | (index >= size)
    if bad.any().item():
        value = _select1d(index.reshape(-1), mask_positions(bad)).reshape(-1)[0].item()
        raise exc(f"index {value} is out of bounds for dimension {dim} with size {size}")


def wrap_index(index, size):
    """Negative indices count from the end."""
    index = _long(index)
    return _where(index < 0, index + size, index)


def mask_positions(mask, op="nonzero"):
    """Row-major flat positions of the True elements of a bool tensor (1-D int64). The count
    is read with one .item(); the positions are placed by scatter_add at their rank. On meta
    tensors the count is unknown: `op` (PyTorch's operator name) raises NotImplementedError."""
    if mask._device.type == "meta":
        raise data_dependent_on_meta(op)
    flat = mask.reshape(-1)
    n = flat.numel()
    if n == 0:
        return empty((0,), dt.int64, mask._device)
    ranks = _cumsum(flat)
    count = int(ranks[n - 1].item())
    slot = _where(flat, ranks - 1, count)            # False elements go to a spare slot
    out = _full((count + 1,), 0, dt.int64, mask._device)
    _scatter_add_into(out, 0, slot, _arange(n, mask._device))
    return _v.slice(out, 0, 0, count, 1)


def dim_positions(index, dim, shape):
    """Flat position, in a contiguous tensor of `shape`, that each element of `index` addresses
    along `dim` (the other coordinates being the element's own)."""
    strides = contiguous_strides(tuple(shape))
    pos = _long(index) * strides[dim] if index.dim() else _long(index)
    for d in range(index.dim()):
        if d != dim and strides[d] and index._sizes[d] > 1:
            view = [1] * index.dim()
            view[d] = index._sizes[d]
            pos = pos + _arange(index._sizes[d], index._device).view(tuple(view)) * strides[d]
    return pos


def last_writer(targets):
    """Bool mask shaped like `targets`: True for the element whose write survives at its target
    (the last one in row-major order). A stable sort groups the targets; each run's last wins."""
    flat = targets.reshape(-1)
    n = flat.numel()
    if n <= 1:
        return _full(targets._sizes, True, dt.bool_, targets._device)
    values, order = _prim_sort(flat, 0)
    last = _full((n,), True, dt.bool_, targets._device)
    lookup("ne", targets._device)(_v.slice(last, 0, 0, n - 1, 1),
                                  _v.slice(values, 0, 0, n - 1, 1), _v.slice(values, 0, 1, n, 1))
    back = _full((n,), 0, dt.int64, targets._device)
    _scatter_add_into(back, 0, order, _long(last))
    return (back > 0).view(targets._sizes)


def overwrite(base, targets, values, unique=False):
    """base with `values` written at the flat (contiguous-layout) positions `targets`; the last
    write to a repeated target wins (unique=True: the caller knows there are no repeats).
    Exact for every value: the losers add -0.0."""
    n, dtype, dev = base.numel(), base._dtype, base._device
    neutral = _neutral(dtype)
    vals = _as_dtype(values, dtype).expand(targets._sizes)
    if not unique:
        vals = _where(last_writer(targets), vals, neutral)
    buf = _full((n,), neutral, dtype, dev)
    _scatter_add_into(buf, 0, targets.reshape(-1), vals.reshape(-1))
    hit = _full((n,), 0, dt.int64, dev)
    _scatter_add_into(hit, 0, targets.reshape(-1), _full((targets.numel(),), 1, dt.int64, dev))
    return _where((hit > 0).view(base._sizes), buf.view(base._sizes), base)


def hit_mask(shape, index, dim, device):
    """Bool tensor of `shape`: which elements a scatter along dim with `index` writes."""
    hit = _full(tuple(shape), 0, dt.int64, device)
    _scatter_add_into(hit, dim, index, _full(index._sizes, 1, dt.int64, device))
    return hit > 0


def _narrow_to(src, shape):
    """src's leading corner of `shape` (PyTorch reads only that part of a larger src)."""
    if src._sizes == tuple(shape):
        return src
    return src[tuple(slice(0, n) for n in shape)]


# ---- gather / scatter ----------------------------------------------------------------------
def _index_bounds(index, size, dim):
    check_bounds(index, size, dim, exc=IndexOutOfBounds)


def _prepare(name, x, dim, index, src=None, kernel=None):
    """Common checks of gather/scatter*: dtypes, shapes, bounds (left to the primitive
    `kernel` when it checks them: see check_bounds); returns (dim, int64 index)."""
    return _scatter_args.prepare(name, x, dim, index, src, kernel, _index_bounds)


def _as1d(x):
    return x if x._sizes else x.view((1,))


@differentiable("gather")
def _gather(x, dim, index):
    out = empty(index._sizes, x._dtype, x._device)
    if numel(index._sizes):
        lookup("gather", x._device)(_as1d(out), _as1d(x), dim, _as1d(index))
    return out


def gather(input, dim, index, *, sparse_grad=False):  # noqa: A002 - torch's names
    """out[i][j] = input[index[i][j]][j] (dim 0): reads along dim at the given indices."""
    d, index = _prepare("gather", input, dim, index, kernel="gather")
    return _gather(input, d, index)


@differentiable("scatter_add")
def _scatter_add(x, dim, index, src):
    out = empty(x._sizes, x._dtype, x._device)
    lookup("copy", x._device)(out, x)
    if index.numel():
        _scatter_add_into(_as1d(out), dim, _as1d(index), _as1d(src))
    return out


def scatter_add(input, dim, index, src):  # noqa: A002
    """input with src added at index along dim; repeated indices add up, in row-major order."""
    d, index = _prepare("scatter_add", input, dim, index, src, kernel="scatter_add")
    return _scatter_add(input, d, index, _narrow_to(src, index._sizes))


@differentiable("scatter")
def _scatter(x, dim, index, src):
    if index.numel() == 0:
        return x.clone()
    targets = dim_positions(_as1d(index), dim, _as1d(x)._sizes)
    return overwrite(x, targets, src.reshape(targets._sizes))


@differentiable("scatter_value")
def _scatter_value(x, dim, index, value):
    return _scatter.__wrapped__(x, dim, index, scalar_tensor(value, x._dtype, x._device)
                                .expand(index._sizes))


def scatter(input, dim, index, src=None, value=None, *, reduce=None):  # noqa: A002
    """input with src (or value) written at index along dim. Repeated indices: the last one
    in row-major order wins (PyTorch leaves it unspecified). reduce='add'/'multiply' combine."""
    if src is None:
        src = value
    if reduce is not None:
        return _scatter_with_reduce(input, dim, index, src, reduce)
    if isinstance(src, TensorImpl):
        d, index = _prepare("scatter", input, dim, index, src)
        return _scatter(input, d, index, _narrow_to(src, index._sizes))
    d, index = _prepare("scatter", input, dim, index)
    return _scatter_value(input, d, index, src)


def _scatter_with_reduce(input, dim, index, src, reduce):  # noqa: A002
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if not isinstance(src, TensorImpl):
        _check_index_dtype("scatter", index)
        src = _full(index._sizes, src, input._dtype, input._device)
    if reduce == "add":
        return scatter_add(input, dim, index, src)
    return scatter_reduce(input, dim, index, src, "prod")


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):  # noqa: A002
    """input with src reduced into it at index along dim (sum, prod, mean, amax, amin);
    include_self=False leaves input's own value out of the written positions."""
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    d, index = _prepare("scatter_reduce", input, dim, index, src)
    return _scatter_reduce(input, d, index, _narrow_to(src, index._sizes), reduce,
                           bool(include_self))


def _segment_scan(keys, vals, op):
    """Inclusive scan of `op` within runs of equal sorted `keys` (1-D), by doubling: log2(n)
    elementwise steps, exact and deterministic."""
    n, k = vals.numel(), 1
    while k < n:
        same = _v.slice(keys, 0, k, n, 1) == _v.slice(keys, 0, 0, n - k, 1)
        cur = _v.slice(vals, 0, k, n, 1)
        step = _where(same, op(cur, _v.slice(vals, 0, 0, n - k, 1)), cur)
        nxt = vals.clone()
        lookup("copy", vals._device)(_v.slice(nxt, 0, k, n, 1), step)
        vals, k = nxt, k * 2
    return vals


def _reduce_runs(targets, vals, op, n_out, dtype):
    """Buffer of n_out where each target position holds `op` over the values sent to it."""
    keys, order = _prim_sort(targets, 0)
    scanned = _segment_scan(keys, _select1d(vals, order), op)
    n = keys.numel()
    last = _full((n,), True, dt.bool_, keys._device)
    if n > 1:
        lookup("ne", keys._device)(_v.slice(last, 0, 0, n - 1, 1), _v.slice(keys, 0, 0, n - 1, 1),
                                   _v.slice(keys, 0, 1, n, 1))
    buf = _full((n_out,), _neutral(dtype), dtype, keys._device)
    return _scatter_add_into(buf, 0, keys, _where(last, scanned, _neutral(dtype)))


def _combine(reduce):
    from tensorlib.ops import pointwise as p
    return {"prod": p.mul, "amax": p.maximum, "amin": p.minimum}[reduce]


@differentiable("scatter_reduce")
def _scatter_reduce(x, dim, index, src, reduce, include_self):
    dev, dtype, n_out = x._device, x._dtype, x.numel()
    base = x.reshape(-1)
    if index.numel() == 0:
        return x.clone()
    targets = dim_positions(_as1d(index), dim, _as1d(x)._sizes).reshape(-1)
    vals = src.reshape(-1)
    count = _full((n_out,), 0, dt.int64, dev)
    _scatter_add_into(count, 0, targets, _full((targets.numel(),), 1, dt.int64, dev))
    if reduce in ("sum", "mean"):
        acc = _scatter_add_into(_full((n_out,), 0, dtype, dev), 0, targets, vals)
        if include_self:
            acc = acc + base
        if reduce == "mean":
            from tensorlib.ops.pointwise import div, floor_divide
            total = count + 1 if include_self else _where(count > 0, count, 1)
            acc = div(acc, total) if dtype.is_floating_point else floor_divide(acc, total)
            acc = _as_dtype(acc, dtype)
    else:
        acc = _reduce_runs(targets, vals, _combine(reduce), n_out, dtype)
        if include_self:
            acc = _combine(reduce)(acc, base)
    return _where((count > 0).view(x._sizes), acc.view(x._sizes), x)


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
    sizes = list(x._sizes)
    sizes[dim] = index.numel()
    out = empty(tuple(sizes), x._dtype, x._device)
    if out.numel():
        lookup("index_select", x._device)(out, x, dim, index.reshape(-1))
    return out


def index_select(input, dim, index):  # noqa: A002
    """The slices of input along dim at the positions in the 1-D index (repeats allowed)."""
    _check_vector_index("index_select", index)
    _same_device("index_select", input, index)
    d = _v.wrap_dim(dim, max(input.dim(), 1))
    if input.dim() == 0 and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{index.numel()} value(s)")
    size = input._sizes[d] if input.dim() else 1
    rest = numel(input._sizes[:d] + input._sizes[d + 1:])      # an empty output runs no kernel
    check_bounds(index, size, d, exc=IndexOutOfBounds, kernel="index_select" if rest else None)
    return _index_select(input, d, _long(index).reshape(-1))


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
    _check_mask("masked_fill_", mask)
    _check_value("masked_fill_", value)
    _check_fits(value, input._dtype)
    return _masked_fill(input, mask, value)


@differentiable("masked_select")
def _masked_select(x, mask):
    shape = broadcast_shapes(x._sizes, mask._sizes)
    pos = mask_positions(mask.expand(shape), "masked_select")
    return _select1d(x.expand(shape).reshape(-1), pos)


def masked_select(input, mask):  # noqa: A002
    """1-D tensor of input's elements where mask is True (row-major; both broadcast)."""
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
    mask = input if input._dtype is dt.bool_ else input != 0
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


# ---- sorting ------------------------------------------------------------------------------
@differentiable("sort")
def _sort(x, dim, descending, stable):
    if x.dim() == 0:
        return sort_result(x.clone(), _full((), 0, dt.int64, x._device))
    values, indices = empty(x._sizes, x._dtype, x._device), empty(x._sizes, dt.int64, x._device)
    if x.numel():
        lookup("sort", x._device)(values, indices, x, dim, bool(descending), True)
    return sort_result(values, indices)


def sort(input, dim=-1, descending=False, stable=False):  # noqa: A002
    """(values, indices) sorted along dim. Always stable (equal elements keep their order), so
    stable=True costs nothing; NaN sorts as the largest value."""
    return _sort(input, _v.wrap_dim(dim, max(input.dim(), 1)), bool(descending), bool(stable))


def argsort(input, dim=-1, descending=False, stable=False):  # noqa: A002
    return sort(input, dim, descending, stable).indices


def msort(input):  # noqa: A002
    return sort(input, 0).values


@differentiable("topk")
def _topk(x, k, dim, largest, sorted_):
    values, indices = _sort.__wrapped__(x, dim, largest, True)
    if x.dim() == 0:
        return topk_result(values, indices)
    return topk_result(values.narrow(dim, 0, k).contiguous(),
                       indices.narrow(dim, 0, k).contiguous())


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    """The k largest (or smallest) elements along dim with their indices, in sorted order
    (also when sorted=False, which PyTorch allows); ties keep index order."""
    d = _v.wrap_dim(dim, max(input.dim(), 1))
    size = input._sizes[d] if input.dim() else 1
    if input._dtype is dt.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    return _topk(input, int(k), d, bool(largest), bool(sorted))


@differentiable("kthvalue")
def _kthvalue(x, k, dim, keepdim):
    values, indices = _sort.__wrapped__(x, dim, False, True)
    if x.dim() == 0:
        return kthvalue_result(values, indices)
    if keepdim:
        return kthvalue_result(values.narrow(dim, k - 1, 1).contiguous(),
                               indices.narrow(dim, k - 1, 1).contiguous())
    return kthvalue_result(values.select(dim, k - 1).contiguous(),
                           indices.select(dim, k - 1).contiguous())


def kthvalue(input, k, dim=-1, keepdim=False):  # noqa: A002
    """The k-th smallest element along dim (k from 1) and its index."""
    d = _v.wrap_dim(dim, max(input.dim(), 1))
    size = input._sizes[d] if input.dim() else 1
    if size == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _kthvalue(input, int(k), d, bool(keepdim))


# ---- searching and counting -------------------------------------------------------------
def _check_side(right, side):
    if side not in (None, "left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                           f"{side}")
    if side is not None and right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                           "got side of left while right was True")
    return bool(right) or side == "right"


def _binary_search(seq, values, right):
    """Vectorised binary search: seq (R, n) sorted rows, values (R, m); per value the count of
    row elements < value (<= with right). NaN sorts last, as in sort."""
    n = seq._sizes[1]
    lo = _full(values._sizes, 0, dt.int64, values._device)
    hi = _full(values._sizes, n, dt.int64, values._device)
    if n == 0 or values.numel() == 0:
        return lo
    nan_value = values.isnan() if values._dtype.is_floating_point else None
    for _ in range(n.bit_length()):
        active = lo < hi
        mid = (lo + hi) // 2
        probe = _gather.__wrapped__(seq, 1, _where(mid < n, mid, n - 1))
        go = (probe <= values) if right else (probe < values)
        if nan_value is not None:
            go = go | (nan_value & probe.isnan().logical_not())
        go = go & active
        stay = active & go.logical_not()
        lo = _where(go, mid + 1, lo)
        hi = _where(stay, mid, hi)
    return lo


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,  # noqa
                 sorter=None):
    """Insertion points of input's values into the sorted last dim of sorted_sequence."""
    right = _check_side(right, side)
    seq = sorted_sequence
    scalar = not isinstance(input, TensorImpl)
    if scalar:
        input = scalar_tensor(input, seq._dtype, seq._device)  # noqa: A001
    if sorter is not None:
        seq = gather(seq, -1, sorter)
    if seq.dim() != 1 and (seq.dim() != input.dim() or seq._sizes[:-1] != input._sizes[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           f"the first N-1 dimensions of boundaries tensor and input value "
                           f"tensor must match, but we got boundaries tensor "
                           f"{list(seq._sizes)} and input value tensor {list(input._sizes)}")
    from tensorlib._C.promotion import result_type
    common = result_type((seq, input))
    seq, values = _as_dtype(seq, common), _as_dtype(input, common)
    n = seq._sizes[-1] if seq.dim() else 1
    rows = 1 if seq.dim() <= 1 else numel(seq._sizes[:-1])
    out = _binary_search(seq.reshape(rows, n), values.reshape(rows, -1), right)
    out = out.view(input._sizes)
    return _as_dtype(out, dt.int32) if out_int32 else out


def bucketize(input, boundaries, *, out_int32=False, right=False):  # noqa: A002
    """Bucket of each value: i with boundaries[i-1] < x <= boundaries[i] (right: <= x <)."""
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def bincount(input, weights=None, minlength=0):  # noqa: A002
    """Count of each value 0..max(input) (or sum of weights); not differentiable."""
    if input._dtype.is_floating_point or input._dtype is dt.bool_:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{input._dtype.scalar_name}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input._device.type == "meta":
        raise data_dependent_on_meta("bincount")
    if input.dim() != 1 or (input.numel() and (input < 0).any().item()):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.dim() != 1 or weights._sizes[0] != input._sizes[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if input.numel() == 0:                  # PyTorch: int64 zeros, whatever the weights
        return _full((int(minlength),), 0, dt.int64, input._device)
    size = max(int(input.amax().item()) + 1 if input.numel() else 0, int(minlength))
    if weights is None:
        dtype, src = dt.int64, _full(input._sizes, 1, dt.int64, input._device)
    else:
        dtype = weights._dtype if weights._dtype.is_floating_point else dt.float64
        src = _as_dtype(weights.detach(), dtype)
    return _scatter_add_into(_full((size,), 0, dtype, input._device), 0, input, src)


def histc(input, bins=100, min=0, max=0):  # noqa: A001,A002
    """Histogram of equal-width bins over [min, max] (the data's range when min == max);
    values outside are ignored, max falls in the last bin. Not differentiable."""
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for "
                                  f"'{input._dtype.scalar_name}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histc(): bins must be > 0, but got {bins} for bins")
    x = input.detach().reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and x.numel():
        lo, hi = float(x.amin().item()), float(x.amax().item())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc(): max must be larger than min")
    inside = (x >= lo) & (x <= hi)
    pos = ((x - lo) * bins / (hi - lo)).floor()
    slot = _where(inside, _where(pos < bins, pos, bins - 1), bins)
    counts = _full((bins + 1,), 0, input._dtype, input._device)
    _scatter_add_into(counts, 0, _long(slot), _full(x._sizes, 1, input._dtype, input._device))
    return _v.slice(counts, 0, 0, bins, 1).contiguous()


def _runs(values):
    """Bool (n,): True where a run of equal values starts (NaNs never equal: each its own)."""
    n = values.numel()
    start = _full((n,), True, dt.bool_, values._device)
    if n > 1:
        lookup("ne", values._device)(_v.slice(start, 0, 1, n, 1), _v.slice(values, 0, 1, n, 1),
                                     _v.slice(values, 0, 0, n - 1, 1))
    return start


def _unique_runs(flat, order, shape, return_inverse, return_counts):
    n = flat.numel()
    start = _runs(flat)
    starts = mask_positions(start, "_unique2" if order is not None else "unique_consecutive")
    out = [_select1d(flat, starts)]
    if return_inverse:
        run_id = _cumsum(start) - 1
        inverse = _full((n,), 0, dt.int64, flat._device)
        if order is None:
            inverse = run_id
        else:
            _scatter_add_into(inverse, 0, order, run_id)
        out.append(inverse.view(shape))
    if return_counts:
        m = starts.numel()
        ends = _full((m,), n, dt.int64, flat._device)
        if m > 1:
            lookup("copy", flat._device)(_v.slice(ends, 0, 0, m - 1, 1),
                                         _v.slice(starts, 0, 1, m, 1))
        out.append(ends - starts)
    return out[0] if len(out) == 1 else tuple(out)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa
    """Sorted distinct values (also for sorted=False, which PyTorch allows), with optional
    inverse indices and counts; with dim, the distinct slices along dim. Not differentiable."""
    if dim is not None:
        return _unique_dim(input, dim, True, return_inverse, return_counts)
    flat, order = _prim_sort(input.detach().reshape(-1), 0)
    return _unique_runs(flat, order, input._sizes, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):  # noqa
    """Collapses runs of equal consecutive elements (of the flattened input, or of the slices
    along dim)."""
    if dim is not None:
        return _unique_dim(input, dim, False, return_inverse, return_counts)
    flat = input.detach().reshape(-1)
    return _unique_runs(flat, None, input._sizes, return_inverse, return_counts)


def _unique_dim(input, dim, sort, return_inverse, return_counts):
    """The distinct slices along dim: each slice flattened to a row, the rows sorted
    lexicographically (stable sorts from the last column to the first) when `sort`, then
    runs of equal rows collapsed."""
    x = input.detach()
    if x.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _v.wrap_dim(dim, x.dim())
    if any(s == 0 for i, s in enumerate(x._sizes) if i != d):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    n = x._sizes[d]
    rest = x._sizes[:d] + x._sizes[d + 1:]
    rows = x.movedim(d, 0).reshape(n, -1)
    order = _arange(n, x._device)
    if sort:
        for c in range(rows._sizes[1] - 1, -1, -1):
            column = _index_select(rows, 0, order).select(1, c).contiguous()
            order = _select1d(order, _prim_sort(column, 0)[1])
        rows = _index_select(rows, 0, order)
    start = _full((n,), True, dt.bool_, x._device)
    if n > 1:
        lookup("copy", x._device)(_v.slice(start, 0, 1, n, 1), (rows[1:] != rows[:-1]).any(1))
    starts = mask_positions(start, "unique_dim" if sort else "unique_dim_consecutive")
    values = _index_select(rows, 0, starts).reshape((starts.numel(),) + rest).movedim(0, d)
    out = [values]
    if return_inverse:
        inverse = _full((n,), 0, dt.int64, x._device)
        _scatter_add_into(inverse, 0, order, _cumsum(start) - 1)
        out.append(inverse)
    if return_counts:
        ends = _full((starts.numel(),), n, dt.int64, x._device)
        if starts.numel() > 1:
            lookup("copy", x._device)(_v.slice(ends, 0, 0, starts.numel() - 1, 1),
                                      _v.slice(starts, 0, 1, starts.numel(), 1))
        out.append(ends - starts)
    return out[0] if len(out) == 1 else tuple(out)


def one_hot(tensor, num_classes=-1):
    """(*, num_classes) int64 with a 1 at each value (num_classes=-1: max + 1)."""
    if tensor._dtype is not dt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.amax().item()) + 1
    if tensor.numel():
        if (tensor < 0).any().item():
            raise RuntimeError("Class values must be non-negative.")
        if (tensor >= num_classes).any().item():
            raise RuntimeError("Class values must be smaller than num_classes.")
    classes = _arange(num_classes, tensor._device)
    return _long(tensor.unsqueeze(-1) == classes)


# ---- in-place variants ---------------------------------------------------------------------
def _requires_grad(*xs):
    return any(isinstance(x, TensorImpl) and x._requires_grad for x in xs)


def write_inplace(self, compute, *others):
    """self.op_(...): `compute(self)` (the out-of-place op) written into self; one code path
    for every backend. Under autograd, recording.apply_inplace keeps saved values intact and
    hands self the op's history."""
    from tensorlib.ops.copy import check_no_internal_overlap
    check_no_internal_overlap(self)
    if _gm.is_grad_enabled() and _requires_grad(self, *others):
        from tensorlib.autograd.recording import apply_inplace
        return apply_inplace(self, compute)
    result = compute(self)
    if result._sizes != self._sizes:
        raise RuntimeError(f"output with shape {list(self._sizes)} doesn't match the broadcast "
                           f"shape {list(result._sizes)}")
    lookup("copy", self._device)(self, result)
    self._storage.version += 1
    return self


def _method(fn, name):
    def inplace(self, *args, **kwargs):
        others = [a for a in list(args) + list(kwargs.values()) if isinstance(a, TensorImpl)]
        return write_inplace(self, lambda s: fn(s, *args, **kwargs), *others)
    inplace.__name__ = name
    inplace.__doc__ = f"In-place {fn.__name__}: see {fn.__name__}."
    return inplace


def _scatter_method(self, dim, index, src=None, value=None, *, reduce=None):
    return scatter(self, dim, index, src, value, reduce=reduce)


def _masked_fill_inplace(self, mask, value):
    _check_mask("masked_fill_", mask)
    if broadcast_shapes(self._sizes, mask._sizes) != self._sizes:
        raise RuntimeError(f"output with shape {list(self._sizes)} doesn't match the broadcast "
                           f"shape {list(broadcast_shapes(self._sizes, mask._sizes))}")
    return _method(masked_fill, "masked_fill_")(self, mask, value)


__all__ = ["gather", "scatter", "scatter_add", "scatter_reduce", "index_select", "index_add",
           "index_copy", "index_fill", "masked_fill", "masked_select", "masked_scatter",
           "nonzero", "argwhere", "take", "take_along_dim", "sort", "argsort", "msort", "topk",
           "kthvalue", "searchsorted", "bucketize", "bincount", "histc", "unique",
           "unique_consecutive"]

TENSOR_METHODS = {name: globals()[name] for name in __all__
                  if name not in ("searchsorted", "bucketize")}
TENSOR_METHODS.update({
    "scatter": _scatter_method,
    "scatter_": _method(_scatter_method, "scatter_"),
    "scatter_add_": _method(scatter_add, "scatter_add_"),
    "scatter_reduce_": _method(scatter_reduce, "scatter_reduce_"),
    "index_add_": _method(index_add, "index_add_"),
    "index_copy_": _method(index_copy, "index_copy_"),
    "index_fill_": _method(index_fill, "index_fill_"),
    "masked_fill_": _masked_fill_inplace,
    "masked_scatter_": _method(masked_scatter, "masked_scatter_"),
})
