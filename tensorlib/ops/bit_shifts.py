"""bitwise_left_shift / bitwise_right_shift (`<<`, `>>` and their in-place forms), composed
of integer products and floor divisions so every backend runs them: `a << s` is
`a * 2**s` (wrapping as the hardware shift does), `a >> s` is `floor(a / 2**s)` (the
arithmetic shift). A shift outside [0, bits) gives 0, or -1 for a negative signed value
shifted right, as PyTorch's kernels do."""
import tensorlib._C.dtypes as dt
from tensorlib.ops._inplace import inplace_composite

__all__ = ["bitwise_left_shift", "bitwise_right_shift"]


def _operands(name, a, b):
    from tensorlib._C.promotion import result_type
    from tensorlib.ops.creation import tensor
    from tensorlib._C.tensor_impl import TensorImpl
    if not isinstance(a, TensorImpl) and not isinstance(b, TensorImpl):
        raise TypeError(f"{name}(): expected a Tensor, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    like = a if isinstance(a, TensorImpl) else b
    result = result_type((a, b))
    if result is dt.bool_:
        result = dt.int64 if not isinstance(a, TensorImpl) or not isinstance(b, TensorImpl) \
            else dt.bool_
    if result.is_floating_point or result.is_complex or result is dt.bool_:
        short = "lshift" if name == "bitwise_left_shift" else "rshift"
        raise NotImplementedError(f"\"{short}_cpu\" not implemented for '{result.scalar_name}'")
    a, b = ((x.to(result) if isinstance(x, TensorImpl)
             else tensor(x, dtype=result, device=like.device)) for x in (a, b))
    return a, b, result


def _powers_of_two(shift, bits, result):
    """2**shift in `result` for shift in [0, bits): the top bit of a signed type is its
    minimum, so products with it wrap as a shift into the sign bit does."""
    from tensorlib.ops.creation import full_like
    from tensorlib.ops.pointwise import pow as power
    below = power(full_like(shift, 2), shift.clamp(max=bits - 2))
    if not result.is_signed:
        return power(full_like(shift, 2), shift)
    top = full_like(shift, -(1 << (bits - 1)))
    return top.where(shift == bits - 1, below)


def bitwise_left_shift(input, other):  # noqa: A002 - PyTorch's name
    a, s, result = _operands("bitwise_left_shift", input, other)
    bits = result.itemsize * 8
    valid = (s >= 0) & (s < bits)
    shift = s.where(valid, 0)
    return (a * _powers_of_two(shift, bits, result)).where(valid, 0)


def bitwise_right_shift(input, other):  # noqa: A002 - PyTorch's name
    from tensorlib.ops.pointwise import floor_divide
    a, s, result = _operands("bitwise_right_shift", input, other)
    bits = result.itemsize * 8
    valid = (s >= 0) & (s < bits - (1 if result.is_signed else 0))
    shift = s.where(valid, 0)
    shifted = floor_divide(a, _powers_of_two(shift, bits, result))
    if not result.is_signed:
        return shifted.where(valid, 0)
    sign = (a < 0).to(result).neg()              # what a shift past the value bits leaves
    return shifted.where(valid, sign)


def _reflected(fn):
    def method(self, other):
        return fn(other, self)
    method.__name__ = fn.__name__
    return method


bitwise_left_shift_ = inplace_composite(bitwise_left_shift)
bitwise_right_shift_ = inplace_composite(bitwise_right_shift)
TENSOR_METHODS = {"bitwise_left_shift": bitwise_left_shift,
                  "bitwise_right_shift": bitwise_right_shift,
                  "bitwise_left_shift_": bitwise_left_shift_,
                  "bitwise_right_shift_": bitwise_right_shift_,
                  "__lshift__": bitwise_left_shift, "__rshift__": bitwise_right_shift,
                  "__rlshift__": _reflected(bitwise_left_shift),
                  "__rrshift__": _reflected(bitwise_right_shift),
                  "__ilshift__": bitwise_left_shift_, "__irshift__": bitwise_right_shift_}
