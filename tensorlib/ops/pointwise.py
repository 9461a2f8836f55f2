"""Elementwise ops. The eager path is `_C.pointwise` (promotion, broadcasting, allocation,
dispatch in Cython); this module names the ops and adds the PyTorch-specific checks."""
import math as _math
import numbers as _numbers

import tensorlib._C.dtypes as dt
from tensorlib._C.device import canonical as _canonical
from tensorlib._C.factory import empty as _empty
from tensorlib._C.grad_mode import is_grad_enabled as _grad_enabled
from tensorlib._C.pointwise import (SAME, TO_BOOL, TO_FLOAT, LOGICAL, binary, binary_, unary,
                                    unary_, unary_if_taken)
from tensorlib._C.tensor_impl import TensorImpl as _TensorImpl
from tensorlib._layout import SPARSE_TYPES as _SPARSE_TYPES
from tensorlib.ops._composites import optional_kernel
from tensorlib.ops._inplace import inplace_composite, inplace_unary
from tensorlib.ops._inplace import not_implemented as _not_implemented
from tensorlib._C.autograd import scalar_argument as _scalar_argument
from tensorlib.ops._opdef import differentiable as _differentiable
from tensorlib.ops._where import where as _where
from tensorlib.ops import _autocast
from tensorlib.ops._autocast import autocast_op as _autocast_op


def _scaled(a, b, alpha):
    """b * alpha for add/sub, with PyTorch's checks of alpha against the result dtype."""
    if alpha is True or alpha is False:
        if _pw_result_dtype(a, b) is not dt.bool_:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, (float, complex)):
        result = _pw_result_dtype(a, b)
        if isinstance(alpha, complex) and not result.is_complex:
            raise RuntimeError("For non-complex input tensors, argument alpha must not be a "
                               "complex number.")
        if not (result.is_floating_point or result.is_complex):
            raise RuntimeError("For integral input tensors, argument alpha must not be a "
                               "floating point number.")
    if alpha == 1:
        return b
    if not _is_tensor(b):
        return b * alpha
    return _scalar_argument(binary("mul", b, alpha, SAME))


def _check_bool_sub(a, b):
    bools = (_dtype_of(a) is dt.bool_) + (_dtype_of(b) is dt.bool_)
    if bools == 2:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if bools:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")


def _dtype_of(x):
    """A tensor's dtype, or bool for a Python bool (the only number whose type decides here)."""
    if isinstance(x, bool):
        return dt.bool_
    return getattr(x, "_dtype", None)


def _sparse_hook(a, b):
    """The add of the sparse operand's class (tensorlib/sparse/_mixed.py): dense ops never
    see a sparse tensor's placeholder storage. Called once `_SPARSE_TYPES` holds a's or b's
    type (a set lookup: a getattr that misses costs far more on every add)."""
    return (type(b) if type(b) in _SPARSE_TYPES else type(a))._sparse_add


HALF_TYPES = ("float16", "bfloat16")


def _half_scaled(op, a, b, alpha):
    """a ± alpha * b of float16/bfloat16 tensors as PyTorch's kernel computes it: alpha
    rounded to their dtype, the rest in float32, rounded once (rounding alpha * b first put
    a third of bfloat16 results one step off); None for other operands."""
    if not (_is_tensor(a) and _is_tensor(b) and a._dtype is b._dtype
            and a._dtype.name in HALF_TYPES and not isinstance(alpha, (bool, complex))):
        return None
    narrow = _empty((), a._dtype, a._device).fill_(alpha).item()
    wide = dt.float32
    return binary(op, a.to(wide), _scaled(a, b.to(wide), narrow), SAME).to(a._dtype)


def _first_number_as_tensor(a, b):
    """a as a 0-dim CPU tensor of its own dtype when a and b are both numbers: torch.add, sub,
    mul, div and floor_divide (and their aliases) take two numbers (torch.mul(3, 5) is
    tensor(15)), where every other binary op requires a tensor."""
    if _is_tensor(a) or not isinstance(a, _numbers.Number) or \
            not isinstance(b, _numbers.Number):
        return a
    return _empty((), _promoted(a, a), _canonical("cpu")).fill_(a)


