"""gather, scatter, scatter_add and scatter_reduce, built from the gather and scatter_add
primitives plus elementwise arithmetic on int64 index tensors, so they run on any backend.
scatter_add adds in row-major order of the index (deterministic on the CPU backend); an
overwriting scatter keeps the last write (`_index_common`)."""
import tensorlib._C.dtypes as dt
from tensorlib._C import scatter_args as _scatter_args
from tensorlib._C import views as _v
from tensorlib._C.dispatch import lookup
from tensorlib._C.factory import empty, scalar_tensor
from tensorlib._C.tensor_impl import TensorImpl, numel
from tensorlib.backends.interface import IndexOutOfBounds
from tensorlib.ops._opdef import differentiable
from tensorlib.ops._unsigned import refuse_unsigned
from tensorlib.ops._where import where as _where
from tensorlib.ops._index_common import (_as_dtype, _check_index_dtype, _full, _method,
                                         _narrow_to, _neutral, _prim_sort,
                                         _scatter_add_into, _select1d, check_bounds,
                                         dim_positions, overwrite)



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
    refuse_unsigned("scatter_gather_tensor_cpu", input._dtype)
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
    refuse_unsigned("scatter_gather_tensor_cpu", input._dtype)
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
    refuse_unsigned("scatter_gather_tensor_cpu", input._dtype)
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
    refuse_unsigned("scatter_gather_tensor_cpu", input._dtype)
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


def _scatter_method(self, dim, index, src=None, value=None, *, reduce=None):
    return scatter(self, dim, index, src, value, reduce=reduce)


__all__ = ["gather", "scatter", "scatter_add", "scatter_reduce"]

TENSOR_METHODS = {name: globals()[name] for name in __all__}
TENSOR_METHODS.update({
    "scatter": _scatter_method,
    "scatter_": _method(_scatter_method, "scatter_"),
    "scatter_add_": _method(scatter_add, "scatter_add_"),
    "scatter_reduce_": _method(scatter_reduce, "scatter_reduce_"),
})
