"""Reductions over dims: sum, mean, prod, amax/amin, max/min (values and indices),
argmax/argmin. Each allocates the keepdim-shaped output, calls the backend's primitive, then
drops the reduced dims unless keepdim."""
from collections import namedtuple

import tensorlib._C.dtypes as dt
from tensorlib._C.dispatch import lookup
from tensorlib._C.factory import empty, cast
from tensorlib._C.reductions import reduce as _reduce
from tensorlib._C import views as _v
from tensorlib._C.views import wrap_dim
from tensorlib.ops._args import dims_arg
from tensorlib.ops._composites import optional_kernel
from tensorlib.ops._opdef import differentiable
from tensorlib.ops._unsigned import refuse_unsigned

# torch.return_types.max / .min (tensorlib/return_types.py names them)
max_out = namedtuple("max", ["values", "indices"])
min_out = namedtuple("min", ["values", "indices"])


def _keep_shape(sizes, dims):
    return tuple(1 if i in dims else s for i, s in enumerate(sizes))


def _finish(out, dims, keepdim):
    if keepdim or not dims:
        return out
    return out.squeeze(dims)


_HALF = ("float16", "bfloat16")


def _accumulated(dtype):
    """The dtype sums of `dtype` accumulate in: float32 for float16/bfloat16, as PyTorch's
    kernels do (summing 5000 bfloat16 values of 0.01 in bfloat16 stops at 16)."""
    return dt.float32 if dtype.name in _HALF else dtype


def _sum_reduce(x, dims, keepdim, out_dtype):
    """The sum of x over dims as out_dtype, accumulated in float32 for the half types and
    rounded once."""
    work = _accumulated(out_dtype)
    total = _reduce("sum", x, dims, keepdim, work)
    return total if work is out_dtype else cast(total, out_dtype)


def _sum_dtype(x, dtype):
    if dtype is not None:
        return dtype
    return dt.int64 if x._dtype.category < 2 else x._dtype       # floats and complex keep


@differentiable("sum")
def sum(x, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    return _sum_reduce(x, dim, keepdim, _sum_dtype(x, dtype))


@differentiable("prod")
def prod(x, dim=None, keepdim=False, *, dtype=None):
    return _reduce("prod", x, dim, keepdim, _sum_dtype(x, dtype))


@differentiable("mean")
def mean(x, dim=None, keepdim=False, *, dtype=None):
    out_dtype = dtype or x._dtype
    if out_dtype.category < 2:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: "
                           f"{out_dtype.scalar_name}")
    dims = dims_arg(dim, x.dim())
    count = 1
    for d in dims:
        count *= x._sizes[d]
    total = _reduce("sum", x, dim, keepdim, _accumulated(out_dtype))
    total = total.div_(count) if count else total.fill_(float("nan"))
    return total if total._dtype is out_dtype else cast(total, out_dtype)


def _check_nonempty(name, x, dims, dim_given=True):
    if not dim_given and x.numel() == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input."
                           f"numel() == 0. Specify the reduction dim with the 'dim' argument.")
    for d in dims:
        if x._sizes[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    if not dims and x.numel() == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input."
                           f"numel() == 0. Specify the reduction dim with the 'dim' argument.")


def _extremum_dims(name, x, dim):
    """amax/amin's dims, checked in PyTorch's order: each in range, each of non-zero
    size, then none repeated."""
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        dims = dims_arg(None, x.dim())
        _check_nonempty(name, x, dims, False)
        return dims
    listed = [dims_arg(d, x.dim()) for d in ((dim,) if isinstance(dim, int) else dim)]
    _check_nonempty(name, x, [d for one in listed for d in one])
    return dims_arg(dim, x.dim())


@differentiable("amax")
def amax(x, dim=(), keepdim=False, *, _name="amax"):
    refuse_unsigned("max_all" if _name == "max" else "max_values_cpu", x._dtype)
    dims = _extremum_dims(_name, x, dim)
    return _reduce("amax", x, dims, keepdim, x._dtype)


@differentiable("amin")
def amin(x, dim=(), keepdim=False, *, _name="amin"):
    refuse_unsigned("min_all" if _name == "min" else "min_values_cpu", x._dtype)
    dims = _extremum_dims(_name, x, dim)
    return _reduce("amin", x, dims, keepdim, x._dtype)