def add(a, b, *, alpha=1):
    a = _first_number_as_tensor(a, b)
    if type(b) in _SPARSE_TYPES or type(a) in _SPARSE_TYPES:
        return _sparse_hook(a, b)(a, b, alpha, False)
    if type(alpha) is int and alpha == 1:
        return binary("add", a, b, SAME)
    done = _half_scaled("add", a, b, alpha)
    return done if done is not None else binary("add", a, _scaled(a, b, alpha), SAME)


def sub(a, b, *, alpha=1):
    a = _first_number_as_tensor(a, b)
    _check_bool_sub(a, b)
    if type(b) in _SPARSE_TYPES or type(a) in _SPARSE_TYPES:
        return _sparse_hook(a, b)(a, b, -alpha, False)
    if type(alpha) is int and alpha == 1:
        return binary("sub", a, b, SAME)
    done = _half_scaled("sub", a, b, alpha)
    return done if done is not None else binary("sub", a, _scaled(a, b, alpha), SAME)


def rsub(a, b, *, alpha=1):
    return sub(b, a, alpha=alpha)


def mul(a, b):
    return binary("mul", _first_number_as_tensor(a, b), b, SAME)


_KERNEL_NAMES = {"floor_divide": "div_floor"}      # PyTorch's kernel names, for its message


def _integer_division(op, a, b):
    """An integer-capable division op; a zero integer divisor raises RuntimeError as in
    PyTorch (the CPU kernels signal it with ZeroDivisionError). PyTorch has no bool kernel
    for any of them, whatever the backend's kernels accept."""
    if _pw_result_dtype(a, b) is dt.bool_:
        raise _not_implemented(_KERNEL_NAMES.get(op, op), dt.bool_)
    try:
        return binary(op, a, b, SAME)
    except ZeroDivisionError:
        raise RuntimeError("ZeroDivisionError") from None


def div(a, b, *, rounding_mode=None):
    a = _first_number_as_tensor(a, b)
    if rounding_mode is None:
        return binary("div", a, b, TO_FLOAT)
    if rounding_mode == "floor":
        return _integer_division("floor_divide", a, b)
    if rounding_mode == "trunc":
        promoted = _pw_result_dtype(a, b)
        if promoted is dt.bool_:
            raise _not_implemented("div_trunc", dt.bool_)
        if not promoted.is_floating_point:
            if _is_tensor(a) and a._dtype is dt.bool_:    # bool has no subtraction: widen first
                a = a.to(promoted)
            # exact in integers: a - fmod(a, b) is a multiple of b
            return _integer_division("floor_divide", sub(a, fmod(a, b)), b)
        q = binary("div", a, b, TO_FLOAT)
        out = unary("trunc", q, SAME)
        return out if promoted is out._dtype else out.to(promoted)
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     f"found '{rounding_mode}'")


def _pw_result_dtype(a, b):
    from tensorlib._C.promotion import result_type
    return result_type((a, b))


def floor_divide(a, b):
    return _integer_division("floor_divide", _first_number_as_tensor(a, b), b)


def remainder(a, b):
    return _integer_division("remainder", a, b)


def fmod(a, b):
    return _integer_division("fmod", a, b)


@_autocast_op("pow")
def pow(a, exponent):  # noqa: A001 - torch's name
    if isinstance(exponent, bool) and _is_tensor(a) and a._dtype is dt.bool_:
        return a.clone() if exponent else _bool_full(a, True)       # a ** True, a ** False
    if _is_tensor(exponent) and not _is_float_dtype(_pw_result_dtype(a, exponent)) and \
            not _is_float_dtype(exponent._dtype) and exponent._dtype is not dt.bool_:
        return _integer_pow(a, exponent)
    if type(exponent) is int and exponent < 0 and _is_tensor(a) and \
            not a._dtype.is_floating_point and a._dtype is not dt.bool_:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    try:
        return binary("pow", a, exponent, SAME)
    except ValueError as exc:             # numpy: an integer to a negative Python int
        raise RuntimeError(str(exc)) from None
    except TypeError:
        if _pw_result_dtype(a, exponent) is dt.bool_:
            raise _not_implemented("pow", dt.bool_) from None
        raise


