"""tensorlib.testing.make_tensor: a random tensor of a shape, dtype and device, with
PyTorch's default ranges ([-9, 9] floats, [-9, 10) integers, [0, 10) uint8)."""
import math

import numpy as np

import tensorlib

__all__ = ["make_tensor"]


def _shape(shape):
    if len(shape) == 1 and isinstance(shape[0], (list, tuple, tensorlib.Size)):
        return tuple(shape[0])
    return tuple(shape)


def _float_limits(dtype):
    """(largest finite, smallest normal) of a floating dtype."""
    if dtype is tensorlib.bfloat16:
        return 3.3895313892515355e38, 1.1754943508222875e-38
    info = np.finfo(np.float16 if dtype is tensorlib.float16 else dtype.np)
    return float(info.max), float(info.tiny)


def _bounds(dtype, low, high):
    is_float = dtype.is_floating_point
    lowest = 0 if dtype is tensorlib.uint8 else -9
    default_low, default_high = (-9, 9) if is_float else (lowest, 10)
    low = default_low if low is None else low
    high = default_high if high is None else high
    for name, value in (("low", low), ("high", high)):
        if isinstance(value, float) and math.isnan(value):
            raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    if low > high:
        raise ValueError(f"`low` must be less than or equal to `high`, but got {low} > {high}")
    if is_float:
        biggest = _float_limits(dtype)[0]
        return max(low, -biggest), min(high, biggest)
    info = np.iinfo(dtype.np)
    return max(low, int(info.min)), min(high, int(info.max))


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """Uniform values in [low, high) (bool: random True/False); noncontiguous gives a view
    with a step in the last dim; exclude_zero replaces zeros by the smallest normal (floats)
    or 1 (integers)."""
    shape = _shape(shape)
    if dtype is tensorlib.bool:
        t = tensorlib.randint(0, 2, shape, device=device).to(tensorlib.bool)
    elif dtype.is_floating_point:
        low, high = _bounds(dtype, low, high)
        t = (tensorlib.rand(shape, dtype=tensorlib.float64, device=device) * (high - low) +
             low).to(dtype)
    else:
        low, high = _bounds(dtype, low, high)
        t = tensorlib.randint(math.ceil(low), max(math.ceil(high), math.ceil(low) + 1), shape,
                              dtype=tensorlib.int64, device=device).to(dtype)
    if noncontiguous and t.numel() > 1:
        t = t.repeat_interleave(2, dim=-1)[..., ::2]
    if exclude_zero and dtype is not tensorlib.bool:
        replacement = _float_limits(dtype)[1] if dtype.is_floating_point else 1
        t = t.masked_fill(t == 0, replacement)
    if requires_grad:
        if not dtype.is_floating_point:
            raise ValueError(f"make_tensor: requires_grad=True is not supported for {dtype}")
        t.requires_grad_(True)
    return t
