"""Reductions over dims: sum, mean, prod, amax/amin, max/min (values and indices),
argmax/argmin. Each allocates the keepdim-shaped output, calls the backend's primitive, then
drops the reduced dims unless keepdim."""
from collections import namedtuple

import tensorlib._C.dtypes as dt
from tensorlib._C.dispatch import lookup
from tensorlib._C.factory import empty, cast
from tensorlib._C.views import wrap_dim
from tensorlib.ops._args import dims_arg
from tensorlib.ops._opdef import differentiable

values_indices = namedtuple("values_indices", ["values", "indices"])


def _keep_shape(sizes, dims):
    return tuple(1 if i in dims else s for i, s in enumerate(sizes))


def _finish(out, dims, keepdim):
    if keepdim or not dims:
        return out
    return out.squeeze(dims)


def _reduce(op, x, dim, keepdim, out_dtype):
    dims = dims_arg(dim, x.dim()) if x.dim() > 0 else ()
    src = x if x._dtype is out_dtype else cast(x, out_dtype)
    out = empty(_keep_shape(x._sizes, dims), out_dtype, x._device)
    lookup(op, x._device)(out, src, dims)
    return _finish(out, dims, keepdim)


def _sum_dtype(x, dtype):
    if dtype is not None:
        return dtype
    return dt.int64 if not x._dtype.is_floating_point else x._dtype


@differentiable("sum")
def sum(x, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    return _reduce("sum", x, dim, keepdim, _sum_dtype(x, dtype))


@differentiable("prod")
def prod(x, dim=None, keepdim=False, *, dtype=None):
    return _reduce("prod", x, dim, keepdim, _sum_dtype(x, dtype))


@differentiable("mean")
def mean(x, dim=None, keepdim=False, *, dtype=None):
    out_dtype = dtype or x._dtype
    if not out_dtype.is_floating_point:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: "
                           f"{out_dtype.scalar_name}")
    dims = dims_arg(dim, x.dim()) if x.dim() > 0 else ()
    count = 1
    for d in dims:
        count *= x._sizes[d]
    total = _reduce("sum", x, dim, keepdim, out_dtype)
    return total.div_(count) if count else total.fill_(float("nan"))


def _check_nonempty(name, x, dims):
    for d in dims:
        if x._sizes[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    if not dims and x.numel() == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input."
                           f"numel() == 0. Specify the reduction dim with the 'dim' argument.")


@differentiable("amax")
def amax(x, dim=(), keepdim=False):
    dims = dims_arg(dim if dim != () else None, x.dim()) if x.dim() > 0 else ()
    _check_nonempty("amax", x, dims)
    return _reduce("amax", x, dims, keepdim, x._dtype)


@differentiable("amin")
def amin(x, dim=(), keepdim=False):
    dims = dims_arg(dim if dim != () else None, x.dim()) if x.dim() > 0 else ()
    _check_nonempty("amin", x, dims)
    return _reduce("amin", x, dims, keepdim, x._dtype)


def _arg(op, x, dim, keepdim):
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


def argmax(x, dim=None, keepdim=False):
    return _arg("argmax", x, dim, keepdim)


def argmin(x, dim=None, keepdim=False):
    return _arg("argmin", x, dim, keepdim)


def _extreme_dim(name, x, dim, keepdim):
    if not isinstance(dim, int):
        raise TypeError(f"{name}(): dim must be an int, got {type(dim).__name__}")
    values = (amax if name == "max" else amin)(x, dim, keepdim)
    indices = _arg("argmax" if name == "max" else "argmin", x, dim, keepdim)
    return values_indices(values, indices)


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
    return amax(x) if dim is None else _max_dim(x, dim, keepdim)


def min(x, dim=None, keepdim=False):  # noqa: A001
    if hasattr(dim, "_dtype"):
        from tensorlib.ops.pointwise import minimum
        return minimum(x, dim)
    return amin(x) if dim is None else _min_dim(x, dim, keepdim)


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
    out = _reduce("sum", x, tuple(dims), True, x._dtype) if dims else x
    return out.view(target) if out._sizes != target else out


def any(x, dim=None, keepdim=False):  # noqa: A001
    return _reduce("amax", x if x._dtype is dt.bool_ else x.ne(0), dim, keepdim, dt.bool_)


def all(x, dim=None, keepdim=False):  # noqa: A001
    return _reduce("amin", x if x._dtype is dt.bool_ else x.ne(0), dim, keepdim, dt.bool_)
