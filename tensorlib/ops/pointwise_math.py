"""More elementwise math with torch's names: the inverse hyperbolic functions (and their
arc* aliases and in-place forms), gcd/lcm, frexp/ldexp, nextafter, heaviside, isin, signbit,
fmax/fmin, deg2rad/rad2deg.
Composites of the primitives, so they run on every backend; the inverse hyperbolics have
their own derivatives (autograd/formulas/pointwise_math.py), the others are differentiable
through their parts where torch's are."""
import math
from collections import namedtuple

import tensorlib._C.dtypes as dt
from tensorlib._C.pointwise import LOGICAL, SAME, TO_BOOL, binary
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.ops._opdef import differentiable
from tensorlib.ops.float_checks import isfinite
from tensorlib.ops._inplace import inplace_composite
from tensorlib.ops._inplace import not_implemented as _not_implemented
from tensorlib.ops.pointwise import _bool_full, _floating, _is_tensor, _promoted, isnan, where

__all__ = ["acosh", "asinh", "atanh", "arccosh", "arcsinh", "arctanh", "acosh_", "asinh_",
           "atanh_", "arccosh_", "arcsinh_", "arctanh_", "gcd", "lcm", "gcd_", "lcm_",
           "frexp", "ldexp", "ldexp_", "nextafter", "heaviside", "isin", "logit_",
           "logaddexp2", "isreal", "dist", "signbit", "fmax", "fmin", "deg2rad", "rad2deg"]

frexp_result = namedtuple("frexp", ["mantissa", "exponent"])
_LN2 = math.log(2.0)
_BIG = 2.0 ** 28        # beyond it x^2 + 1 == x^2: asinh(x) = log(2|x|), acosh(x) = log(2x)


def _tensor_arg(x, name):
    if not isinstance(x, TensorImpl):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


# ---- inverse hyperbolic functions -----------------------------------------------------------
@differentiable("asinh")
def asinh(input):  # noqa: A002
    """sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))): accurate near 0 and for large |x|
    (log(2|x|) past 2^28, where x^2 would lose the 1 or overflow)."""
    x = _floating(_tensor_arg(input, "asinh"))
    if x._dtype.is_complex:
        return (x + (x * x + 1).sqrt()).log()
    a = x.abs()
    small = where(a > _BIG, 1.0, a)
    near = (small + small * small / (1 + (small * small + 1).sqrt())).log1p()
    return where(a > _BIG, a.log() + _LN2, near) * x.sign()


@differentiable("acosh")
def acosh(input):  # noqa: A002
    """log1p((x - 1) + sqrt((x - 1)(x + 1))): accurate near 1; log(2x) past 2^28; nan
    below 1."""
    x = _floating(_tensor_arg(input, "acosh"))
    if x._dtype.is_complex:
        return (x + (x + 1).sqrt() * (x - 1).sqrt()).log()
    small = where(x > _BIG, 2.0, x)
    t = small - 1
    near = (t + (t * (small + 1)).sqrt()).log1p()
    return where(x > _BIG, x.log() + _LN2, where(x < 1, math.nan, near))


@differentiable("atanh")
def atanh(input):  # noqa: A002
    """log1p(2x / (1 - x)) / 2 (odd-symmetric form: accurate near 0); +-inf at +-1, nan
    beyond."""
    x = _floating(_tensor_arg(input, "atanh"))
    if x._dtype.is_complex:
        return 0.5 * ((x).log1p() - (-x).log1p())
    a = x.abs()
    return 0.5 * (2 * a / (1 - a)).log1p() * x.sign()


arcsinh, arccosh, arctanh = asinh, acosh, atanh
asinh_ = arcsinh_ = inplace_composite(asinh)
acosh_ = arccosh_ = inplace_composite(acosh)
atanh_ = arctanh_ = inplace_composite(atanh)


