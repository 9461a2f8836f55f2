"""Derivatives of nn.functional's piecewise-linear activations (ops/piecewise_activations.py)
and exp-based ones (ops/exp_activations.py), from the forward's input x, with PyTorch's values
on the kinks and at NaN: one pass of the backend's `<op>_backward(out, grad, x, *params)`
where it has one (and the gradient needs no graph of its own), else composed of tensor ops."""
import math
import struct

import tensorlib
from tensorlib._C.factory import empty
from tensorlib.autograd.recording import formula
from tensorlib.ops._composites import optional_kernel


_SIXTH = 0.1666666716337204        # float32(1/6)


def _float32(value):
    """value rounded to the nearest float32 (infinite past its range)."""
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def _params(ctx, defaults):
    """The op's non-tensor arguments after x, positional or by keyword, defaults filled in."""
    given = ctx.args[1:]
    return tuple(given[i] if i < len(given) else ctx.kwargs.get(name, default)
                 for i, (name, default) in enumerate(defaults))


def _one_pass(name, g, x, params):
    kernel = optional_kernel(g._device, name)
    if kernel is None or tensorlib.is_grad_enabled() or g._dtype is not x._dtype:
        return None
    out = empty(g._sizes, g._dtype, g._device)
    if kernel(out, g, x, *params) or kernel(out, g.contiguous(), x.contiguous(), *params):
        return out
    return None


@formula("hardtanh", save=(0,))
def hardtanh(ctx, g):
    """g strictly inside (min_val, max_val), 0 on the bounds, outside and for NaN."""
    x = ctx.args[0]
    lo, hi = _params(ctx, (("min_val", -1.0), ("max_val", 1.0)))
    fused = _one_pass("hardtanh_backward", g, x, (lo, hi))
    if fused is not None:
        return (fused,)
    inside = tensorlib.logical_and(tensorlib.gt(x, lo), tensorlib.lt(x, hi))
    return (tensorlib.where(inside, g, 0.0),)


@formula("leaky_relu", save=(0,))
def leaky_relu(ctx, g):
    """g where x > 0, else negative_slope * g (at 0 and for NaN too)."""
    x = ctx.args[0]
    (slope,) = _params(ctx, (("negative_slope", 0.01),))
    fused = _one_pass("leaky_relu_backward", g, x, (slope,))
    if fused is not None:
        return (fused,)
    return (tensorlib.where(tensorlib.gt(x, 0), g, g * slope),)


@formula("hardsigmoid", save=(0,))
def hardsigmoid(ctx, g):
    """g / 6 strictly inside (-3, 3), else 0 (1/6 rounded to float32, as PyTorch's)."""
    x = ctx.args[0]
    fused = _one_pass("hardsigmoid_backward", g, x, ())
    if fused is not None:
        return (fused,)
    inside = tensorlib.logical_and(tensorlib.gt(x, -3.0), tensorlib.lt(x, 3.0))
    return (tensorlib.where(inside, g * _SIXTH, 0.0),)


@formula("hardswish", save=(0,))
def hardswish(ctx, g):
    """0 up to -3 (included), g from 3 on, g * (x / 3 + 1/2) between (NaN for NaN)."""
    x = ctx.args[0]
    fused = _one_pass("hardswish_backward", g, x, ())
    if fused is not None:
        return (fused,)
    return (tensorlib.where(tensorlib.le(x, -3.0), 0.0,
                            tensorlib.where(tensorlib.ge(x, 3.0), g, g * (x / 3.0 + 0.5))),)


@formula("elu", save=(0,))
def elu(ctx, g):
    """g * input_scale * alpha * scale * exp(input_scale * x) for x <= 0, else g * scale; NaN
    for NaN (as PyTorch's vectorised elu_backward)."""
    x = ctx.args[0]
    alpha, scale, input_scale = _params(ctx, (("alpha", 1.0), ("scale", 1.0),
                                              ("input_scale", 1.0)))
    return (_elu_grad(g, x, alpha, scale, input_scale),)


@formula("celu", save=(0,))
def celu(ctx, g):
    """ELU's, with input scale 1 / alpha: alpha rounded to float32 there, as in PyTorch's
    formula (its forward divides by the double)."""
    (alpha,) = _params(ctx, (("alpha", 1.0),))
    return (_elu_grad(g, ctx.args[0], alpha, 1.0, 1.0 / _float32(alpha)),)


def _elu_grad(g, x, alpha, scale, input_scale):
    fused = _one_pass("elu_backward", g, x, (alpha, scale, input_scale))
    if fused is not None:
        return fused
    positive = tensorlib.gt(x, 0)
    slope = tensorlib.exp(tensorlib.where(positive, 0.0, x) * input_scale)
    return tensorlib.where(positive, g * scale, g * (input_scale * alpha * scale) * slope)


@formula("softplus", save=(0,))
def softplus(ctx, g):
    """g where beta * x > threshold, else g * z / (z + 1), z = exp(beta * x)."""
    x = ctx.args[0]
    beta, threshold = _params(ctx, (("beta", 1.0), ("threshold", 20.0)))
    fused = _one_pass("softplus_backward", g, x, (beta, threshold))
    if fused is not None:
        return (fused,)
    linear = tensorlib.gt(x * beta, threshold)
    z = tensorlib.exp(tensorlib.where(linear, 0.0, x * beta))
    return (tensorlib.where(linear, g, g * z / (z + 1)),)


@formula("log_sigmoid", save=(0,))
def log_sigmoid(ctx, g):
    """g * ((x < 0) - sign * z / (1 + z)), z = exp(-|x|), sign 1 below 0 and -1 from 0 on."""
    x = ctx.args[0]
    fused = _one_pass("log_sigmoid_backward", g, x, ())
    if fused is not None:
        return (fused,)
    negative = tensorlib.lt(x, 0)
    z = tensorlib.exp(-tensorlib.abs(x))
    below = tensorlib.where(negative, 1.0, 0.0)
    sign = tensorlib.where(negative, 1.0, -1.0)
    return (g * (below - sign * (z / (1 + z))),)


@formula("mish", save=(0,))
def mish(ctx, g):
    """g * (t + x * sigmoid(x) * (1 - t^2)), t = tanh(softplus(x))."""
    x = ctx.args[0]
    fused = _one_pass("mish_backward", g, x, ())
    if fused is not None:
        return (fused,)
    linear = tensorlib.gt(x, 20.0)          # softplus(x), x itself past its threshold
    t = tensorlib.tanh(tensorlib.where(
        linear, x, tensorlib.log1p(tensorlib.exp(tensorlib.where(linear, 0.0, x)))))
    return (g * (t + x * tensorlib.sigmoid(x) * (1 - t * t)),)
