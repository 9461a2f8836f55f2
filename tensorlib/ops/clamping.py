"""Clamping and blending elementwise: clamp/clip (and clamp_min/clamp_max), lerp, and the
fused-looking addcmul/addcdiv, each composed of `_C.pointwise` primitives so every backend
runs them; their in-place forms compute out of place and write back (`inplace_composite`)."""
import math as _math

import tensorlib._C.dtypes as dt
from tensorlib._C.autograd import scalar_argument
from tensorlib._C.factory import empty as _empty
from tensorlib._C.grad_mode import is_grad_enabled as _grad_enabled
from tensorlib._C.pointwise import SAME, TO_BOOL, TO_FLOAT, binary, unary
from tensorlib._C.tensor_impl import TensorImpl as _TensorImpl
from tensorlib.ops._composites import optional_kernel
from tensorlib.ops._autocast import autocast_op as _autocast_op
from tensorlib.ops._opdef import differentiable as _differentiable
from tensorlib.ops.pointwise import (HALF_TYPES, _finfo, _is_tensor, _pyabs, _require_float,
                                     inplace_composite, where)

__all__ = ["clamp", "clip", "clamp_min", "clamp_max", "lerp", "addcmul", "addcdiv"]


def clamp(x, min=None, max=None):  # noqa: A002 - torch's names
    """min(max(x, min), max): numbers or tensors (broadcast, promoted), NaN propagating."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if x._dtype.is_floating_point:
        for bound in (min, max):
            _check_fits(bound, x._dtype)
    return _clamp(x, min, max)


_CPP_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
              "float64": "double"}


def _check_fits(bound, dtype):
    """A finite number bound past the float dtype's range raises, as PyTorch's conversion of
    the bound to the tensor's dtype does (infinite bounds are fine)."""
    if type(bound) is not float and type(bound) is not int or -65504.0 <= bound <= 65504.0:
        return                                  # not a number, or in every float's range
    if _math.isfinite(bound) and _pyabs(bound) > float(_finfo(dtype).max):
        name = _CPP_NAMES.get(dtype.name, dtype.name)
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")


@_differentiable("clamp")
def _clamp(x, lo, hi):
    if _is_number_bound(lo) and _is_number_bound(hi) and x._dtype.is_floating_point:
        kernel = optional_kernel(x._device, "clamp")       # one pass, not two
        if kernel is not None:
            out = _empty(x._sizes, x._dtype, x._device)
            if kernel(out, x, lo, hi):
                return out
    out = x
    if lo is not None:
        out = binary("maximum", out, lo, SAME)
    if hi is not None:
        out = binary("minimum", out, hi, SAME)
    return out


def _is_number_bound(bound):
    return bound is None or type(bound) is float or type(bound) is int


clip = clamp


def clamp_min(x, min):  # noqa: A002
    return clamp(x, min=min)


def clamp_max(x, max):  # noqa: A002
    return clamp(x, max=max)


def lerp(input, end, weight):  # noqa: A002 - torch's name
    """input + weight * (end - input), from the nearer end when weight >= 0.5 (exact at 1)."""
    _require_float("lerp_kernel_scalar", input)
    for name, other in (("end", end), ("weight", weight)):
        if _is_tensor(other) and other._dtype is not input._dtype:
            raise RuntimeError(f"expected dtype {input._dtype.name} for `{name}` but got dtype "
                               f"{other._dtype.name}")
    if input._dtype.name in HALF_TYPES:          # in float32, rounded once (PyTorch's kernel)
        wide = dt.float32
        return lerp(input.to(wide), end.to(wide),
                    weight.to(wide) if _is_tensor(weight) else weight).to(input._dtype)
    done = _one_pass("lerp", input, (end, weight), weight)
    if done is not None:
        return done
    diff = binary("sub", end, input, SAME)
    if not _is_tensor(weight):
        if _pyabs(weight) < 0.5:
            return binary("add", input, scalar_argument(binary("mul", diff, weight, SAME)), SAME)
        return binary("sub", end, scalar_argument(binary("mul", diff, 1 - weight, SAME)), SAME)
    near_start = binary("lt", unary("abs", weight, SAME), 0.5, TO_BOOL)
    return where(near_start, binary("add", input, binary("mul", weight, diff, SAME), SAME),
                 binary("sub", end, binary("mul", diff, binary("sub", 1, weight, SAME), SAME),
                        SAME))