# ---- gcd, lcm --------------------------------------------------------------------------------
def _check_integral(name, dtype):
    """The promoted dtype must be an integer one (torch has no float or bool kernel)."""
    if dtype.category >= 2 or dtype is dt.bool_:
        raise _not_implemented(name, dtype)


def gcd(input, other):  # noqa: A002
    """The greatest common divisor, elementwise (non-negative; gcd(0, 0) = 0), by Euclid's
    algorithm on the whole tensor: one remainder per step until every pair is done."""
    _tensor_arg(input, "gcd")
    dtype = _promoted(input, other)
    _check_integral("gcd", dtype)
    import tensorlib
    a, b = tensorlib.broadcast_tensors(input.to(dtype).abs(), tensorlib.as_tensor(other).to(
        input.device, dtype).abs())
    while bool((b != 0).any()):
        nonzero = b != 0
        rest = tensorlib.remainder(a, where(nonzero, b, 1))
        a, b = where(nonzero, b, a), where(nonzero, rest, 0)
    return a


def lcm(input, other):  # noqa: A002
    """|a / gcd(a, b) * b| (0 when either is 0), elementwise."""
    import tensorlib
    g = gcd(input, other)
    other = tensorlib.as_tensor(other).to(input.device)
    quotient = tensorlib.div(input.to(g.dtype), where(g == 0, 1, g), rounding_mode="trunc")
    return where(g == 0, 0, (quotient * other.to(g.dtype)).abs()).to(g.dtype)


gcd_ = inplace_composite(gcd)
lcm_ = inplace_composite(lcm)


# ---- frexp, ldexp, nextafter ---------------------------------------------------------------
def _exponent(x):
    """e with |x| = m 2^e, 0.5 <= m < 1 (0 for 0, inf and nan): log2 estimated, then
    corrected by one step either way (log2 can round across a power of two)."""
    finite = isfinite(x) & (x != 0)
    a = where(finite, x.abs(), 1.0)
    e = (a.log() / _LN2).floor() + 1
    m = _scale(a, -e)
    e = where(m >= 1, e + 1, where(m < 0.5, e - 1, e))
    return where(finite, e, 0.0)


def _scale(x, e):
    """x * 2^e in two halves, so that neither factor overflows or flushes to zero
    (subnormal x, or e near the exponent range's ends)."""
    half = (e / 2).trunc()
    return x * (2.0 ** half) * (2.0 ** (e - half))


def frexp(input):  # noqa: A002
    """(mantissa, exponent) with input = mantissa * 2^exponent, 0.5 <= |mantissa| < 1
    (exponent int32); the mantissa's gradient is 1 / 2^exponent, as torch's."""
    x = _tensor_arg(input, "frexp")
    if not x._dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    e = _exponent(x.detach())
    return frexp_result(_scale(x, -e), e.to(dt.int32))


def ldexp(input, other):  # noqa: A002
    """input * 2^other, as torch's (its promotion: integers give the default float)."""
    import tensorlib
    if isinstance(other, TensorImpl) and other._dtype is dt.bool_ and \
            isinstance(input, TensorImpl) and input._dtype.is_floating_point:
        # torch's floating path takes integer exponents only
        raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")
    return _tensor_arg(input, "ldexp") * tensorlib.pow(2.0, other)


ldexp_ = inplace_composite(ldexp)


_FLOAT_LAYOUT = {"float64": (53, -1074, 1.7976931348623157e308),
                 "float32": (24, -149, 3.4028234663852886e38),
                 "float16": (11, -24, 65504.0), "bfloat16": (8, -133, 3.3895313892515355e38)}