def _arg(op, x, dim, keepdim):
    refuse_unsigned(f"{op}_cpu", x._dtype)
    if dim is None:
        flat = x.reshape(-1)
        _check_nonempty(op, flat, (0,))
        out = empty((1,), dt.int64, x._device)
        lookup(op, x._device)(out, flat, 0)
        return out.view(()) if not keepdim else out.view((1,) * x.dim())
    d = wrap_dim(dim, x.dim())
    if x.dim() == 0:
        return empty((), dt.int64, x._device).fill_(0)
    _check_nonempty(op, x, (d,))
    out = empty(_keep_shape(x._sizes, (d,)), dt.int64, x._device)
    lookup(op, x._device)(out, x, d)
    return _finish(out, (d,), keepdim)


def _no_bool(op, x):
    if x._dtype is dt.bool_:
        raise RuntimeError(f"{op}(): does not support bool input")


def argmax(x, dim=None, keepdim=False):
    _no_bool("argmax", x)
    return _arg("argmax", x, dim, keepdim)


def argmin(x, dim=None, keepdim=False):
    _no_bool("argmin", x)
    return _arg("argmin", x, dim, keepdim)


def _extreme_dim(name, x, dim, keepdim):
    if not isinstance(dim, int):
        raise TypeError(f"{name}(): dim must be an int, got {type(dim).__name__}")
    values = (amax if name == "max" else amin)(x, dim, keepdim)
    indices = _arg("argmax" if name == "max" else "argmin", x, dim, keepdim)
    return (max_out if name == "max" else min_out)(values, indices)


@differentiable("max_dim")
def _max_dim(x, dim, keepdim=False):
    return _extreme_dim("max", x, dim, keepdim)


@differentiable("min_dim")
def _min_dim(x, dim, keepdim=False):
    return _extreme_dim("min", x, dim, keepdim)


def max(x, dim=None, keepdim=False):  # noqa: A001
    """max(x) -> the largest value; max(x, dim) -> (values, indices); max(x, y) -> maximum."""
    if hasattr(dim, "_dtype"):
        from tensorlib.ops.pointwise import maximum
        return maximum(x, dim)
    return amax(x, _name="max") if dim is None else _max_dim(x, dim, keepdim)


def min(x, dim=None, keepdim=False):  # noqa: A001
    if hasattr(dim, "_dtype"):
        from tensorlib.ops.pointwise import minimum
        return minimum(x, dim)
    return amin(x, _name="min") if dim is None else _min_dim(x, dim, keepdim)


max.keyword_aliases = min.keyword_aliases = {"other": "dim"}   # max(x, other=y): maximum


@differentiable("sum_to_size")
def sum_to_size(x, *size):
    """Sum x down to `size`, which x's shape broadcasts from (the gradient of expand)."""
    from tensorlib.ops._args import sizes_arg
    target = sizes_arg(size)
    lead = x.dim() - len(target)
    if lead < 0:
        raise RuntimeError(f"size {list(target)} is not expandable to size {list(x._sizes)}")
    dims = list(range(lead))
    for i, n in enumerate(target):
        have = x._sizes[lead + i]
        if n == 1 and have != 1:
            dims.append(lead + i)
        elif n != have:
            raise RuntimeError(f"size {list(target)} is not expandable to size "
                               f"{list(x._sizes)}")
    if not target and x.dim() == 0:                # PyTorch's sum_to: a full sum then
        return sum(x)
    if not dims:
        return x.view(target) if x._sizes != target else x
    if x._dtype.category < 2:                      # integers and bool sum to int64
        return sum(x, tuple(dims), keepdim=True).view(target)
    out = empty(target, x._dtype, x._device)       # owns its memory (see _reduce)
    lookup("sum", x._device)(out.view(_keep_shape(x._sizes, dims)), x, tuple(dims))
    return out


def any(x, dim=None, keepdim=False):  # noqa: A001
    truth = x if x._dtype is dt.bool_ else x.ne(0)
    if x.numel() == 0:                             # max over nothing: count the Trues
        out = sum(truth, dim, keepdim) > 0
    else:
        out = _reduce("amax", truth, dim, keepdim, dt.bool_)
    return out.to(dt.uint8) if x._dtype is dt.uint8 else out     # PyTorch keeps uint8


