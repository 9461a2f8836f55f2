"""Elementwise ops. The eager path is `_C.pointwise` (promotion, broadcasting, allocation,
dispatch in Cython); this module names the ops and adds the PyTorch-specific checks."""
import tensorlib._C.dtypes as dt
from tensorlib._C.pointwise import SAME, TO_BOOL, TO_FLOAT, LOGICAL, binary, binary_, unary

def add(a, b, *, alpha=1):
    if alpha != 1:
        b = binary("mul", b, alpha, SAME)
    return binary("add", a, b, SAME)


def sub(a, b, *, alpha=1):
    if getattr(a, "_dtype", None) is dt.bool_ and getattr(b, "_dtype", None) is dt.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if alpha != 1:
        b = binary("mul", b, alpha, SAME)
    return binary("sub", a, b, SAME)


def rsub(a, b, *, alpha=1):
    return sub(b, a, alpha=alpha)


def mul(a, b):
    return binary("mul", a, b, SAME)


def div(a, b, *, rounding_mode=None):
    if rounding_mode is None:
        return binary("div", a, b, TO_FLOAT)
    if rounding_mode == "floor":
        return binary("floor_divide", a, b, SAME)
    if rounding_mode == "trunc":
        q = binary("div", a, b, TO_FLOAT)
        out = unary("trunc", q, SAME)
        promoted = _pw_result_dtype(a, b)
        return out if promoted is out._dtype else out.to(promoted)
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     f"found '{rounding_mode}'")


def _pw_result_dtype(a, b):
    from tensorlib._C.promotion import result_type
    return result_type((a, b))


def floor_divide(a, b):
    return binary("floor_divide", a, b, SAME)


def remainder(a, b):
    return binary("remainder", a, b, SAME)


def fmod(a, b):
    return binary("fmod", a, b, SAME)


def pow(a, b):  # noqa: A001 - torch's name
    return binary("pow", a, b, SAME)


def maximum(a, b):
    return binary("maximum", a, b, SAME)


def minimum(a, b):
    return binary("minimum", a, b, SAME)


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
        for x in (a, b):
            if getattr(x, "_dtype", dt.int64).is_floating_point or isinstance(x, float):
                raise RuntimeError(f"\"{op}_cpu\" not implemented for 'Float'"
                                   .replace("_cpu", ""))
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
        raise RuntimeError("bitwise_not is only supported for integer and boolean tensors")
    return unary("bitwise_not", x, SAME)


def _float_unary(op):
    def fn(x):
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
abs = _same_unary("abs")  # noqa: A001
floor = _same_unary("floor")
ceil = _same_unary("ceil")
round = _same_unary("round")  # noqa: A001
trunc = _same_unary("trunc")
sign = _same_unary("sign")


def logical_not(x):
    return unary("logical_not", x, LOGICAL)


def isnan(x):
    return unary("isnan", x, TO_BOOL)


def inplace(op, kind=SAME):
    """`x.op_(other)`: op written into x (same version-counter bump as every in-place op)."""
    def fn(self, other):
        return binary_(op, self, other, kind)
    fn.__name__ = op + "_"
    return fn


__all__ = [name for name in dir() if not name.startswith("_")
           and name not in ("binary", "binary_", "unary", "inplace", "dt", "SAME", "TO_BOOL",
                            "TO_FLOAT", "LOGICAL")]


def where(condition, input, other):  # noqa: A002 - torch's names
    """input where condition else other, broadcasting all three; input/other may be numbers."""
    from tensorlib.ops._where import where as _where
    return _where(condition, input, other)
