"""x[key], x[key] = value and index_put(_), with PyTorch's (numpy's) rules.

Ints, slices, None and Ellipsis make views. Advanced keys -- integer index tensors or lists
(broadcast together), bool masks of any rank (turned into index tensors by nonzero), Python
bools -- are applied after those views: the storage position of every picked element is
computed on the device (index * stride + arange terms) and gathered with index_select; a write
goes through scatter_add (accumulate) or a last-write-wins overwrite. As in PyTorch, ints select
before the advanced indices are placed: the advanced dims replace the indexed dims where these
are adjacent, and go first otherwise."""
import numbers

import numpy as np

import tensorlib._C.dtypes as dt
from tensorlib._C import grad_mode as _gm
from tensorlib._C import views as _v
from tensorlib._C.broadcast import broadcast_shapes
from tensorlib._C.dispatch import lookup
from tensorlib._C.factory import empty, cast, scalar_tensor
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.ops._opdef import differentiable

_INDEX_DTYPES = (dt.int64, dt.int32, dt.uint8, dt.bool_)


class Key:
    """A parsed key: None / int / slice / NewAxis / int64 index tensors, Ellipsis expanded,
    masks already turned into index tensors, negative indices wrapped. Not a tuple, so
    autograd holds it as a plain argument."""
    __slots__ = ("items", "unique")

    def __init__(self, items, unique=False):
        self.items = tuple(items)
        self.unique = unique          # only masks: no element is picked twice

    def advanced(self):
        return any(isinstance(k, (TensorImpl, NewAxis)) for k in self.items)


class NewAxis:
    """A Python bool in a key: a new size-1 dim, indexed by [0] (True) or [] (False)."""
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


# ---- parsing --------------------------------------------------------------------------
def _bad_key(k):
    return IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                      f"Variables are valid indices (got {type(k).__name__})")


def _as_index_tensor(k, device):
    """Lists, numpy arrays and tensors as an index tensor on `device`."""
    import tensorlib
    if not isinstance(k, TensorImpl):
        arr = np.asarray(k)
        if arr.dtype == object:
            raise _bad_key(k)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype(np.int64)
        if arr.dtype.kind in "iu" and arr.dtype != np.uint8:
            arr = arr.astype(np.int64)
        k = tensorlib.tensor(arr)
    if k._dtype not in _INDEX_DTYPES:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return k if k._device is device else k.to(device)


def _classify(k, device):
    """One key entry in a canonical form (ints, bools, tensors, None, slices, Ellipsis)."""
    if k is None or k is Ellipsis or isinstance(k, slice):
        return k
    if isinstance(k, (bool, np.bool_)):
        return bool(k)
    if isinstance(k, numbers.Integral):
        return int(k)
    if isinstance(k, (TensorImpl, list, tuple, range, np.ndarray)):   # range: x[range(n), y]
        t = _as_index_tensor(k, device)
        if t.dim() == 0 and t._dtype in (dt.bool_, dt.uint8):
            return bool(t.item())
        if t.dim() == 0:
            return int(t.item())            # PyTorch treats a 0-d index tensor as an int
        return t
    raise _bad_key(k)


def _consumes(k):
    if isinstance(k, TensorImpl):
        return k.dim() if k._dtype in (dt.bool_, dt.uint8) else 1
    return 1 if isinstance(k, (int, slice)) and not isinstance(k, bool) else 0


def _expand_ellipsis(x, items):
    consumed = sum(_consumes(k) for k in items)
    if consumed > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()}")
    positions = [i for i, k in enumerate(items) if k is Ellipsis]
    if len(positions) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if positions:
        i = positions[0]
        items = items[:i] + [slice(None)] * (x.dim() - consumed) + items[i + 1:]
    return items


def _mask_indices(x, mask, cursor):
    from tensorlib.ops.selection import nonzero
    for j, n in enumerate(mask._sizes):
        if n != x._sizes[cursor + j]:
            raise IndexError(f"The shape of the mask {list(mask._sizes)} at index {j} does not "
                             f"match the shape of the indexed tensor {list(x._sizes)} at index "
                             f"{cursor + j}")
    return list(nonzero(mask if mask._dtype is dt.bool_ else mask != 0, as_tuple=True))