def _is_float_dtype(d):
    return d.category >= 2              # floating or complex


def _integer_pow(a, b):
    """Integer base and exponent tensors: a negative exponent gives 1 for base 1, +-1 for
    base -1 and 0 otherwise, as PyTorch's (numpy refuses)."""
    if not _is_tensor(a):
        from tensorlib.ops.creation import full
        a = full((), a, dtype=_pw_result_dtype(a, b), device=b._device)
    negative = binary("lt", b, 0, TO_BOOL)
    if not bool(negative.any()):
        return binary("pow", a, b, SAME)
    magnitude = where(negative, binary("mul", b, -1, SAME), b)
    power = binary("pow", a, magnitude, SAME)
    odd = binary("eq", binary("remainder", magnitude, 2, SAME), 1, TO_BOOL)
    minus_one = binary("eq", a, -1, TO_BOOL)
    special = where(binary("eq", a, 1, TO_BOOL), 1,
                    where(minus_one, where(odd, -1, 1), 0))
    return where(negative, special, power).to(power._dtype)


def maximum(a, b):
    return binary("maximum", a, b, SAME)


def minimum(a, b):
    return binary("minimum", a, b, SAME)


@_autocast_op("atan2")
def atan2(a, b):
    return binary("atan2", a, b, TO_FLOAT)


def eq(a, b):
    return binary("eq", a, b, TO_BOOL)


def ne(a, b):
    return binary("ne", a, b, TO_BOOL)


def lt(a, b):
    return binary("lt", a, b, TO_BOOL)


def le(a, b):
    return binary("le", a, b, TO_BOOL)


def gt(a, b):
    return binary("gt", a, b, TO_BOOL)


def ge(a, b):
    return binary("ge", a, b, TO_BOOL)


def logical_and(a, b):
    return binary("logical_and", a, b, LOGICAL)


def logical_or(a, b):
    return binary("logical_or", a, b, LOGICAL)


def logical_xor(a, b):
    return binary("logical_xor", a, b, LOGICAL)


def _bitwise(op):
    def fn(a, b):
        result = _pw_result_dtype(a, b)
        if result.is_floating_point:
            raise _not_implemented(op, result)
        return binary(op, a, b, SAME)
    fn.__name__ = op
    return fn


bitwise_and = _bitwise("bitwise_and")
bitwise_or = _bitwise("bitwise_or")
bitwise_xor = _bitwise("bitwise_xor")


def neg(x):
    if x._dtype is dt.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return unary("neg", x, SAME)


def bitwise_not(x):
    if x._dtype.is_floating_point:
        raise _not_implemented("bitwise_not", x._dtype)
    return unary("bitwise_not", x, SAME)


def _float_unary(op):
    def fn(x):
        if _autocast.active:            # the GPU autocast lists run exp, log, ... in float32
            return _autocast.run(op, unhooked, (x,), {})
        return unary(op, x, TO_FLOAT)

    def unhooked(x):
        return unary(op, x, TO_FLOAT)
    fn.__name__ = op
    return fn


def _same_unary(op):
    def fn(x):
        return unary(op, x, SAME)
    fn.__name__ = op
    return fn


exp = _float_unary("exp")
expm1 = _float_unary("expm1")
log = _float_unary("log")
log1p = _float_unary("log1p")
sqrt = _float_unary("sqrt")
sin = _float_unary("sin")
cos = _float_unary("cos")
tan = _float_unary("tan")
asin = _float_unary("asin")
acos = _float_unary("acos")
atan = _float_unary("atan")
sinh = _float_unary("sinh")
cosh = _float_unary("cosh")
tanh = _float_unary("tanh")
erf = _float_unary("erf")
def _no_bool_unary(op, kernel_name):
    """abs/floor/ceil/round/trunc: PyTorch has no bool kernel for them."""
    same = _same_unary(op)

    def fn(x):
        if getattr(x, "_dtype", None) is dt.bool_:
            raise _not_implemented(kernel_name, x._dtype)
        return same(x)
    fn.__name__ = op
    return fn


_abs = _no_bool_unary("abs", "abs")


