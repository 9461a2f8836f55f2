"""Batch rules of the elementwise ops (with broadcasting, in place too), the `*_like` and
`new_*` factories, and the ops whose randomness vmap's flag governs."""
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.func._batching._batched import (BatchedTensor, at_level, batch_size, front,
                                               logical_dim, make, pad_to, random_guard)
from tensorlib.func._batching._dispatch import register

_UNARY = """abs absolute neg negative positive exp exp2 expm1 log log2 log10 log1p sqrt rsqrt
sin cos tan asin acos atan arcsin arccos arctan sinh cosh tanh asinh acosh atanh arcsinh
arccosh arctanh sigmoid relu relu6 erf erfc erfinv sign sgn floor ceil round trunc fix frac
reciprocal square logical_not bitwise_not isnan isinf isfinite isposinf isneginf isreal
nan_to_num signbit lgamma digamma i0 sinc deg2rad rad2deg logit expit conj_physical
clone contiguous to type_as float double half bfloat16 int long short bool byte char
clamp clip clamp_min clamp_max add sub subtract mul multiply div divide true_divide
floor_divide remainder fmod pow float_power atan2 arctan2 hypot maximum minimum fmax fmin eq
ne lt le gt ge greater greater_equal less less_equal not_equal logical_and logical_or
logical_xor bitwise_and bitwise_or bitwise_xor copysign xlogy lerp addcmul addcdiv where
masked_fill rsub heaviside nextafter ldexp isclose
__floordiv__ __rfloordiv__ __rsub__ __rtruediv__ __rpow__ __rmod__ __and__ __or__ __xor__
__eq__ __invert__ __rand__ __ror__ __rxor__
leaky_relu elu selu celu gelu silu mish softplus softsign tanhshrink hardtanh hardsigmoid
hardswish logsigmoid threshold hardshrink softshrink""".split()
_LIKE = "zeros_like ones_like empty_like full_like rand_like randn_like randint_like".split()
_RANDOM_LIKE = {"rand_like", "randn_like", "randint_like"}


def wrap_out(out, level, bdim=0):
    """An op's physical output(s) batched at `level` along bdim."""
    if isinstance(out, TensorImpl):
        return make(out, bdim, level)
    if isinstance(out, (tuple, list)):
        items = [wrap_out(o, level, bdim) for o in out]
        return type(out)(*items) if hasattr(type(out), "_fields") else type(out)(items)
    return out


def align(args, kwargs, level, rank=None, inplace=False):
    """Arguments with each tensor batched at `level` moved to dim 0 and padded to the
    broadcast rank; None when a batched 0-dim operand would change type promotion."""
    tensors = [a for a in list(args) + list(kwargs.values()) if isinstance(a, TensorImpl)]
    if not inplace and not any(at_level(t, level)[1] is not None for t in tensors):
        return None
    if rank is None:
        rank = max(logical_dim(t) for t in tensors)
    if not inplace and rank and len({t.dtype for t in tensors}) > 1 and any(
            at_level(t, level)[1] is not None and t.dim() == 0 for t in tensors):
        return None

    def conv(a):
        value = front(a, level) if type(a) is BatchedTensor else None
        return a if value is None else pad_to(value, rank + 1)
    return [conv(a) for a in args], {k: conv(v) for k, v in kwargs.items()}


@register(*_UNARY)
def pointwise(func, level, args, kwargs):
    if "out" in kwargs or (func.__name__ == "where" and len(args) < 2):
        return NotImplemented
    aligned = align(args, kwargs, level)
    if aligned is None:
        return NotImplemented
    return wrap_out(func(*aligned[0], **aligned[1]), level)


def _inplace_names():
    skip = {"clone", "contiguous", "to", "type_as", "float", "double", "half", "bfloat16",
            "int", "long", "short", "bool", "byte", "char", "where", "isclose"}
    names = [n + "_" for n in _UNARY if not n.startswith("__") and n not in skip]
    return names + ["zero_", "fill_", "copy_", "masked_fill_", "_add_", "_sub_", "_div_",
                    "_neg_", "__iadd__", "__isub__", "__imul__", "__itruediv__"]


@register(*_inplace_names())
def inplace(func, level, args, kwargs):
    self = args[0]
    value = front(self, level)
    if value is None or "out" in kwargs:
        return NotImplemented              # the loop raises vmap's in-place error
    aligned = align(args[1:], kwargs, level, rank=self.dim(), inplace=True)
    if aligned is None:
        return NotImplemented
    func(value, *aligned[0], **aligned[1])
    return self


@register(*_LIKE)
def like(func, level, args, kwargs):
    value, bdim = at_level(args[0], level)
    if bdim is None or any(type(a) is BatchedTensor for a in args[1:]):
        return NotImplemented
    guard = random_guard(level)
    if func.__name__ in _RANDOM_LIKE and guard is not None and guard.randomness == "same":
        return NotImplemented              # the loop draws the same numbers per sample
    return make(func(value, *args[1:], **kwargs), bdim, level)


def _new_size(args, kwargs, name):
    if "size" in kwargs:
        return tuple(kwargs.pop("size")), args[1:]
    if name == "new_full" or (len(args) > 1 and not isinstance(args[1], int)):
        return tuple(args[1]), args[2:]
    n = 1
    while n < len(args) and isinstance(args[n], int) and not isinstance(args[n], bool):
        n += 1
    return tuple(args[1:n]), args[n:]


@register("new_zeros", "new_ones", "new_empty", "new_full")
def new_factory(func, level, args, kwargs):
    """Batched, so writing a batched value into the new tensor works (functorch's rule)."""
    value, bdim = at_level(args[0], level)
    if bdim is None or any(type(a) is BatchedTensor for a in args[1:]):
        return NotImplemented
    kwargs = dict(kwargs)
    size, rest = _new_size(args, kwargs, func.__name__)
    return make(func(value, (batch_size(level),) + size, *rest, **kwargs), 0, level)


@register("new_tensor")
def new_tensor(func, level, args, kwargs):
    value, bdim = at_level(args[0], level)
    if bdim is None or any(type(a) is BatchedTensor for a in args[1:]):
        return NotImplemented
    return func(value, *args[1:], **kwargs)


@register("dropout", "alpha_dropout")
def dropout(func, level, args, kwargs):
    """Under randomness='different' every element draws its own mask at once; under 'same'
    the loop draws one mask for all samples."""
    value, bdim = at_level(args[0], level)
    guard = random_guard(level)
    if bdim is None or (guard is not None and guard.randomness == "same") or \
            kwargs.get("inplace") or len(args) > 3:
        return NotImplemented
    return make(func(value, *args[1:], **kwargs), bdim, level)