def _resolve(x, items):
    """Masks become index tensors (MaskIndex), Python bools NewAxis entries."""
    out, cursor = [], 0
    for k in items:
        if isinstance(k, bool):
            zeros = empty((1 if k else 0,), dt.int64, x._device)
            lookup("fill", x._device)(zeros, 0)
            out.append(NewAxis(zeros))
        elif isinstance(k, TensorImpl) and k._dtype in (dt.bool_, dt.uint8):
            out.extend(MaskIndex(t) for t in _mask_indices(x, k, cursor))
            cursor += k.dim()
        else:
            out.append(k)
            cursor += _consumes(k)
    return out


def apply_basic(x, items):
    """(view, [(dim of view, index tensor)]): ints, slices and None applied as views."""
    out, dim, adv = x, 0, []
    for k in items:
        if k is None:
            out = _v.unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, NewAxis):
            out = _v.unsqueeze(out, dim)
            adv.append((dim, k.index))
            dim += 1
        elif isinstance(k, MaskIndex):
            adv.append((dim, k.index))
            dim += 1
        elif isinstance(k, int):
            out = _v.select(out, dim, k)
        elif isinstance(k, slice):
            step = 1 if k.step is None else int(k.step)
            out = _v.slice(out, dim, k.start, k.stop, step)
            dim += 1
        else:
            adv.append((dim, k))
            dim += 1
    return out, adv


class MaskIndex:
    """The index tensor of one dim of a bool mask (in range, non-negative, never repeated)."""
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def _wrapped(x, items):
    """Index tensors checked against their dim's size and made non-negative. As in
    PyTorch: a zero-size indexed dim rejects indices that broadcast to a non-empty shape,
    and an empty result checks none."""
    from tensorlib.ops._index_common import check_bounds, wrap_index
    view, adv = apply_basic(x, items)
    sizes = {id(t): (d, view._sizes[d]) for d, t in adv}
    block, _, _, shape = _layout(view._sizes, adv)
    if 0 not in block and any(view._sizes[d] == 0 for d, _ in adv):
        raise IndexError("index is out of bounds for dimension with size 0")
    empty_result = 0 in shape
    out = []
    for k in items:
        if isinstance(k, TensorImpl):
            d, size = sizes[id(k)]
            if not empty_result:
                check_bounds(k, size, d, negative=True)
            k = wrap_index(k, size)
        out.append(k.index if isinstance(k, MaskIndex) else k)
    return out


_SEQUENCE_AS_TUPLE_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
    "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will "
    "be interpreted as tensor index, x[torch.tensor(seq)], which will result either in an "
    "error or a different result")


def _list_as_tuple(key):
    """PyTorch still reads a short list holding a tensor, a sequence, a slice, Ellipsis or
    None as a tuple of indices (NumPy's old rule, with its deprecation warning):
    `x[[slice(0, 2), slice(None)]]` is `x[0:2, :]`, `x[[[0, 1], [1, 0]]]` is `x[[0, 1], [1, 0]]`."""
    if len(key) >= 32:
        return False
    for k in key:
        if isinstance(k, (TensorImpl, list, tuple, slice)) or k is Ellipsis or k is None:
            import warnings
            warnings.warn(_SEQUENCE_AS_TUPLE_WARNING, UserWarning, stacklevel=4)
            return True
    return False


def parse_key(x, key):
    """The Key for x[key]: every check PyTorch makes, done once."""
    if type(key) is list and _list_as_tuple(key):
        key = tuple(key)
    items = [_classify(k, x._device) for k in (key if isinstance(key, tuple) else (key,))]
    items = _expand_ellipsis(x, items)
    for k in items:                          # checked before the masks' shapes, as PyTorch
        if isinstance(k, slice) and k.step is not None and k.step <= 0:
            raise ValueError("step must be greater than zero")
    items = _resolve(x, items)
    if not any(isinstance(k, (TensorImpl, MaskIndex, NewAxis)) for k in items):
        return Key(items)
    unique = not any(isinstance(k, TensorImpl) for k in items)
    return Key(_wrapped(x, items), unique)


# ---- positions --------------------------------------------------------------------------
def _layout(sizes, adv):
    """Where the result's dims come from: (broadcast index shape, kept dims, index of the
    first kept dim after the advanced block, result shape)."""
    dims = [d for d, _ in adv]
    try:
        block = broadcast_shapes(*(t._sizes for _, t in adv)) if adv else ()
    except RuntimeError:
        shapes = ", ".join(str(list(t._sizes)) for _, t in adv)
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together "
                         f"with shapes {shapes}") from None
    adjacent = bool(dims) and dims == list(range(dims[0], dims[0] + len(dims)))
    rest = [i for i in range(len(sizes)) if i not in dims]
    lead = dims[0] if adjacent else 0
    shape = tuple(sizes[i] for i in rest[:lead]) + tuple(block) + \
        tuple(sizes[i] for i in rest[lead:])
    return tuple(block), rest, lead, shape