def abs(x):  # noqa: A001
    """|x|; of a complex tensor, its modulus in the parts' float dtype."""
    if isinstance(x, _TensorImpl) and x._dtype.category == 3:
        from tensorlib.ops.complex import complex_abs
        return complex_abs(x)
    return _abs(x)

floor = _no_bool_unary("floor", "floor_vml")
ceil = _no_bool_unary("ceil", "ceil_vml")
_round = _no_bool_unary("round", "round_vml")


def round(x, *, decimals=None):  # noqa: A001
    """Half to even, to `decimals` digits (negative: to tens, hundreds), as PyTorch's: the
    scaling is done in x's dtype. Given decimals (even 0), integers raise as PyTorch's."""
    if decimals is None:
        return _round(x)
    if not x._dtype.is_floating_point:
        raise _not_implemented("round_vml" if decimals == 0 else "round", x._dtype)
    if decimals == 0:
        return _round(x)
    if decimals > 0:
        scale = 10.0 ** decimals
        return binary("div", _round(binary("mul", x, scale, SAME)), scale, SAME)
    scale = 10.0 ** -decimals
    return binary("mul", _round(binary("div", x, scale, SAME)), scale, SAME)
trunc = _no_bool_unary("trunc", "trunc_vml")
_sign = _same_unary("sign")


def sign(x):
    """-1, 0 or 1 (0 for NaN); a bool tensor is its own sign, as PyTorch's."""
    if getattr(x, "_dtype", None) is dt.bool_:
        return x.clone()
    if x._dtype.is_floating_point:
        # one pass, not three; a graph (of zero gradients) keeps the recorded composite
        kernel = optional_kernel(x._device, "float_sign")
        if kernel is not None and not (x._requires_grad and _grad_enabled()):
            out = _empty(x._sizes, x._dtype, x._device)
            if kernel(out, x):
                return out
        return where(isnan(x), 0, _sign(x))
    return _sign(x)


def logical_not(x):
    return unary("logical_not", x, LOGICAL)


def isnan(x):
    return unary("isnan", x, TO_BOOL)


# in place through the out-of-place op: its dtype refusals (no bool or float kernel in
# PyTorch) and integer division by zero are checked there
_CHECKED_INPLACE = ("pow", "remainder", "fmod", "floor_divide", "bitwise_and", "bitwise_or",
                    "bitwise_xor")


def inplace(op, kind=SAME):
    """`x.op_(other)`: op written into x (same version-counter bump as every in-place op)."""
    if op in _CHECKED_INPLACE:
        return inplace_composite(globals()[op])

    def fn(self, other):
        try:
            return binary_(op, self, other, kind)
        except NotImplementedError:      # a sparse operand refuses at its device: `dense += s`
            if op in ("add", "sub") and type(other) in _SPARSE_TYPES:
                return other._sparse_add(self, other, 1 if op == "add" else -1, True)
            raise
    fn.__name__ = op + "_"
    return fn



_NOT_GIVEN = object()


def where(condition, input=_NOT_GIVEN, other=_NOT_GIVEN):  # noqa: A002 - torch's names
    """input where condition else other, broadcasting all three; input/other may be numbers.
    where(condition) alone is nonzero(condition, as_tuple=True)."""
    if input is _NOT_GIVEN and other is _NOT_GIVEN:
        from tensorlib.ops.selection import nonzero
        return nonzero(condition, as_tuple=True)
    if input is _NOT_GIVEN or other is _NOT_GIVEN:
        raise TypeError("where() takes a condition alone, or a condition, input and other")
    return _where(condition, input, other)


def _where_method(self, condition, other):
    """Tensor.where(condition, other): self where condition else other (condition first)."""
    return where(condition, self, other)


# ---- helpers ---------------------------------------------------------------------------------
def _is_tensor(x):
    return isinstance(x, _TensorImpl)


def _promoted(a, b):
    from tensorlib._C.promotion import result_type
    return result_type((a, b))


def _floating(x):
    """x as a floating tensor: integers and bool go to the default float (torch's TO_FLOAT)."""
    return x if x._dtype.category >= 2 else x.to(dt.get_default_dtype())


def _require_float(name, *xs):
    for x in xs:
        if _is_tensor(x) and not x._dtype.is_floating_point:
            raise _not_implemented(name, x._dtype)


