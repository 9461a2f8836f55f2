"""Derivatives of elementwise ops. Broadcast inputs get their gradient summed back to shape
by the node (recording._fit), so these formulas work at the output's shape."""
import math

import tensorlib
from tensorlib._C.factory import empty
from tensorlib.autograd.formulas.complex import conj
from tensorlib.autograd.recording import formula
from tensorlib.ops._composites import optional_kernel


def _is_tensor(x):
    return isinstance(x, tensorlib.Tensor)


def _fused_backward(op, g, y):
    """g * f'(x) from f's output y in one pass of a backend's fused kernel `op`; None where
    the backend has none, declines the layout, or the gradient must stay differentiable
    (create_graph)."""
    kernel = optional_kernel(g._device, op)
    if kernel is None or tensorlib.is_grad_enabled():
        return None
    out = empty(g._sizes, g._dtype, g._device)
    return out if kernel(out, g, y) else None


@formula("add")
def add(ctx, g):
    return g, g


@formula("sub")
def sub(ctx, g):
    return g, (-g if ctx.needs_input_grad[1] else None)


@formula("mul", save=(0, 1), save_for={0: (1,), 1: (0,)}, wraps_numbers=True)
def mul(ctx, g):
    a, b = ctx.args
    return (g * conj(b) if ctx.needs_input_grad[0] else None,
            g * conj(a) if ctx.needs_input_grad[1] else None)


@formula("div", save=(0, 1), save_for={0: (1,)}, wraps_numbers=True)
def div(ctx, g):
    a, b = ctx.args
    ga = g / conj(b) if ctx.needs_input_grad[0] else None
    gb = -g * conj(a / (b * b)) if ctx.needs_input_grad[1] else None
    return ga, gb


@formula("pow", save=(0, 1), save_output=True)
def pow_(ctx, g):
    a, b = ctx.args
    ga = gb = None
    if ctx.needs_input_grad[0]:
        if _is_tensor(b):                   # d/da a^0 is 0 even at a == 0
            ga = tensorlib.where(tensorlib.eq(b, 0), 0.0,
                                 g * conj(b * tensorlib.pow(a, b - 1)))
        elif b == 0:
            ga = g * 0                      # not 0 * a^-1 (nan at a == 0)
        else:
            ga = g * conj(b * tensorlib.pow(a, b - 1))
    if ctx.needs_input_grad[1]:
        # d/db a^b = a^b log a, taken as 0 where a == 0 and b >= 0 (PyTorch's convention)
        if not _is_tensor(a):               # a number base: 2 ** x
            log_a = math.log(a) if a > 0 else (-math.inf if a == 0 else math.nan)
            gb = g * conj(ctx.out * log_a)
            if a == 0:
                gb = tensorlib.where(tensorlib.ge(tensorlib.real(b), 0), 0.0, gb)
        else:
            gb = g * conj(ctx.out * tensorlib.log(a))
            gb = tensorlib.where(tensorlib.eq(a, 0) & tensorlib.ge(tensorlib.real(b), 0), 0.0,
                                 gb)
    return ga, gb


def _extremum(pick_a):
    def backward(ctx, g):
        a, b = ctx.args
        # the larger (smaller) input gets the gradient; ties share it equally, as in PyTorch
        share = tensorlib.where(tensorlib.eq(a, b), 0.5,
                                tensorlib.where(pick_a(a, b), 1.0, 0.0)).to(g.dtype)
        return (g * share if ctx.needs_input_grad[0] else None,
                g * (1 - share) if ctx.needs_input_grad[1] else None)
    return backward


formula("maximum", save=(0, 1))(_extremum(tensorlib.gt))
formula("minimum", save=(0, 1))(_extremum(tensorlib.lt))


@formula("remainder", save=(0, 1), save_for={0: (1,), 1: (1,)})
def remainder(ctx, g):
    a, b = ctx.args
    gb = -g * tensorlib.floor_divide(a, b) if ctx.needs_input_grad[1] else None
    return g, gb