def positions(view, adv):
    """int64 tensor of the result's shape: the storage position (view's strides and offset)
    of each element the advanced indices pick from `view`."""
    sizes, strides, dev = view._sizes, view._strides, view._device
    block, rest, lead, shape = _layout(sizes, adv)
    term = scalar_tensor(view._offset, dt.int64, dev)
    for d, t in adv:
        term = term + t * strides[d]
    nd = len(shape)
    pos = term.view((1,) * lead + block + (1,) * (nd - lead - len(block)))
    from tensorlib.ops.creation import arange
    for j, i in enumerate(rest):
        if sizes[i] == 1:
            continue
        view_shape = [1] * nd
        view_shape[j if j < lead else j + len(block)] = sizes[i]
        pos = pos + arange(sizes[i], device=dev).view(tuple(view_shape)) * strides[i]
    return pos.expand(shape) if pos._sizes != shape else pos


def index_positions(shape, device, key):
    """Row-major flat position, in a tensor of `shape`, of each element x[key] picks."""
    dummy = empty(tuple(shape), dt.bool_, device)
    view, adv = apply_basic(dummy, key.items)
    return positions(view, adv)


def _storage_1d(x):
    return _v.as_strided(x, (x._storage._nbytes // x._dtype.itemsize,), (1,), 0)


# ---- reading ----------------------------------------------------------------------------
@differentiable("getitem")
def _getitem(x, key):
    view, adv = apply_basic(x, key.items)
    if not adv:
        return view
    pos = positions(view, adv)
    out = empty((pos.numel(),), x._dtype, x._device)
    if pos.numel():
        lookup("index_select", x._device)(out, _storage_1d(x), 0, pos.reshape(-1))
    return out.view(pos._sizes)


def getitem(x, key):
    """x[key]: a view for ints/slices/None/Ellipsis, a copy with advanced indices."""
    if isinstance(key, TensorImpl) and key._sizes and x._sizes and key._device is x._device \
            and x._device.type != "meta":          # meta: the general path's errors
        if key._dtype is dt.int64:
            rows = _rows_by_index(x, key)
            if rows is not None:
                return rows
        elif key._dtype is dt.bool_ and key._sizes == x._sizes[:len(key._sizes)] and \
                len(key._sizes) in (1, len(x._sizes)):
            return _by_mask(x, key)
    return _getitem(x, parse_key(x, key))


def _by_mask(x, mask):
    """x[mask] for a mask of x's shape (masked_select) or of its first dim (the rows where
    it is True): the general path's nonzero, coordinates and positions took 80-100 us at
    8x256 against PyTorch's 8."""
    from tensorlib.ops._index_common import mask_positions
    from tensorlib.ops.selection import _index_select, _masked_select
    if len(mask._sizes) == len(x._sizes):
        return _masked_select(x, mask)
    return _index_select(x, 0, mask_positions(mask))


def _rows_by_index(x, index):
    """x[index] for an int64 tensor of in-range rows (a batch picked by index): one
    index_select, where the general path computes every element's storage position (66 us
    against PyTorch's 3.5 for 8 of 8x256 rows). None for a negative or out-of-range index:
    the general path wraps it or raises PyTorch's error."""
    from tensorlib.ops.selection import _index_select
    if not getattr(lookup("index_select", x._device), "checks_bounds", False):
        return None
    try:
        out = _index_select(x, 0, index.reshape(-1))
    except IndexError:
        return None
    return out.view(index._sizes + x._sizes[1:])


# ---- writing ----------------------------------------------------------------------------
@differentiable("index_put")
def _index_put(x, key, values, accumulate):
    from tensorlib.ops._index_common import overwrite
    pos = index_positions(x._sizes, x._device, key)
    vals = values if values._dtype is x._dtype else cast(values, x._dtype)
    vals = vals.expand(pos._sizes)
    if not accumulate:
        return overwrite(x, pos, vals, key.unique)
    out = empty(x._sizes, x._dtype, x._device)
    lookup("copy", x._device)(out, x)
    if pos.numel():
        lookup("scatter_add", x._device)(out.view((-1,)), 0, pos.reshape(-1),
                                         vals.reshape(-1))
    return out


def _result_shape(x, key):
    view, adv = apply_basic(x, key.items)
    return _layout(view._sizes, adv)[3]


def _fit_values(values, shape):
    """values broadcastable to the indexing result (leading size-1 dims dropped, as PyTorch)."""
    v = values
    while v.dim() > len(shape) and v._sizes[0] == 1:
        v = v.squeeze(0)
    try:
        ok = broadcast_shapes(v._sizes, tuple(shape)) == tuple(shape)
    except RuntimeError:
        ok = False
    if not ok:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values._sizes)} "
                           f"cannot be broadcast to indexing result of shape {list(shape)}")
    return v