def _bool_full(x, value):
    from tensorlib._C.dispatch import lookup
    from tensorlib._C.factory import empty
    out = empty(x._sizes, dt.bool_, x._device)
    lookup("fill", x._device)(out, value)
    return out


def _finfo(dtype):
    import ml_dtypes
    return ml_dtypes.finfo(dtype.np)


# ---- exponentials, logs, powers --------------------------------------------------------------
_LN2 = _math.log(2.0)
_LN10 = _math.log(10.0)


def exp2(x):
    return binary("pow", 2.0, _floating(x), SAME)


@_autocast_op("log2")
def log2(x):
    """log(x) / ln 2 (within an ulp or two of a dedicated log2)."""
    return binary("div", unary("log", x, TO_FLOAT), _LN2, SAME)


@_autocast_op("log10")
def log10(x):
    return binary("div", unary("log", x, TO_FLOAT), _LN10, SAME)


@_autocast_op("rsqrt")
def rsqrt(x):
    return binary("div", 1.0, unary("sqrt", x, TO_FLOAT), SAME)


@_autocast_op("reciprocal")
def reciprocal(x):
    return binary("div", 1.0, _floating(x), SAME)


def square(x):
    """x * x; bool squares to int64 as torch's pow(x, 2) does."""
    if x._dtype is dt.bool_:
        x = x.to(dt.int64)
    return binary("mul", x, x, SAME)


def float_power(a, exponent):
    """pow computed (and returned) in float64."""
    if not _is_tensor(a) and not _is_tensor(exponent):
        raise TypeError("float_power(): expected at least one Tensor argument")
    a = a.to(dt.float64) if _is_tensor(a) else float(a)
    exponent = exponent.to(dt.float64) if _is_tensor(exponent) else float(exponent)
    return binary("pow", a, exponent, SAME)


@_differentiable("logaddexp")
def logaddexp(a, b):
    """log(exp(a) + exp(b)) without overflow: max + log1p(exp(min - max)); an infinite or NaN
    max is the answer itself (and is kept out of the arithmetic: inf - inf)."""
    promoted = _promoted(a, b)
    if not promoted.is_floating_point:
        raise _not_implemented("logaddexp", promoted)
    from tensorlib.ops.float_checks import isfinite     # it builds on this module
    hi = binary("maximum", a, b, SAME)
    lo = binary("minimum", a, b, SAME)
    finite = isfinite(hi)
    hi0, lo0 = where(finite, hi, 0.0), where(finite, lo, 0.0)
    rest = unary("log1p", unary("exp", binary("sub", lo0, hi0, SAME), SAME), SAME)
    return where(finite, binary("add", hi0, rest, SAME), hi)


# ---- activations and special functions ------------------------------------------------------
@_differentiable("sigmoid")
def sigmoid(x):
    """1 / (1 + exp(-x)) written with exp(-|x|) so it never overflows."""
    x = _floating(x)
    kernel = optional_kernel(x._device, "sigmoid")     # a backend's fused sigmoid, if any
    if kernel is not None:
        out = _empty(x._sizes, x._dtype, x._device)
        if kernel(out, x):
            return out
    if x._dtype.category == 3:          # no |x| trick for complex values
        return binary("div", 1.0, binary("add", unary("exp", unary("neg", x, SAME), SAME),
                                         1.0, SAME), SAME)
    e = unary("exp", unary("neg", unary("abs", x, SAME), SAME), SAME)
    r = binary("div", 1.0, binary("add", e, 1.0, SAME), SAME)
    return where(binary("ge", x, 0, TO_BOOL), r, binary("mul", e, r, SAME))


@_differentiable("relu")
def _relu_composite(x):
    return binary("maximum", x, 0, SAME)


def relu(x):
    """max(x, 0), NaN propagating as in torch: the backend's "relu" kernel (out, x), called
    and recorded from Cython (no Python frame of the op wrapper: relu is on every MLP's hot
    path); where it has none or declines, maximum(x, 0) as one "relu" node."""
    if x._dtype is dt.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    out = unary_if_taken("relu", x)
    return out if out is not None else _relu_composite(x)


_ERFC_SWITCH = 2.0
_ERFC_TERMS = 40


