"""Finite differences and the trapezoidal rule with torch's names: diff, trapezoid (and its
older name trapz), cumulative_trapezoid. Slices and sums of existing ops: every backend,
differentiable through their parts."""
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib._C.views import wrap_dim

__all__ = ["diff", "trapezoid", "trapz", "cumulative_trapezoid"]


def _tl():
    import tensorlib
    return tensorlib


def diff(input, n=1, dim=-1, prepend=None, append=None):  # noqa: A002
    """The n-th forward difference along dim, after joining prepend/append (their other
    dims must match; a number is broadcast); for bool tensors the difference is !=."""
    tl = _tl()
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = wrap_dim(dim, input.dim())
    parts = []
    for extra in (prepend, append):
        if extra is None:
            parts.append(None)
            continue
        if not isinstance(extra, TensorImpl):
            shape = list(input.shape)
            shape[dim] = 1
            extra = tl.full(shape, extra, dtype=input.dtype, device=input.device)
        if extra.dim() != input.dim():
            raise RuntimeError(f"diff expects prepend or append to be the same dimension as "
                               f"input, but got {extra.dim()} and {input.dim()}")
        parts.append(extra)
    x = tl.cat([t for t in (parts[0], input, parts[1]) if t is not None], dim)
    for _ in range(n):
        size = x.shape[dim]
        if size == 0:
            break
        later, earlier = x.narrow(dim, 1, size - 1), x.narrow(dim, 0, size - 1)
        x = later != earlier if x.dtype is tl.bool else later - earlier
    return x


def _spacing(y, x, dx, dim, name):
    """The interval widths along dim, shaped to broadcast against y's intervals, or a
    number."""
    if x is not None and dx is not None:
        raise RuntimeError(f"{name}: received both x and dx; pass one")
    if x is None:
        return 1.0 if dx is None else dx
    if not isinstance(x, TensorImpl):
        return x
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        widths = x[1:] - x[:-1]
        shape = [1] * y.dim()
        shape[dim] = widths.shape[0]
        return widths.reshape(shape)
    return diff(x, dim=dim)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of y along dim by the trapezoidal rule, sample points x (1-D, or shaped
    like y) or equal spacing dx (1 by default)."""
    if y.dim() == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"{dim})")
    dim = wrap_dim(dim, y.dim())
    if y.shape[dim] == 0:
        return y.sum(dim)
    widths = _spacing(y, x, dx, dim, "trapezoid")
    heights = y.narrow(dim, 1, y.shape[dim] - 1) + y.narrow(dim, 0, y.shape[dim] - 1)
    if isinstance(widths, TensorImpl):
        return (widths * heights).sum(dim) / 2
    return heights.sum(dim) * (widths / 2)


def trapz(y, x=None, *, dx=None, dim=-1):
    """torch.trapz: trapezoid's older name (trapz(y, x, dim=...) or trapz(y, dx=..., ...))."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral along dim (one element fewer than y there)."""
    tl = _tl()
    if y.dim() == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"{dim})")
    dim = wrap_dim(dim, y.dim())
    widths = _spacing(y, x, dx, dim, "cumulative_trapezoid")
    size = y.shape[dim]
    if size == 0:
        return y.narrow(dim, 0, 0)
    heights = y.narrow(dim, 1, size - 1) + y.narrow(dim, 0, size - 1)
    return tl.cumsum(heights * widths / 2, dim)


TENSOR_METHODS = {"diff": diff}