def _put(x, key, values, accumulate):
    from tensorlib.ops._index_common import write_inplace
    values = _fit_values(values, _result_shape(x, key))
    return write_inplace(x, lambda s: _index_put(s, key, values, accumulate), values)


def _indices_key(x, indices):
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    if len(indices) > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()} (got "
                         f"{len(indices)})")
    return parse_key(x, tuple(slice(None) if i is None else i for i in indices))


def _check_values(name, x, values):
    if not isinstance(values, TensorImpl):
        raise TypeError(f"{name}(): argument 'values' (position 2) must be Tensor, not "
                        f"{type(values).__name__}")
    if values._dtype is not x._dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{x._dtype.scalar_name} for the destination and "
                           f"{values._dtype.scalar_name} for the source.")


def index_put_(x, indices, values, accumulate=False):
    """x[indices] = values (or += with accumulate, repeated indices adding up), in place."""
    _check_values("index_put_", x, values)
    return _put(x, _indices_key(x, indices), values.to(x._device), bool(accumulate))


def index_put(x, indices, values, accumulate=False):
    """Out-of-place index_put_."""
    _check_values("index_put", x, values)
    key = _indices_key(x, indices)
    values = _fit_values(values.to(x._device), _result_shape(x, key))
    return _index_put(x, key, values, bool(accumulate))


def setitem(x, key, value):
    """x[key] = value (value broadcast and converted to x's dtype); repeated advanced indices:
    the last write wins."""
    if isinstance(value, TensorImpl) and value._dtype is not x._dtype and \
            _has_integer_index(key):
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{x._dtype.scalar_name} for the destination and "
                           f"{value._dtype.scalar_name} for the source.")
    parsed = parse_key(x, key)
    recording = _gm.is_grad_enabled() and (x._requires_grad or getattr(value, "_requires_grad",
                                                                        False))
    if not parsed.advanced() and not recording:
        view, _ = apply_basic(x, parsed.items)
        if isinstance(value, TensorImpl):
            view.copy_(_fit_values(value, view._sizes))
        else:
            view.fill_(value)
        return
    if not isinstance(value, TensorImpl):
        value = scalar_tensor(value, x._dtype, x._device)
    elif value._device is not x._device:
        value = value.to(x._device)
    _put(x, parsed, value, False)


def _has_integer_index(key):
    """Whether a key holds an integer index tensor or list (PyTorch's index_put path, which
    takes values of x's dtype only)."""
    for k in key if isinstance(key, tuple) else (key,):
        if isinstance(k, TensorImpl) and k.dim() and k._dtype not in (dt.bool_, dt.uint8):
            return True
        if isinstance(k, (list, np.ndarray)) and np.asarray(k).dtype.kind in "iu":
            return True
    return False


@differentiable("take_flat")
def take_flat(src, index):
    """src.reshape(-1)[index], shaped like index (gathers through the index_select
    primitive); the adjoint of index_add_flat."""
    flat = src.reshape(-1)
    out = empty((index.numel(),), src._dtype, src._device)
    if index.numel():
        lookup("index_select", src._device)(out, flat, 0, index.reshape(-1))
    return out.view(index._sizes)


@differentiable("index_add_flat")
def index_add_flat(src, index, shape):
    """zeros(shape) with src added at the flat positions `index` (repeats add up): scatters
    a view's gradient back onto its input."""
    from tensorlib.ops.creation import zeros
    out = zeros(int(np.prod(shape)), dtype=src._dtype, device=src._device)
    if index.numel():
        lookup("scatter_add", src._device)(out, 0, index.reshape(-1), src.reshape(-1))
    return out.view(tuple(shape))


TENSOR_METHODS = {"index_put_": index_put_, "index_put": index_put}
__all__ = ["index_put"]