@_differentiable("erfc")
def erfc(x):
    """1 - erf(x) below x = 2 (1 in float32 and narrower: little cancellation there) and the
    continued fraction exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))) above,
    40 terms deep: relative error below ~1e-13 in float64, ~1e-6 in float32 (1 - erf alone
    loses all digits for large x)."""
    x = _floating(x)
    switch = _ERFC_SWITCH if x._dtype is dt.float64 else 1.0
    low = binary("sub", 1.0, unary("erf", x, SAME), SAME)
    z = binary("maximum", x, switch, SAME)       # the fraction only where it converges
    t = z
    for k in range(_ERFC_TERMS, 0, -1):
        t = binary("add", z, binary("div", k / 2, t, SAME), SAME)
    lead = unary("exp", unary("neg", binary("mul", z, z, SAME), SAME), SAME)
    high = binary("div", lead, binary("mul", t, _math.sqrt(_math.pi), SAME), SAME)
    return where(binary("lt", x, switch, TO_BOOL), low, high)


def frac(x):
    """x - trunc(x), sign kept (torch.frac)."""
    _require_float("frac", x)
    return binary("sub", x, unary("trunc", x, SAME), SAME)


@_differentiable("hypot")
def hypot(a, b):
    """sqrt(a^2 + b^2) scaled by max(|a|, |b|) so it neither overflows nor underflows; an
    infinite input gives inf even next to NaN (C's hypot)."""
    promoted = _promoted(a, b)
    if not promoted.is_floating_point:
        raise _not_implemented("hypot", promoted)
    aa = unary("abs", a, SAME) if _is_tensor(a) else _pyabs(a)
    ab = unary("abs", b, SAME) if _is_tensor(b) else _pyabs(b)
    hi = binary("maximum", aa, ab, SAME)
    lo = binary("minimum", aa, ab, SAME)
    safe = where(binary("eq", hi, 0, TO_BOOL), 1.0, hi)
    r = binary("div", lo, safe, SAME)
    out = binary("mul", hi, unary("sqrt", binary("add", binary("mul", r, r, SAME), 1.0, SAME),
                                  SAME), SAME)
    inf = binary("logical_or", binary("eq", aa, _math.inf, TO_BOOL),
                 binary("eq", ab, _math.inf, TO_BOOL), LOGICAL)
    return where(inf, _math.inf, out)


def _pyabs(v):
    import builtins
    return builtins.abs(v)


def copysign(a, b):
    """|a| with b's sign, -0.0 counting as negative (NaN's sign bit is not read: NaN counts as
    positive)."""
    if not _is_tensor(a):
        raise TypeError(f"copysign(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(a).__name__}")
    dtype = _promoted(a, b)
    if not dtype.is_floating_point:
        dtype = dt.get_default_dtype()
    mag = unary("abs", a.to(dtype), SAME)
    if not _is_tensor(b):
        return unary("neg", mag, SAME) if _math.copysign(1.0, b) < 0 else mag
    b = b.to(dtype)
    negative_ = binary("logical_or", binary("lt", b, 0, TO_BOOL),
                       binary("logical_and", binary("eq", b, 0, TO_BOOL),
                              binary("lt", binary("div", 1.0, b, SAME), 0, TO_BOOL),
                              LOGICAL), LOGICAL)
    return where(negative_, unary("neg", mag, SAME), mag)


# ---- aliases ---------------------------------------------------------------------------------
def true_divide(a, b):
    return div(a, b)


def negative(x):
    return neg(x)


def positive(x):
    if x._dtype is dt.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return x


absolute = abs
multiply = mul
subtract = sub
divide = div
fix = trunc


def sgn(x):
    """sign(x) for real tensors; x / |x| (0 at 0) for complex ones."""
    if not x._dtype.is_complex:
        return sign(x)
    modulus = abs(x)
    return where(binary("eq", modulus, 0, TO_BOOL), 0, x / where(modulus == 0, 1, modulus))


# ---- in-place variants -----------------------------------------------------------------------
def _add_(self, other, *, alpha=1):
    if type(other) in _SPARSE_TYPES:          # a sparse self has its own add_
        return other._sparse_add(self, other, alpha, True)
    return binary_("add", self, other if type(alpha) is int and alpha == 1 else _scaled(self, other, alpha), SAME)