def all(x, dim=None, keepdim=False):  # noqa: A001
    truth = x if x._dtype is dt.bool_ else x.ne(0)
    if x.numel() == 0:                             # min over nothing: count the Falses
        out = sum(truth.logical_not(), dim, keepdim) == 0
    else:
        out = _reduce("amin", truth, dim, keepdim, dt.bool_)
    return out.to(dt.uint8) if x._dtype is dt.uint8 else out


# ---- shared helpers ------------------------------------------------------------------------
def _empty(sizes, dtype, device):
    return empty(tuple(sizes), dtype, device)


def _positions(n, dim, ndim, device):
    """arange(n) shaped to broadcast along `dim` of an ndim-dim tensor."""
    from tensorlib.ops.creation import arange
    shape = [1] * ndim
    shape[dim] = n
    return arange(n, device=device).view(tuple(shape))


def _dim_arg(x, dim):
    """One dim, wrapped; a 0-dim tensor accepts 0 and -1 as torch does."""
    if not isinstance(dim, int):
        raise TypeError(f"dim must be an int, got {type(dim).__name__}")
    return wrap_dim(dim, x.dim() if x.dim() > 0 else 1)


def _as_1d(fn):
    """Run a dim-wise op on a 0-dim tensor as on a 1-element vector."""
    def run(x, dim, *args, **kwargs):
        if x.dim() > 0:
            return fn(x, _dim_arg(x, dim), *args, **kwargs)
        _dim_arg(x, dim)
        out = fn(x.view(1), 0, *args, **kwargs)
        if isinstance(out, tuple):
            return type(out)(*(o.view(()) for o in out))
        return out.view(())
    run.__name__ = fn.__name__
    return run


def _sort(x, dim):
    """Stable ascending sort along dim (NaN last): (values, indices)."""
    values = empty(x._sizes, x._dtype, x._device)
    indices = empty(x._sizes, dt.int64, x._device)
    lookup("sort", x._device)(values, indices, x, dim, False, True)
    return values, indices


def _gather(x, dim, index):
    out = empty(index._sizes, x._dtype, x._device)
    lookup("gather", x._device)(out, x, dim, index)
    return out


@differentiable("take_along_dim")
def _take_along(x, dim, index):
    """x[..index..] along dim (gather), differentiable: the gradient of every op that picks
    elements by index (median, mode, cummax) flows through here."""
    return _gather(x, dim, index)


@differentiable("put_along_dim")
def _put_along(src, dim, index, shape):
    """zeros(shape) with src added at index along dim (scatter_add): take_along's adjoint."""
    out = empty(tuple(shape), src._dtype, src._device)
    lookup("fill", src._device)(out, 0)
    lookup("scatter_add", src._device)(out, dim, index, src)
    return out


def _require_float(name, x):
    if not x._dtype.is_floating_point:
        raise RuntimeError(f"{name}(): input dtype should be either floating point or complex "
                           f"dtypes. Got {x._dtype.scalar_name} instead.")


def _count(x, dims):
    n = 1
    for d in dims:
        n *= x._sizes[d]
    return n


def _all_dims(x, dim):
    if dim == () or dim == []:
        dim = None
    return dims_arg(dim, x.dim())


# ---- variance and standard deviation -------------------------------------------------------
def _correction(unbiased, correction):
    if correction is not None and unbiased is not None:
        raise RuntimeError("Cannot specify both unbiased and correction")
    if correction is None:
        return 1 if unbiased is None or unbiased else 0
    return correction


def _var_parse(x, dim, unbiased, keepdim, correction):
    if x._dtype.category < 2:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if isinstance(dim, bool):                      # var(x, unbiased)
        dim, unbiased = None, dim
    return _all_dims(x, dim), _correction(unbiased, correction), bool(keepdim)


def _var_impl(x, dims, correction, keepdim):
    """Two-pass: sum((x - mean)^2) / max(0, N - correction) (NaN/inf when that is 0, as torch).
    The half types are computed in float32 and rounded once, as PyTorch's kernel does."""
    if x._dtype.name in _HALF:
        return cast(_var_impl(cast(x, dt.float32), dims, correction, keepdim), x._dtype)
    n = _count(x, dims)
    mean_ = _reduce("sum", x, dims, True, x._dtype).div_(n) if n else None
    if mean_ is None:
        out = empty(_keep_shape(x._sizes, dims), x._dtype, x._device).fill_(float("nan"))
        return _finish(out, dims, keepdim)
    d = x - mean_
    if x._dtype.is_complex:                     # |x - mean|^2, a real result (torch)
        from tensorlib.ops.complex import real, conj
        squares = real(d * conj(d))
        total = _reduce("sum", squares, dims, keepdim, squares._dtype)
    else:
        total = _reduce("sum", d * d, dims, keepdim, x._dtype)
    dof = n - correction
    if dof > 0:
        return total / dof
    from tensorlib.ops.pointwise import where          # x / 0 without numpy's warning
    return where(total > 0, float("inf"), float("nan")).to(total._dtype)