def nextafter(input, other):  # noqa: A002
    """The next representable value after input towards other (C's nextafter), from the
    exponent: the spacing above |x| is 2^(e - p), below a power of two half of it; the
    smallest subnormal from 0. Its gradient is 1 for input and 0 for other, as torch's."""
    _tensor_arg(input, "nextafter")
    if not isinstance(other, TensorImpl):
        raise TypeError(f"nextafter(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    common = _promoted(input, other)
    input, other = input.to(common), other.to(common)
    layout = _FLOAT_LAYOUT.get(input._dtype.name)
    if layout is None:
        raise _not_implemented("nextafter", input._dtype)
    digits, tiniest, largest = layout
    x, y = input.detach(), other.detach()
    if common.itemsize == 2:        # the 16-bit layouts' steps, taken exactly in float32
        x, y = x.to(dt.float32), y.to(dt.float32)
    e = _exponent(x)
    spacing = (2.0 ** (e - digits)).clamp(min=2.0 ** tiniest)
    a = x.abs()
    at_power = a == _scale(0.5 + 0 * a, e)
    away = (y > x) == (x > 0)                      # moving to a larger magnitude
    step = where(away | ~at_power, spacing, (spacing / 2).clamp(min=2.0 ** tiniest))
    moved = where(away, a + step, a - step) * x.sign()
    tiny = x.new_full((), 2.0 ** tiniest)
    moved = where(x == 0, where(y > x, tiny, -tiny), moved)
    moved = where(x.isinf(), x.sign() * largest, moved)
    result = where((x == y) | isnan(x) | isnan(y), where(isnan(x), x, y), moved)
    result = result.to(common)
    return where(isfinite(input), result + (input - input.detach()), result)  # d/dinput = 1


# ---- heaviside, isin -------------------------------------------------------------------------
def heaviside(input, values):  # noqa: A002
    """0 where input < 0, values where input == 0, 1 where input > 0 (one dtype, as torch's;
    torch has no derivative for it: the result does not require grad)."""
    _tensor_arg(input, "heaviside")
    if not isinstance(values, TensorImpl) or values._dtype is not input._dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different "
                           "dtypes.")
    if input._dtype.is_complex:
        raise _not_implemented("heaviside", input._dtype)
    x, v = input.detach(), values.detach()
    return where(x == 0, v, (x > 0).to(x._dtype)).to(x._dtype)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of `elements` is in `test_elements` (either may be a number):
    the sorted test elements are searched, O((n + m) log m)."""
    import tensorlib
    if not isinstance(elements, TensorImpl) and not isinstance(test_elements, TensorImpl):
        raise TypeError("isin() received an invalid combination of arguments: at least one "
                        "of elements and test_elements must be a Tensor")
    device = (elements if isinstance(elements, TensorImpl) else test_elements).device
    x = tensorlib.as_tensor(elements, device=device)
    test = tensorlib.as_tensor(test_elements, device=device).reshape(-1)
    common = _promoted(x, test)
    if common is dt.bool_ or common.is_complex:
        raise RuntimeError(f"Unsupported input type encountered for isin(): "
                           f"{common.scalar_name}")
    x, test = x.to(common), test.to(common)
    if test.numel() == 0:
        found = tensorlib.zeros(x.shape, dtype=tensorlib.bool, device=device)
    else:
        ordered = test.sort().values
        position = tensorlib.searchsorted(ordered, x.reshape(-1)).clamp(max=test.numel() - 1)
        found = (ordered[position] == x.reshape(-1)).reshape(x.shape)
    return ~found if invert else found


def logit_(self, eps=None):
    from tensorlib.ops.special import logit
    return inplace_composite(logit)(self, eps)


def logaddexp2(input, other):  # noqa: A002
    """log2(2**a + 2**b): logaddexp on the values scaled by ln 2 (its overflow and infinity
    handling and its derivative), scaled back."""
    from tensorlib.ops.pointwise import logaddexp
    promoted = _promoted(input, other)
    if not promoted.is_floating_point:
        raise _not_implemented("logaddexp2", promoted)
    return logaddexp(input * _LN2, other * _LN2) / _LN2


def isreal(input):  # noqa: A002
    """True where the imaginary part is zero; every element of a real tensor."""
    if not isinstance(input, TensorImpl):
        raise TypeError(f"isreal(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input._dtype.is_complex:
        return input.imag == 0
    from tensorlib.ops.creation import ones_like
    return ones_like(input, dtype=dt.bool_)


def dist(input, other, p=2):  # noqa: A002
    """The p-norm of input - other (broadcast), over all elements."""
    from tensorlib.ops.linalg import vector_norm
    if not isinstance(input, TensorImpl) or not isinstance(other, TensorImpl):
        raise TypeError("dist(): argument 'input' and 'other' must be Tensor")
    return vector_norm(input - other, p)


_SAME_SIZE_INT = {2: dt.int16, 4: dt.int32, 8: dt.int64}


def signbit(x):
    """True where the sign bit is set: negative numbers, -0.0 and NaNs with the bit set (the
    float's bits read as a signed integer of its size)."""
    if x._dtype is dt.bool_ or not (x._dtype.is_floating_point or x._dtype.is_signed):
        return _bool_full(x, False)
    if not x._dtype.is_floating_point:
        return binary("lt", x, 0, TO_BOOL)
    from tensorlib.ops.shape import view_dtype
    bits = view_dtype(x, _SAME_SIZE_INT[x._dtype.itemsize])
    return binary("lt", bits, 0, TO_BOOL)


def _check_tensor_pair(name, a, b):
    for arg, position in ((a, 1), (b, 2)):
        if not _is_tensor(arg):
            raise TypeError(f"{name}(): argument '{'input' if position == 1 else 'other'}' "
                            f"(position {position}) must be Tensor, not {type(arg).__name__}")
    if a._dtype.is_complex or b._dtype.is_complex:
        raise RuntimeError(f"{name} not implemented for complex tensors.")


def fmax(a, b):
    """Elementwise maximum that ignores a NaN (NaN only where both are): a where a >= b or b
    is NaN, else b, so the gradient goes wholly to the one chosen (ties to a), as torch's."""
    _check_tensor_pair("fmax", a, b)
    pick = binary("logical_or", binary("ge", a, b, TO_BOOL), isnan(b), LOGICAL)
    return where(pick, a, b)


def fmin(a, b):
    """Elementwise minimum that ignores a NaN (see fmax)."""
    _check_tensor_pair("fmin", a, b)
    pick = binary("logical_or", binary("le", a, b, TO_BOOL), isnan(b), LOGICAL)
    return where(pick, a, b)


def deg2rad(x):
    """x * pi / 180, integers and bool going to the default float."""
    if x._dtype.is_complex:
        raise RuntimeError("deg2rad is not supported for complex tensors.")
    return binary("mul", _floating(x), math.pi / 180.0, SAME)


def rad2deg(x):
    """x * 180 / pi, integers and bool going to the default float."""
    if x._dtype.is_complex:
        raise RuntimeError("rad2deg is not supported for complex tensors.")
    return binary("mul", _floating(x), 180.0 / math.pi, SAME)



TENSOR_METHODS = {"logaddexp2": logaddexp2, "isreal": isreal, "dist": dist, "acosh": acosh, "asinh": asinh, "atanh": atanh, "arccosh": arccosh,
                  "arcsinh": arcsinh, "arctanh": arctanh, "acosh_": acosh_, "asinh_": asinh_,
                  "atanh_": atanh_, "arccosh_": arccosh_, "arcsinh_": arcsinh_,
                  "arctanh_": arctanh_, "gcd": gcd, "lcm": lcm, "gcd_": gcd_, "lcm_": lcm_,
                  "frexp": frexp, "ldexp": ldexp, "ldexp_": ldexp_, "nextafter": nextafter,
                  "nextafter_": inplace_composite(nextafter), "heaviside": heaviside,
                  "heaviside_": inplace_composite(heaviside), "logit_": logit_}
TENSOR_METHODS.update({name: globals()[name] for name in ("signbit", "fmax", "fmin", "deg2rad",
                                                          "rad2deg")})
TENSOR_METHODS.update({f"{name}_": inplace_composite(globals()[name])
                       for name in ("fmax", "fmin", "deg2rad", "rad2deg")})