def _sub_(self, other, *, alpha=1):
    _check_bool_sub(self, other)
    if type(other) in _SPARSE_TYPES:
        return other._sparse_add(self, other, -alpha, True)
    return binary_("sub", self, other if type(alpha) is int and alpha == 1 else _scaled(self, other, alpha), SAME)


def _div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return binary_("div", self, other, TO_FLOAT)
    return inplace_composite(div)(self, other, rounding_mode=rounding_mode)


def _float_power_(self, exponent):
    """In place, float_power's float64 result must be self's dtype."""
    if self._dtype is not dt.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{self._dtype.scalar_name} but the operation's result requires "
                           f"dtype Double")
    return inplace_composite(float_power)(self, exponent)


def _neg_(self):
    if self._dtype is dt.bool_:
        neg(self)                                   # raises torch's message
    return unary_("neg", self, SAME)


_FLOAT_UNARY = ("exp", "expm1", "log", "log1p", "sqrt", "sin", "cos", "tan", "asin", "acos",
                "atan", "sinh", "cosh", "tanh", "erf")
_SAME_UNARY = ("abs", "floor", "ceil", "round", "trunc")
_BINARY_INPLACE = {"mul": SAME, "pow": SAME, "remainder": SAME, "fmod": SAME,
                   "floor_divide": SAME, "atan2": TO_FLOAT, "maximum": SAME, "minimum": SAME,
                   "bitwise_and": SAME, "bitwise_or": SAME, "bitwise_xor": SAME,
                   "logical_and": LOGICAL, "logical_or": LOGICAL, "logical_xor": LOGICAL,
                   "eq": TO_BOOL, "ne": TO_BOOL, "lt": TO_BOOL, "le": TO_BOOL, "gt": TO_BOOL,
                   "ge": TO_BOOL}
_COMPOSITE_INPLACE = ("exp2", "log2", "log10", "rsqrt", "reciprocal", "square", "sigmoid",
                      "relu", "erfc", "frac", "hypot", "copysign", "float_power",
                      "true_divide", "negative", "absolute", "logical_not", "sign", "sgn")
_METHODS = ("add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod",
            "pow", "float_power", "maximum", "minimum", "atan2", "hypot", "logaddexp",
            "copysign", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
            "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
            "bitwise_not", "neg", "negative", "positive", "abs", "absolute", "exp", "exp2",
            "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "square", "reciprocal",
            "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "erf", "erfc",
            "sigmoid", "relu", "frac", "floor", "ceil", "round", "trunc", "sign", "isnan",
            "where", "sgn")


def _tensor_methods():
    g = globals()
    methods = {name: g[name] for name in _METHODS}
    methods.update({f"{op}_": inplace_unary(op, TO_FLOAT) for op in _FLOAT_UNARY})
    methods.update({f"{op}_": inplace_unary(op, SAME) for op in _SAME_UNARY})
    methods.update({f"{op}_": inplace(op, kind) for op, kind in _BINARY_INPLACE.items()})
    methods.update({f"{name}_": inplace_composite(g[name]) for name in _COMPOSITE_INPLACE})
    methods.update(where=_where_method, add_=_add_, sub_=_sub_, div_=_div_, neg_=_neg_, negative_=_neg_,
                   multiply=mul, multiply_=methods["mul_"], subtract=sub, divide=div,
                   divide_=_div_, arctan2=atan2, greater=gt, less=lt, greater_equal=ge,
                   less_equal=le, not_equal=ne, arccos=acos, arcsin=asin, arctan=atan,
                   fix=trunc, fix_=methods["trunc_"], subtract_=_sub_,
                   true_divide_=_div_, float_power_=_float_power_)
    return methods


TENSOR_METHODS = _tensor_methods()

_PRIVATE = {"binary", "binary_", "unary", "unary_", "inplace", "inplace_unary",
            "inplace_composite"}
__all__ = sorted(name for name, value in list(globals().items())
                 if not name.startswith("_") and callable(value) and name not in _PRIVATE
                 and getattr(value, "__module__", None) == __name__)
