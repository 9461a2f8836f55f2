"""Clamping and blending elementwise: clamp/clip (and clamp_min/clamp_max), lerp, and the
fused-looking addcmul/addcdiv, each composed of `_C.pointwise` primitives so every backend
runs them; their in-place forms compute out of place and write back (`inplace_composite`)."""
from tensorlib._C.pointwise import SAME, TO_BOOL, TO_FLOAT, binary, unary
from tensorlib.ops._autocast import autocast_op as _autocast_op
from tensorlib.ops._opdef import differentiable as _differentiable
from tensorlib.ops.pointwise import (_is_tensor, _pyabs, _require_float, inplace_composite,
                                     where)

__all__ = ["clamp", "clip", "clamp_min", "clamp_max", "lerp", "addcmul", "addcdiv"]


def clamp(x, min=None, max=None):  # noqa: A002 - torch's names
    """min(max(x, min), max): numbers or tensors (broadcast, promoted), NaN propagating."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return _clamp(x, min, max)


@_differentiable("clamp")
def _clamp(x, lo, hi):
    out = x
    if lo is not None:
        out = binary("maximum", out, lo, SAME)
    if hi is not None:
        out = binary("minimum", out, hi, SAME)
    return out


clip = clamp


def clamp_min(x, min):  # noqa: A002
    return clamp(x, min=min)


def clamp_max(x, max):  # noqa: A002
    return clamp(x, max=max)


def lerp(start, end, weight):
    """start + weight * (end - start), from the nearer end when weight >= 0.5 (exact at 1)."""
    _require_float("lerp_kernel_scalar", start)
    for name, other in (("end", end), ("weight", weight)):
        if _is_tensor(other) and other._dtype is not start._dtype:
            raise RuntimeError(f"expected dtype {start._dtype.name} for `{name}` but got dtype "
                               f"{other._dtype.name}")
    diff = binary("sub", end, start, SAME)
    if not _is_tensor(weight):
        if _pyabs(weight) < 0.5:
            return binary("add", start, binary("mul", diff, weight, SAME), SAME)
        return binary("sub", end, binary("mul", diff, 1 - weight, SAME), SAME)
    near_start = binary("lt", unary("abs", weight, SAME), 0.5, TO_BOOL)
    return where(near_start, binary("add", start, binary("mul", weight, diff, SAME), SAME),
                 binary("sub", end, binary("mul", diff, binary("sub", 1, weight, SAME), SAME),
                        SAME))


def _in_common_dtype(*xs):
    """addcmul/addcdiv are one kernel over their three tensors in PyTorch: promoted together
    (a 0-d operand does not widen the others, as it would pairwise)."""
    from tensorlib._C.promotion import result_type
    common = result_type(xs)
    return [x if not _is_tensor(x) or x._dtype is common else x.to(common) for x in xs]


@_autocast_op("addcmul")
def addcmul(input, tensor1, tensor2, *, value=1):  # noqa: A002
    input, tensor1, tensor2 = _in_common_dtype(input, tensor1, tensor2)
    prod_ = binary("mul", tensor1, tensor2, SAME)
    if value != 1:
        prod_ = binary("mul", prod_, value, SAME)
    return binary("add", input, prod_, SAME)


@_autocast_op("addcdiv")
def addcdiv(input, tensor1, tensor2, *, value=1):  # noqa: A002
    if not tensor1._dtype.is_floating_point and not tensor2._dtype.is_floating_point:
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                           "future  release addcdiv will perform a true division of tensor1 and "
                           "tensor2. The historic addcdiv behavior can be implemented as "
                           "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
                           "for integer inputs and as (input + value * tensor1 / tensor2) for "
                           "float inputs. The future addcdiv behavior is just the latter "
                           "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    input, tensor1, tensor2 = _in_common_dtype(input, tensor1, tensor2)
    quot = binary("div", tensor1, tensor2, TO_FLOAT)
    if value != 1:
        quot = binary("mul", quot, value, SAME)
    return binary("add", input, quot, SAME)


TENSOR_METHODS = {name: globals()[name] for name in __all__}
TENSOR_METHODS.update({f"{name}_": inplace_composite(globals()[name]) for name in __all__})
