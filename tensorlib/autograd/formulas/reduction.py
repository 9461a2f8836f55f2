"""Derivatives of reductions: the gradient is put back over the reduced dims (expanded), and
for extrema shared between the elements that attained the extreme."""
import tensorlib
from tensorlib.autograd.recording import formula
from tensorlib.ops._args import dims_arg


def arg(ctx, index, name, default=None):
    """A forward argument given positionally or by keyword."""
    if len(ctx.args) > index:
        return ctx.args[index]
    return ctx.kwargs.get(name, default)


def _dims(ctx, x, index=1):
    dim = arg(ctx, index, "dim")
    if dim == ():
        dim = None
    return dims_arg(dim, x.dim()) if x.dim() > 0 else ()


def unreduce(g, shape, dims, keepdim):
    """g (reduced over dims) broadcast back to `shape`."""
    if not keepdim:
        for d in dims:
            g = g.unsqueeze(d)
    return g.expand(shape)


@formula("sum")
def sum_(ctx, g):
    x = ctx.args[0]
    return (unreduce(g, x.shape, _dims(ctx, x), arg(ctx, 2, "keepdim", False)),)


@formula("mean")
def mean(ctx, g):
    x = ctx.args[0]
    dims = _dims(ctx, x)
    count = 1
    for d in dims:
        count *= x.shape[d]
    return (unreduce(g, x.shape, dims, arg(ctx, 2, "keepdim", False)) / count,)


@formula("sum_to_size")
def sum_to_size(ctx, g):
    return (g.expand(ctx.args[0].shape),)


def _extreme(ctx, g, values):
    """Gradient of amax/amin (and max/min over a dim): split evenly among the ties."""
    x = ctx.args[0]
    dims = _dims(ctx, x)
    keepdim = arg(ctx, 2, "keepdim", False)
    hit = tensorlib.eq(x, unreduce(values, x.shape, dims, keepdim)).to(g.dtype)
    count = hit.sum(dims, keepdim=True)
    return (unreduce(g, x.shape, dims, keepdim) * hit / count,)


@formula("amax", "amin", save=(0,), save_output=True)
def amax(ctx, g):
    return _extreme(ctx, g, ctx.out)


@formula("max_dim", "min_dim", save=(0,), save_output=True)
def max_dim(ctx, g_values, g_indices=None):
    """max(x, dim) sends the gradient to the index it returned (the first extreme)."""
    x = ctx.args[0]
    dim = tensorlib._C.views.wrap_dim(ctx.args[1], x.dim())
    keepdim = arg(ctx, 2, "keepdim", False)
    indices = ctx.out[1]
    if not keepdim:
        indices = indices.unsqueeze(dim)
        g_values = g_values.unsqueeze(dim)
    shape = [1] * x.dim()
    shape[dim] = x.shape[dim]
    positions = tensorlib.arange(x.shape[dim], device=x.device).view(shape)
    mask = tensorlib.eq(positions, indices).to(g_values.dtype)
    return (g_values * mask,)


@formula("prod", save=(0,), save_output=True)
def prod(ctx, g):
    """Exact with zeros: where a slice has one zero, that element's gradient is the product
    of the others; with two or more zeros every gradient is zero."""
    x = ctx.args[0]
    dims = _dims(ctx, x)
    keepdim = arg(ctx, 2, "keepdim", False)
    g_full = unreduce(g, x.shape, dims, keepdim)
    is_zero = tensorlib.eq(x, 0)
    zeros = is_zero.sum(dims, keepdim=True)
    nonzero_prod = tensorlib.where(is_zero, 1.0, x).prod(dims, keepdim=True)
    out = unreduce(ctx.out, x.shape, dims, keepdim)
    safe_x = tensorlib.where(is_zero, 1.0, x)
    grad = tensorlib.where(tensorlib.eq(zeros, 0), out / safe_x,
                           tensorlib.where(tensorlib.eq(zeros, 1) & is_zero, nonzero_prod, 0.0))
    return (g_full * grad,)