def _one_pass(name, first, others, number):
    """The backend's one-pass kernel `name` (lerp, addcmul, addcdiv) for float tensors of one
    shape, when no graph is recorded (the composite carries autograd); None where it has
    none or declines. Straight-line checks: on 16 floats the generator-based ones cost 3 us,
    four times the kernel."""
    if not first._dtype.is_floating_point:
        return None
    kernel = optional_kernel(first._device, name)
    if kernel is None:
        return None
    if type(number) is not float and type(number) is not int and not _is_tensor(number):
        return None
    sizes, grad = first._sizes, _grad_enabled()
    if grad and first._requires_grad:
        return None
    for t in others:
        if isinstance(t, _TensorImpl) and (t._sizes != sizes or grad and t._requires_grad):
            return None
    out = _empty(sizes, first._dtype, first._device)
    if name == "lerp":
        return out if kernel(out, first, others[0], number) else None
    return out if kernel(out, first, others[0], others[1], number) else None


def _in_common_dtype(*xs):
    """addcmul/addcdiv are one kernel over their three tensors in PyTorch: promoted together
    (a 0-d operand does not widen the others, as it would pairwise)."""
    first, second, third = xs
    if type(second) is type(first) and type(third) is type(first) and \
            second._dtype is first._dtype and third._dtype is first._dtype:
        return xs                                   # one dtype already: nothing to promote
    from tensorlib._C.promotion import result_type
    common = result_type(xs)
    return [x if not _is_tensor(x) or x._dtype is common else x.to(common) for x in xs]


def _in_float(op, input, tensor1, tensor2, value):  # noqa: A002
    """op of float16/bfloat16 tensors computed in float32 (value unrounded) and rounded
    once, as PyTorch's kernels compute them."""
    wide = dt.float32
    return op(input.to(wide), tensor1.to(wide), tensor2.to(wide), value=value).to(input._dtype)


@_autocast_op("addcmul")
def addcmul(input, tensor1, tensor2, *, value=1):  # noqa: A002
    input, tensor1, tensor2 = _in_common_dtype(input, tensor1, tensor2)
    if input._dtype.name in HALF_TYPES:         # in float32, rounded once (PyTorch's kernel)
        return _in_float(addcmul, input, tensor1, tensor2, value)
    done = _one_pass("addcmul", input, (tensor1, tensor2), value)
    if done is not None:
        return done
    prod_ = binary("mul", tensor1, tensor2, SAME)
    if value != 1:
        prod_ = binary("mul", prod_, value, SAME)
    return binary("add", input, prod_, SAME)


@_autocast_op("addcdiv")
def addcdiv(input, tensor1, tensor2, *, value=1):  # noqa: A002
    if all(not (t._dtype.is_floating_point or t._dtype.is_complex) for t in (tensor1, tensor2)):
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                           "future  release addcdiv will perform a true division of tensor1 and "
                           "tensor2. The historic addcdiv behavior can be implemented as "
                           "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
                           "for integer inputs and as (input + value * tensor1 / tensor2) for "
                           "float inputs. The future addcdiv behavior is just the latter "
                           "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    input, tensor1, tensor2 = _in_common_dtype(input, tensor1, tensor2)
    if input._dtype.name in HALF_TYPES:
        return _in_float(addcdiv, input, tensor1, tensor2, value)
    done = _one_pass("addcdiv", input, (tensor1, tensor2), value)
    if done is not None:
        return done
    quot = binary("div", tensor1, tensor2, TO_FLOAT)
    if value != 1:
        quot = binary("mul", quot, value, SAME)
    return binary("add", input, quot, SAME)


def _clamp_into_self(x, min=None, max=None):  # noqa: A002
    """clamp_ by the backend's one-pass kernel writing x itself; False where it does not
    apply (the composite then runs)."""
    if not x._dtype.is_floating_point or not (_is_number_bound(min) and _is_number_bound(max)) \
            or (min is None and max is None):
        return False
    for bound in (min, max):
        _check_fits(bound, x._dtype)
    kernel = optional_kernel(x._device, "clamp")
    return kernel is not None and kernel(x, x, min, max)


def _blend_into_self(name):
    def direct(x, *args, **kwargs):
        kernel = optional_kernel(x._device, name)
        if kernel is None or not x._dtype.is_floating_point:
            return False
        if name == "lerp":
            return kernel(x, x, *args, **kwargs)
        value = kwargs.pop("value", 1)
        if kwargs or len(args) != 2 or type(value) not in (int, float):
            return False
        return kernel(x, x, args[0], args[1], value)
    return direct


_DIRECT = {"clamp": _clamp_into_self, "clip": _clamp_into_self,
           "clamp_min": lambda x, min: _clamp_into_self(x, min=min),  # noqa: A006
           "clamp_max": lambda x, max: _clamp_into_self(x, max=max),  # noqa: A006
           "lerp": _blend_into_self("lerp"), "addcmul": _blend_into_self("addcmul"),
           "addcdiv": _blend_into_self("addcdiv")}

TENSOR_METHODS = {name: globals()[name] for name in __all__}
TENSOR_METHODS.update({f"{name}_": inplace_composite(globals()[name], _DIRECT.get(name))
                       for name in __all__})
