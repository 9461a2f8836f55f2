"""hardtanh (relu6), leaky_relu, hardsigmoid and hardswish, nn.functional's piecewise-linear
activations as ops of their own (one recorded node each, formulas in
autograd/formulas/activations.py): a backend's one-pass kernel where it has one, else composed
of compares and selects (3-6 passes: a 16-float hardswish took 17 us against PyTorch's 1.9).
PyTorch has no torch.<name> for them, so nothing here is exported as tensorlib.<name>."""
from tensorlib._C.factory import cast
from tensorlib._C.factory import empty as _empty
from tensorlib._C.pointwise import SAME, TO_BOOL, binary
from tensorlib.ops._composites import optional_kernel
from tensorlib.ops._opdef import differentiable as _differentiable
from tensorlib.ops._where import where

__all__ = []


def one_pass(name, x, *params):
    """x's activation in one pass of the backend's kernel `name` (on a contiguous copy of a
    layout it declines); None where the backend has none or takes no such dtype."""
    kernel = optional_kernel(x._device, name)
    if kernel is None:
        return None
    out = _empty(x._sizes, x._dtype, x._device)
    if kernel(out, x, *params) or (not x.is_contiguous()
                                   and kernel(out, x.contiguous(), *params)):
        return out
    return None


@_differentiable("hardtanh")
def hardtanh(x, min_val=-1.0, max_val=1.0):
    """x clamped to [min_val, max_val] in x's dtype, NaN kept."""
    out = one_pass("hardtanh", x, min_val, max_val)
    if out is not None:
        return out
    out = where(binary("le", x, min_val, TO_BOOL), min_val,
                where(binary("ge", x, max_val, TO_BOOL), max_val, x))
    return out if out._dtype is x._dtype else cast(out, x._dtype)


@_differentiable("leaky_relu")
def leaky_relu(x, negative_slope=0.01):
    """x where x > 0, else negative_slope * x."""
    out = one_pass("leaky_relu", x, negative_slope)
    if out is not None:
        return out
    return where(binary("gt", x, 0, TO_BOOL), x, binary("mul", x, negative_slope, SAME))


def _relu6_of_shift(x):
    """min(max(x + 3, 0), 6), hardsigmoid's and hardswish's common part."""
    shifted = binary("add", x, 3.0, SAME)
    return binary("minimum", binary("maximum", shifted, 0.0, SAME), 6.0, SAME)


@_differentiable("hardsigmoid")
def hardsigmoid(x):
    """min(max(x + 3, 0), 6) / 6."""
    out = one_pass("hardsigmoid", x)
    if out is not None:
        return out
    return binary("div", _relu6_of_shift(x), 6.0, SAME)


@_differentiable("hardswish")
def hardswish(x):
    """x * min(max(x + 3, 0), 6) / 6."""
    out = one_pass("hardswish", x)
    if out is not None:
        return out
    return binary("div", binary("mul", x, _relu6_of_shift(x), SAME), 6.0, SAME)
