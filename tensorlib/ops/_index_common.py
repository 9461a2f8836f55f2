"""What the index ops share: small helpers over the primitives (full, arange, sorting one
dim, cumulative sums), index checks (dtype, device, bounds with PyTorch's messages), the
positions a write lands on and which duplicate write survives, and the in-place variants'
one code path (`write_inplace`).

Determinism: where PyTorch leaves duplicate writes unspecified (scatter without reduce,
index_copy, index_put, x[idx] = v), tensorlib defines them: the write that comes last in
row-major order of the index wins (`last_writer`), and the gradient goes to that element only
(so gradcheck holds with duplicates).

Bounds are checked in the op (one device reduction and one .item() per index tensor), so a
backend's kernels need not check -- except where the primitive that reads the index as given
(gather, scatter_add, index_select) has a kernel that checks itself (`checks_bounds`, see
tensorlib/backends/interface.py); out-of-range errors are IndexError (for gather/scatter, where
PyTorch raises RuntimeError, the exception is both)."""
import tensorlib._C.dtypes as dt
from tensorlib._C import grad_mode as _gm
from tensorlib._C import views as _v
from tensorlib._C.dispatch import lookup
from tensorlib._C.factory import empty, cast
from tensorlib._C.tensor_impl import TensorImpl, contiguous_strides
from tensorlib._meta import data_dependent_on_meta
from tensorlib.ops._composites import optional_kernel
from tensorlib.ops._where import where as _where

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


def true_count(mask):
    """The number of True elements of a bool tensor: the backend's count, else sum().item()."""
    kernel = optional_kernel(mask._device, "mask_count")
    return kernel(mask) if kernel is not None else int(mask.sum().item())


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
    kernel = optional_kernel(mask._device, "mask_positions")     # one pass, not six ops
    if kernel is not None and flat._dtype is dt.bool_:
        out = empty((true_count(flat),), dt.int64, mask._device)
        if kernel(out, flat):
            return out
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



# ---- in-place variants: one code path -----------------------------------------------------
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
