"""Derivatives of the special functions (tensorlib/ops/special.py), as PyTorch's
derivatives.yaml gives them, in tensorlib ops (so they are differentiable again)."""
import math

import tensorlib
from tensorlib.autograd.recording import formula


def _where(cond, a, b):
    return tensorlib.where(cond, a, b)


@formula("lgamma", save=(0,))
def lgamma(ctx, g):
    return (g * tensorlib.digamma(ctx.args[0]),)


@formula("digamma", save=(0,))
def digamma(ctx, g):
    return (g * tensorlib.polygamma(1, ctx.args[0]),)


@formula("polygamma", save=(1,))
def polygamma(ctx, g):
    n, x = ctx.args
    return None, g * tensorlib.polygamma(n + 1, x)


@formula("zeta", save=(0, 1))
def zeta(ctx, g):
    """d/dq zeta(x, q) = -x zeta(x + 1, q); PyTorch has no derivative in x either."""
    x, q = ctx.args
    if ctx.needs_input_grad[0]:
        raise RuntimeError("the derivative for 'special_zeta' with respect to 'self' "
                           "is not implemented.")
    return None, g * -x * tensorlib.special.zeta(x + 1.0, q)


@formula("erfinv", save_output=True)
def erfinv(ctx, g):
    y = ctx.out
    return (g * (0.5 * math.sqrt(math.pi)) * (y * y).exp(),)


@formula("special_erfcx", save=(0,), save_output=True)
def special_erfcx(ctx, g):
    return (g * (2.0 * ctx.args[0] * ctx.out - 2.0 / math.sqrt(math.pi)),)


@formula("ndtri", save_output=True)
def ndtri(ctx, g):
    y = ctx.out
    return (g * math.sqrt(2 * math.pi) * (0.5 * y * y).exp(),)


@formula("log_ndtr", save=(0,), save_output=True)
def log_ndtr(ctx, g):
    x = ctx.args[0]
    return (g * (-0.5 * x * x - ctx.out).exp() / math.sqrt(2 * math.pi),)


@formula("xlogy", save=(0, 1))
def xlogy(ctx, g):
    x, y = ctx.args
    gx = gy = None
    if ctx.needs_input_grad[0]:
        gx = g * tensorlib.xlogy((x != 0).to(g.dtype), y)
    if ctx.needs_input_grad[1]:
        gy = g * x / y
    return gx, gy


@formula("xlog1py", save=(0, 1))
def xlog1py(ctx, g):
    x, y = ctx.args
    gx = gy = None
    if ctx.needs_input_grad[0]:
        gx = g * tensorlib.special.xlog1py((x != 0).to(g.dtype), y)
    if ctx.needs_input_grad[1]:
        gy = g * x / (y + 1.0)
    return gx, gy


@formula("entr", save=(0,))
def entr(ctx, g):
    x = ctx.args[0]
    return (g * -(1.0 + x.log()),)


@formula("sinc", save=(0,))
def sinc(ctx, g):
    x = ctx.args[0]
    zero = x == 0
    px = math.pi * _where(zero, 1.0, x)
    slope = (px * px.cos() - px.sin()) / (px * _where(zero, 1.0, x))
    return (g * _where(zero, 0.0, slope),)


@formula("logit", save=(0,))
def logit(ctx, g):
    x = ctx.args[0]
    eps = ctx.args[1] if len(ctx.args) > 1 else ctx.kwargs.get("eps")
    grad = g / (x * (1.0 - x))
    if eps is not None:
        grad = _where((x < eps) | (x > 1.0 - eps), 0.0, grad)
    return grad, None


@formula("i0", save=(0,))
def i0(ctx, g):
    return (g * tensorlib.special.i1(ctx.args[0]),)


@formula("i0e", save=(0,), save_output=True)
def i0e(ctx, g):
    x = ctx.args[0]
    return (g * (tensorlib.special.i1e(x) - x.sign() * ctx.out),)


def _over_x(num, x):
    """num / x with the limit 1/2 of i1(x)/x, i1e(x)/x, j1(x)/x at 0."""
    zero = x == 0
    return _where(zero, 0.5, num / _where(zero, 1.0, x))


@formula("i1", save=(0,), save_output=True)
def i1(ctx, g):
    x = ctx.args[0]
    return (g * (tensorlib.special.i0(x) - _over_x(ctx.out, x)),)


@formula("i1e", save=(0,), save_output=True)
def i1e(ctx, g):
    x = ctx.args[0]
    return (g * (tensorlib.special.i0e(x) - ctx.out * x.sign() - _over_x(ctx.out, x)),)


@formula("bessel_j0", save=(0,))
def bessel_j0(ctx, g):
    return (-g * tensorlib.special.bessel_j1(ctx.args[0]),)


@formula("bessel_j1", save=(0,), save_output=True)
def bessel_j1(ctx, g):
    x = ctx.args[0]
    return (g * (tensorlib.special.bessel_j0(x) - _over_x(ctx.out, x)),)