@formula("fmod", save=(0, 1), save_for={0: (1,), 1: (1,)})
def fmod(ctx, g):
    a, b = ctx.args
    gb = -g * tensorlib.trunc(a / b) if ctx.needs_input_grad[1] else None
    return g, gb


@formula("atan2", save=(0, 1))
def atan2(ctx, g):
    a, b = ctx.args
    denom = a * a + b * b
    return g * b / denom, -g * a / denom


@formula("neg")
def neg(ctx, g):
    return (-g,)


@formula("abs", save=(0,))
def abs_(ctx, g):
    return (g * tensorlib.sign(ctx.args[0]),)


@formula("exp", save_output=True)
def exp(ctx, g):
    return (g * conj(ctx.out),)


@formula("expm1", save_output=True)
def expm1(ctx, g):
    return (g * conj(ctx.out + 1),)


@formula("log", save=(0,))
def log(ctx, g):
    return (g / conj(ctx.args[0]),)


@formula("log1p", save=(0,))
def log1p(ctx, g):
    return (g / conj(ctx.args[0] + 1),)


@formula("sqrt", save_output=True)
def sqrt(ctx, g):
    return (g / conj(2 * ctx.out),)


@formula("sin", save=(0,))
def sin(ctx, g):
    return (g * conj(tensorlib.cos(ctx.args[0])),)


@formula("cos", save=(0,))
def cos(ctx, g):
    return (-g * conj(tensorlib.sin(ctx.args[0])),)


@formula("tan", save_output=True)
def tan(ctx, g):
    return (g * conj(1 + ctx.out * ctx.out),)


@formula("asin", save=(0,))
def asin(ctx, g):
    x = ctx.args[0]
    return (g / conj(tensorlib.sqrt(1 - x * x)),)


@formula("acos", save=(0,))
def acos(ctx, g):
    x = ctx.args[0]
    return (-g / conj(tensorlib.sqrt(1 - x * x)),)


@formula("atan", save=(0,))
def atan(ctx, g):
    x = ctx.args[0]
    return (g / conj(1 + x * x),)


@formula("sinh", save=(0,))
def sinh(ctx, g):
    return (g * conj(tensorlib.cosh(ctx.args[0])),)


@formula("cosh", save=(0,))
def cosh(ctx, g):
    return (g * conj(tensorlib.sinh(ctx.args[0])),)


@formula("tanh", save_output=True)
def tanh(ctx, g):
    y = ctx.out
    fused = _fused_backward("tanh_backward", g, y)
    return (fused if fused is not None else g * conj(1 - y * y),)


@formula("silu", save=(0,))
def silu(ctx, g):
    """g * s * (1 + x (1 - s)), s = sigmoid(x), from the input x: one pass of the backend's
    `silu_backward` where it has one."""
    x = ctx.args[0]
    kernel = optional_kernel(g._device, "silu_backward")
    if kernel is not None and not tensorlib.is_grad_enabled() and g._dtype is x._dtype:
        out = empty(g._sizes, g._dtype, g._device)
        if kernel(out, g, x) or kernel(out, g.contiguous(), x.contiguous()):
            return (out,)
    s = tensorlib.sigmoid(x)
    return (g * conj(s * (1 + x * (1 - s))),)


@formula("gelu", save=(0,))
def gelu(ctx, g):
    """g * d/dx of x * Phi(x) (or of the tanh form), from the input x: one pass of the
    backend's `gelu_backward` where it has one."""
    x = ctx.args[0]
    approximate = ctx.args[1] if len(ctx.args) > 1 else ctx.kwargs.get("approximate", "none")
    kernel = optional_kernel(g._device, "gelu_backward")
    if kernel is not None and not tensorlib.is_grad_enabled() and g._dtype is x._dtype:
        out = empty(g._sizes, g._dtype, g._device)
        # a layout the kernel declines (sum()'s expanded gradient) is worth a copy: the
        # composite below takes eight passes
        if kernel(out, g, x, approximate) or \
                kernel(out, g.contiguous(), x.contiguous(), approximate):
            return (out,)
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        t = tensorlib.tanh(k * (x + 0.044715 * x * x * x))
        slope = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
    else:
        slope = 0.5 * (1 + tensorlib.erf(x * (1 / math.sqrt(2)))) + \
            x * tensorlib.exp(-0.5 * x * x) * (1 / math.sqrt(2 * math.pi))
    return (g * slope,)


