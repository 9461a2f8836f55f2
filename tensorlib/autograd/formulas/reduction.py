"""Derivatives of reductions: the gradient is put back over the reduced dims (expanded), and
for extrema shared between the elements that attained the extreme."""
import math

import tensorlib
from tensorlib.autograd.formulas.complex import conj
from tensorlib.autograd.recording import formula
from tensorlib.ops._args import dims_arg
from tensorlib.ops._composites import optional_kernel


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
    return (g_full * conj(grad),)



def _count(shape, dims):
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _var_grad(x, g, dims, correction):
    """d var / dx = 2 (x - mean) / (N - correction), g already at x's shape (no degrees of
    freedom: 2 / 0 is inf, as in torch's C++ formula)."""
    dof = _count(x.shape, dims) - correction
    return g * (2.0 / dof if dof else math.inf) * (x - x.mean(dims, keepdim=True))


@formula("var", save=(0,))
def var(ctx, g):
    x, dims, correction, keepdim = ctx.args
    return (_var_grad(x, unreduce(g, x.shape, dims, keepdim), dims, correction),)


@formula("std", save=(0,), save_output=True)
def std(ctx, g):
    """d std = d var / (2 std), taken as 0 where std is 0 (torch's convention)."""
    x, dims, correction, keepdim = ctx.args
    zero = tensorlib.eq(ctx.out, 0)
    g_var = tensorlib.where(zero, 0.0, g / (2 * tensorlib.where(zero, 1.0, ctx.out)))
    return (_var_grad(x, unreduce(g_var, x.shape, dims, keepdim), dims, correction),)


@formula("logsumexp", save=(0,), save_output=True)
def logsumexp(ctx, g):
    x, dims, keepdim = ctx.args
    out = unreduce(ctx.out, x.shape, dims, keepdim)
    return (unreduce(g, x.shape, dims, keepdim) * tensorlib.exp(x - out),)


def _reverse_cumsum(g, dim):
    """sum over positions j >= i along dim, added from the last position as PyTorch's
    flip-cumsum-flip adds them (a total less the running sum cancelled: off by the total's
    rounding at the far end)."""
    if g.dim() == 0:
        return g
    dim = tensorlib._C.views.wrap_dim(dim, g.dim())
    kernel = optional_kernel(g.device, "reverse_cumsum")
    if kernel is not None and not tensorlib.is_grad_enabled():
        out = tensorlib.empty(g.shape, dtype=g.dtype, device=g.device)
        if kernel(out, g, dim):
            return out
    return g.flip(dim).cumsum(dim).flip(dim)


@formula("cumsum")
def cumsum(ctx, g):
    return (_reverse_cumsum(g, ctx.args[1]),)


@formula("cumprod", save=(0,), save_output=True)
def cumprod(ctx, g):
    """Exact with zeros. Before a slice's first zero: sum_{j>=i} g_j out_j / x_i. At the first
    zero z: sum_{j>=z} g_j prod_{k<=j, k!=z} x_k, the cumprod with x_z set to 1. After it: 0."""
    x, dim = ctx.args[0], ctx.args[1]
    if x.dtype.is_complex:      # holomorphic: conj of the real formula applied to conj(g)
        return (conj(_cumprod_grad(x, conj(g), dim, ctx.out)),)
    return (_cumprod_grad(x.to(g.dtype), g, dim, ctx.out),)


def _cumprod_grad(x, g, dim, out):
    is_zero = tensorlib.eq(x, 0)
    zeros_so_far = is_zero.cumsum(dim)
    first_zero = is_zero & tensorlib.eq(zeros_so_far, 1)
    safe_x = tensorlib.where(is_zero, 1.0, x)
    before = _reverse_cumsum(g * out, dim) / safe_x
    at_zero = _reverse_cumsum(g * tensorlib.where(first_zero, 1.0, x).cumprod(dim), dim)
    return tensorlib.where(tensorlib.eq(zeros_so_far, 0), before,
                           tensorlib.where(first_zero, at_zero, 0.0))


@formula("cummax", "cummin", save_output=True)
def cummax(ctx, g_values, g_indices=None):
    """Each output's gradient goes to the element it came from."""
    from tensorlib.ops.reduction import _put_along
    x, dim = ctx.args[0], ctx.args[1]
    return (_put_along(g_values, dim, ctx.out[1], x.shape),)


@formula("take_along_dim", save=(2,))
def take_along_dim(ctx, g):
    from tensorlib.ops.reduction import _put_along
    x, dim, index = ctx.args
    return (_put_along(g, dim, index, x.shape), None, None)


@formula("put_along_dim", save=(2,))
def put_along_dim(ctx, g):
    from tensorlib.ops.reduction import _take_along
    _, dim, index, _ = ctx.args
    return (_take_along(g, dim, index), None, None, None)


def _softmax_backward(op, ctx, g):
    """The fused backward kernel when the backward itself needs no graph; else in ops."""
    y = ctx.out
    dim = tensorlib._C.views.wrap_dim(arg(ctx, 1, "dim"), y.dim()) if y.dim() else 0
    kernel = optional_kernel(y.device, op + "_backward")
    if kernel is not None and not tensorlib.is_grad_enabled() and y.dim() > 0:
        grad_input = tensorlib.empty_like(y)
        kernel(grad_input, g.to(y.dtype), y, dim)
        return grad_input
    if op == "log_softmax":
        return g - y.exp() * g.sum(dim, keepdim=True)
    return y * (g - (g * y).sum(dim, keepdim=True))


@formula("softmax", save_output=True)
def softmax(ctx, g):
    return (_softmax_backward("softmax", ctx, g),)


@formula("log_softmax", save_output=True)
def log_softmax(ctx, g):
    return (_softmax_backward("log_softmax", ctx, g),)