@differentiable("var")
def _var(x, dims, correction, keepdim):
    return _var_impl(x, dims, correction, keepdim)


@differentiable("std")
def _std(x, dims, correction, keepdim):
    if x._dtype.name in _HALF:           # the root too in float32, rounded once
        return cast(_var_impl(cast(x, dt.float32), dims, correction, keepdim).sqrt(), x._dtype)
    return _var_impl(x, dims, correction, keepdim).sqrt()


def var(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over dim with Bessel's `correction` (1 by default; unbiased=False means 0)."""
    return _var(x, *_var_parse(x, dim, unbiased, keepdim, correction))


def std(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _std(x, *_var_parse(x, dim, unbiased, keepdim, correction))


def var_mean(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dims, corr, keepdim = _var_parse(x, dim, unbiased, keepdim, correction)
    return _var(x, dims, corr, keepdim), mean(x, dims, keepdim)


def std_mean(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dims, corr, keepdim = _var_parse(x, dim, unbiased, keepdim, correction)
    return _std(x, dims, corr, keepdim), mean(x, dims, keepdim)


# ---- logsumexp -----------------------------------------------------------------------------
@differentiable("logsumexp")
def _logsumexp(x, dims, keepdim):
    """max + log(sum(exp(x - max))); an infinite max is not subtracted (inf - inf)."""
    from tensorlib.ops.float_checks import isinf
    from tensorlib.ops.pointwise import where
    if x.numel() == 0:
        out = empty(_keep_shape(x._sizes, dims), x._dtype, x._device).fill_(float("-inf"))
        return _finish(out, dims, keepdim)
    m = _reduce("amax", x, dims, True, x._dtype)
    m = where(isinf(m), 0.0, m)
    total = _sum_reduce((x - m).exp(), dims, True, x._dtype)
    return _finish(total.log() + m, dims, keepdim)


def logsumexp(x, dim, keepdim=False):
    if not x._dtype.is_floating_point:
        x = x.to(dt.get_default_dtype())
    return _logsumexp(x, _all_dims(x, dim), bool(keepdim))


# ---- scans ---------------------------------------------------------------------------------
def _scan(op, x, dim, dtype):
    out_dtype = _sum_dtype(x, dtype)
    src = x if x._dtype is out_dtype else cast(x, out_dtype)
    out = empty(x._sizes, out_dtype, x._device)
    if x.numel():
        lookup(op, x._device)(out, src, dim)
    return out


@differentiable("cumsum")
def _cumsum(x, dim, dtype):
    return _scan("cumsum", x, dim, dtype)


@differentiable("cumprod")
def _cumprod(x, dim, dtype):
    return _scan("cumprod", x, dim, dtype)


def cumsum(x, dim, *, dtype=None):
    """Inclusive running sum along dim; integers and bool accumulate in int64."""
    return _as_1d(_cumsum)(x, dim, dtype)


def cumprod(x, dim, *, dtype=None):
    return _as_1d(_cumprod)(x, dim, dtype)


def _shifted_extreme(x, dim, later_wins):
    """Running extreme (value, index) along dim by doubling (Hillis-Steele): log2(n) steps,
    each combining every position with the one 2^k earlier. `later_wins(prev, cur)` says
    where the later element replaces the earlier; it must be a total order for the scan to be
    exact (ties go to the later index, NaN beats everything: torch's cummax/cummin)."""
    from tensorlib.ops.pointwise import where
    n = x._sizes[dim]
    values = x.clone()
    indices = _positions(n, dim, x.dim(), x._device).expand(x._sizes).clone()
    copy = lookup("copy", x._device)
    s = 1
    while s < n:
        prev_v, cur_v = values.narrow(dim, 0, n - s), values.narrow(dim, s, n - s)
        prev_i, cur_i = indices.narrow(dim, 0, n - s), indices.narrow(dim, s, n - s)
        take = later_wins(prev_v, cur_v)
        new_v, new_i = where(take, cur_v, prev_v), where(take, cur_i, prev_i)
        copy(cur_v, new_v)
        copy(cur_i, new_i)
        s *= 2
    return values, indices


def _max_later(prev, cur):
    return cur.isnan() | (cur >= prev)


def _min_later(prev, cur):
    return cur.isnan() | (cur <= prev)


cummax_out = namedtuple("cummax", ["values", "indices"])
cummin_out = namedtuple("cummin", ["values", "indices"])


@differentiable("cummax")
def _cummax(x, dim):
    return cummax_out(*_shifted_extreme(x, dim, _max_later))


@differentiable("cummin")
def _cummin(x, dim):
    return cummin_out(*_shifted_extreme(x, dim, _min_later))


def cummax(x, dim):
    """(running max, index where it was attained) along dim."""
    return _as_1d(_cummax)(x, dim)


def cummin(x, dim):
    return _as_1d(_cummin)(x, dim)


def logcumsumexp(x, dim):
    """log(cumsum(exp(x))) by doubling with logaddexp: stable for any spread of values, and
    differentiable through its parts (log2(n) gather + logaddexp steps)."""
    from tensorlib.ops.pointwise import logaddexp, where
    _dim_arg(x, dim)
    if not x._dtype.is_floating_point:
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{x._dtype.scalar_name}'")
    if x.dim() == 0:
        _dim_arg(x, dim)
        return x.clone()
    dim = _dim_arg(x, dim)
    n = x._sizes[dim]
    pos = _positions(n, dim, x.dim(), x._device)
    out, s = x, 1
    while s < n:
        back = (pos - s).clamp(min=0).expand(x._sizes).contiguous()
        out = where(pos >= s, logaddexp(_take_along(out, dim, back), out), out)
        s *= 2
    return out if out is not x else x.clone()


# ---- order statistics ----------------------------------------------------------------------
median_out = namedtuple("median", ["values", "indices"])
nanmedian_out = namedtuple("nanmedian", ["values", "indices"])
mode_out = namedtuple("mode", ["values", "indices"])


def _sorted_nan(values, dim, n):
    """Whether a row of values sorted along dim (NaN last) holds a NaN: its last elements
    read (one .item() for a single row: isnan/any took 4 of median's 13 us at 16 floats)."""
    if not (values._dtype.is_floating_point or values._dtype.is_complex):
        return False
    last = _v.narrow(values, dim, n - 1, 1)
    if last.numel() == 1:
        value = last.item()
        return value != value
    return last.isnan().any().item()


def _median_index(x, dim, ignore_nan):
    """Index (along dim, keepdim shape) of the lower median: position (n - 1) // 2 of the
    stable sort; with NaNs, the first NaN (median) or the median of the rest (nanmedian)."""
    n = x._sizes[dim]
    values, order = _sort(x, dim)
    if not _sorted_nan(values, dim, n):                 # the middle of the sort
        return _v.narrow(order, dim, (n - 1) // 2, 1).contiguous()
    nans = _reduce("sum", x.isnan(), (dim,), True, dt.int64)
    if ignore_nan:
        k = ((n - nans) - 1).floor_divide(2).clamp(min=0)
    else:
        from tensorlib.ops.pointwise import where
        k = where(nans > 0, n - nans, (n - 1) // 2)
    return _gather(order, dim, k)


def _median_dim(name, x, dim, keepdim, ignore_nan):
    _check_nonempty(name, x, (dim,))
    kernel = optional_kernel(x._device, "median")       # one call, not sort + pick
    if kernel is not None and not x._requires_grad:
        shape = x._sizes[:dim] + (1,) + x._sizes[dim + 1:]
        values, index = empty(shape, x._dtype, x._device), empty(shape, dt.int64, x._device)
        if kernel(values, index, x, dim, ignore_nan):
            if keepdim:
                return values, index
            return _v.squeeze(values, dim), _v.squeeze(index, dim)
    from tensorlib._C.grad_mode import set_grad_enabled
    prev = set_grad_enabled(False)
    try:
        index = _median_index(x, dim, ignore_nan)
    finally:
        set_grad_enabled(prev)
    values = _take_along(x, dim, index)
    if keepdim:
        return values, index
    return values.squeeze(dim), _v.squeeze(index, dim)      # the index carries no graph


def _median(name, x, dim, keepdim, ignore_nan, result):
    if dim is None:
        if x.numel() == 0:
            return empty((), x._dtype, x._device).fill_(float("nan"))
        return _median_dim(name, x.reshape(-1), 0, False, ignore_nan)[0]
    if x.dim() == 0:
        _dim_arg(x, dim)
        return result(x.clone(), empty((), dt.int64, x._device).fill_(0))
    return result(*_median_dim(name, x, _dim_arg(x, dim), keepdim, ignore_nan))


def median(x, dim=None, keepdim=False):
    """The lower median (not the mean of the middle two, as torch); NaN if a NaN is present.
    With dim: (values, indices)."""
    if x._dtype is dt.bool_ and x.numel():
        raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'")
    if dim is None and x.numel() == 0:             # PyTorch: NaN, or the dtype's lowest
        from tensorlib.ops.creation import full
        fill = float("nan") if x._dtype.is_floating_point else (
            0 if x._dtype in (dt.uint8, dt.bool_) else -(1 << (8 * x._dtype.itemsize - 1)))
        return full((), fill, dtype=x._dtype, device=x._device)
    return _median("median", x, dim, keepdim, False, median_out)


def nanmedian(x, dim=None, keepdim=False):
    """median ignoring NaNs (NaN only where a slice is all NaN)."""
    return _median("nanmedian", x, dim, keepdim, True, nanmedian_out)


def _shift_flags(flags, dim, pad_front):
    """flags along dim with one True added at the front (or back): run starts/ends."""
    n = flags._sizes[dim] + 1
    sizes = list(flags._sizes)
    sizes[dim] = n
    out = _empty(sizes, dt.bool_, flags._device)
    lookup("fill", flags._device)(out, True)
    lookup("copy", flags._device)(out.narrow(dim, 1 if pad_front else 0, n - 1), flags)
    return out


def _mode_index(x, dim):
    """Index of the most frequent value along dim: the smallest such value, its last
    occurrence (torch's choice). Runs of equal values in the stable sort are measured at their
    ends: run length = end - (start of the run, a running max of start positions) + 1."""
    from tensorlib.ops.pointwise import where
    n = x._sizes[dim]
    values, order = _sort(x, dim)
    differs = values.narrow(dim, 0, n - 1) != values.narrow(dim, 1, n - 1)
    starts, ends = _shift_flags(differs, dim, True), _shift_flags(differs, dim, False)
    pos = _positions(n, dim, x.dim(), x._device)
    run_start = _shifted_extreme(where(starts, pos, 0), dim, _max_later)[0]
    length = where(ends, pos - run_start + 1, 0)
    best = _arg("argmax", length, dim, True)
    return _gather(order, dim, best)


def mode(x, dim=-1, keepdim=False):
    """(most frequent value along dim, an index of it)."""
    from tensorlib._C.grad_mode import set_grad_enabled
    if x.dim() == 0:
        _dim_arg(x, dim)
        return mode_out(x.clone(), empty((), dt.int64, x._device).fill_(0))
    dim = _dim_arg(x, dim)
    _check_nonempty("mode", x, (dim,))
    prev = set_grad_enabled(False)
    try:
        index = _mode_index(x, dim)
    finally:
        set_grad_enabled(prev)
    values = _take_along(x, dim, index)
    return mode_out(_finish(values, (dim,), keepdim), _finish(index, (dim,), keepdim))


# ---- counting, NaN-aware and paired reductions ---------------------------------------------
def count_nonzero(x, dim=None):
    return _reduce("sum", x.ne(0), _all_dims(x, dim) if dim is not None else None, False,
                   dt.int64)


def nansum(x, dim=None, keepdim=False, *, dtype=None):
    """sum with NaNs counted as zero (their gradient is zero too)."""
    if x._dtype.is_floating_point:
        from tensorlib.ops.pointwise import where
        x = where(x.isnan(), 0.0, x)
    return sum(x, dim, keepdim, dtype=dtype)


def nanmean(x, dim=None, keepdim=False, *, dtype=None):
    if not (dtype or x._dtype).is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {x._dtype.scalar_name}")
    kept = x.isnan().logical_not().sum(dim, keepdim)
    return nansum(x, dim, keepdim, dtype=dtype) / kept


aminmax_out = namedtuple("aminmax", ["min", "max"])


def aminmax(x, *, dim=None, keepdim=False):
    dims = () if dim is None else dim
    return aminmax_out(amin(x, dims, keepdim), amax(x, dims, keepdim))


def norm(x, p="fro", dim=None, keepdim=False, dtype=None):
    """torch.norm: a vector norm over dim (all dims by default); 'fro' is the 2-norm, 'nuc'
    the sum of singular values over the two dims of dim (all of a 2-D input by default),
    through linalg.matrix_norm."""
    from tensorlib.ops.linalg import matrix_norm, vector_norm
    if p == "nuc":
        dims = tuple(range(x.dim())) if dim is None else (dim,) if isinstance(dim, int) \
            else tuple(dim)
        return matrix_norm(x, "nuc", dims, keepdim, dtype=dtype)
    if p == "fro" or p is None:
        p = 2
    if isinstance(p, str):
        raise RuntimeError(f"norm(): unsupported p={p!r}")
    return vector_norm(x, p, dim, keepdim, dtype=dtype)


_METHODS = ("var", "std", "logsumexp", "cumsum", "cumprod", "cummax", "cummin",
            "logcumsumexp", "median", "nanmedian", "mode", "count_nonzero", "nansum", "nanmean",
            "aminmax", "norm", "sum", "sum_to_size", "mean", "prod", "amax", "amin", "max",
            "min", "argmax", "argmin", "any", "all")


def _cum_inplace(fn):
    """x.cumsum_(dim) accumulates in x's own dtype (a bool x: PyTorch has no kernel)."""
    def method(self, dim, *, dtype=None):
        from tensorlib.ops._inplace import inplace_composite
        return inplace_composite(fn)(self, dim, dtype=dtype or self._dtype)
    method.__name__ = fn.__name__ + "_"
    return method


TENSOR_METHODS = {name: globals()[name] for name in _METHODS}
TENSOR_METHODS.update(cumsum_=_cum_inplace(cumsum), cumprod_=_cum_inplace(cumprod))

__all__ = list(_METHODS) + ["var_mean", "std_mean"]


# ---- softmax and log_softmax ------------------------------------------------------------------
# A backend may register fused "softmax"/"log_softmax" kernels (out, x, dim) and their
# "_backward" kernels (grad_input, grad, y, dim); otherwise these decompose into reductions.
def _softmax_args(x, dim, dtype):
    if dtype is not None and x._dtype is not dtype:
        x = x.to(dtype)
    d = wrap_dim(dim, x.dim() or 1)                # a 0-d tensor takes 0 and -1
    if not x._dtype.is_floating_point and x.numel():
        raise NotImplementedError(f"\"softmax_lastdim_kernel_impl\" not implemented for "
                                  f"'{x._dtype.scalar_name}'")
    return x, d if x.dim() > 0 else 0


def _softmax_forward(op, x, dim):
    if x.numel() == 0:
        return empty(x._sizes, x._dtype, x._device)
    if x.dim() == 0:
        return (x - x) if op == "log_softmax" else (x - x).exp()
    if x._dtype.name in _HALF:          # in float32, rounded once (PyTorch's kernels)
        return cast(_softmax_forward(op, cast(x, dt.float32), dim), x._dtype)
    kernel = optional_kernel(x._device, op)
    if kernel is not None:
        out = empty(x._sizes, x._dtype, x._device)
        kernel(out, x, dim)
        return out
    shifted = x - x.amax(dim, keepdim=True)
    if op == "log_softmax":
        return shifted - shifted.exp().sum(dim, keepdim=True).log()
    e = shifted.exp()
    return e / e.sum(dim, keepdim=True)


@differentiable("softmax")
def softmax(x, dim, dtype=None):
    """exp(x) / sum(exp(x)) along dim, computed from x - max(x)."""
    x, dim = _softmax_args(x, dim, dtype)
    return _softmax_forward("softmax", x, dim)


@differentiable("log_softmax")
def log_softmax(x, dim, dtype=None):
    """x - log(sum(exp(x))) along dim, computed from x - max(x)."""
    x, dim = _softmax_args(x, dim, dtype)
    return _softmax_forward("log_softmax", x, dim)


__all__ += ["softmax", "log_softmax"]
TENSOR_METHODS.update({"softmax": softmax, "log_softmax": log_softmax})