@formula("erf", save=(0,))
def erf(ctx, g):
    x = ctx.args[0]
    return (g * (2 / 3.141592653589793 ** 0.5) * tensorlib.exp(-x * x),)


@formula("floor", "ceil", "round", "trunc", "sign", "floor_divide")
def piecewise_constant(ctx, g):
    """Zero almost everywhere (PyTorch returns zeros too)."""
    return tuple(g * 0 if need else None for need in ctx.needs_input_grad)


@formula("where", save=(0,))
def where(ctx, g):
    cond = ctx.args[0]
    zero = tensorlib.zeros((), dtype=g.dtype, device=g.device)
    return (None,
            tensorlib.where(cond, g, zero) if ctx.needs_input_grad[1] else None,
            tensorlib.where(cond, zero, g) if ctx.needs_input_grad[2] else None)


@formula("sigmoid", save_output=True)
def sigmoid(ctx, g):
    y = ctx.out
    fused = _fused_backward("sigmoid_backward", g, y)
    return (fused if fused is not None else g * conj(y * (1 - y)),)


@formula("relu", save_output=True)
def relu(ctx, g):
    """g where the output is > 0 (a NaN output passes g, as torch's threshold_backward), in
    one pass of the backend's `relu_backward(out, grad, y)` where it has one."""
    y = ctx.out
    kernel = optional_kernel(g._device, "relu_backward")
    if kernel is not None and not tensorlib.is_grad_enabled() and g._dtype is y._dtype:
        out = empty(g._sizes, g._dtype, g._device)
        kernel(out, g, y)
        return (out,)
    return (tensorlib.where(tensorlib.le(y, 0), 0.0, g),)


@formula("erfc", save=(0,))
def erfc(ctx, g):
    x = ctx.args[0]
    return (g * (-2 / math.sqrt(math.pi)) * tensorlib.exp(-x * x),)


@formula("hypot", save=(0, 1), save_output=True)
def hypot(ctx, g):
    a, b = ctx.args
    return (g * a / ctx.out if ctx.needs_input_grad[0] else None,
            g * b / ctx.out if ctx.needs_input_grad[1] else None)


@formula("logaddexp", save=(0, 1), save_output=True)
def logaddexp(ctx, g):
    """d/da = exp(a - out) (a softmax weight, never above 1)."""
    a, b = ctx.args
    return (g * tensorlib.exp(a - ctx.out) if ctx.needs_input_grad[0] else None,
            g * tensorlib.exp(b - ctx.out) if ctx.needs_input_grad[1] else None)


@formula("clamp", save=(0, 1, 2))
def clamp(ctx, g):
    """As torch: x gets g inside [min, max] (boundaries included), min gets it where x < min,
    max where x > max."""
    x, lo, hi = ctx.args
    inside = None
    if lo is not None:
        inside = tensorlib.ge(x, lo)
    if hi is not None:
        below_hi = tensorlib.le(x, hi)
        inside = below_hi if inside is None else inside & below_hi
    gx = tensorlib.where(inside, g, 0.0) if ctx.needs_input_grad[0] else None
    glo = tensorlib.where(tensorlib.lt(x, lo), g, 0.0) if ctx.needs_input_grad[1] else None
    ghi = tensorlib.where(tensorlib.gt(x, hi), g, 0.0) if ctx.needs_input_grad[2] else None
    return gx, glo, ghi
