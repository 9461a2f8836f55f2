"""Derivatives of nn.functional's piecewise-linear activations (ops/piecewise_activations.py),
from the forward's input x, with PyTorch's values on the kinks: one pass of the backend's
`<op>_backward(out, grad, x, *params)` where it has one (and the gradient needs no graph of
its own), else selects over x."""
import tensorlib
from tensorlib._C.factory import empty
from tensorlib.autograd.recording import formula
from tensorlib.ops._composites import optional_kernel


_SIXTH = 0.1666666716337204        # float32(1/6)


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
