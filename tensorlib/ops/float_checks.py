"""Classifying floats and comparing tensors: isinf/isposinf/isneginf/isfinite, nan_to_num,
isclose/allclose and equal, each a few `_C.pointwise` primitives (eq, abs, logical ops, where)
so every backend runs them; integer and bool inputs answer without a kernel where the answer
is known (never infinite, always finite)."""
import math as _math

import tensorlib._C.dtypes as dt
from tensorlib._C.factory import empty as _empty
from tensorlib._C.grad_mode import is_grad_enabled as _grad_enabled
from tensorlib._C.pointwise import LOGICAL, SAME, TO_BOOL, binary, unary
from tensorlib.ops._composites import optional_kernel
from tensorlib.ops._inplace import inplace_composite
from tensorlib.ops.pointwise import _bool_full, _finfo, isnan, where

__all__ = ["isinf", "isposinf", "isneginf", "isfinite", "nan_to_num", "isclose", "allclose",
           "equal"]


def isinf(x):
    if not x._dtype.is_floating_point:
        return _bool_full(x, False)
    return binary("eq", unary("abs", x, SAME), _math.inf, TO_BOOL)


def isposinf(x):
    if not x._dtype.is_floating_point:
        return _bool_full(x, False)
    return binary("eq", x, _math.inf, TO_BOOL)


def isneginf(x):
    if not x._dtype.is_floating_point:
        return _bool_full(x, False)
    return binary("eq", x, -_math.inf, TO_BOOL)


def isfinite(x):
    """Neither NaN (x != x) nor infinite."""
    if not x._dtype.is_floating_point:
        return _bool_full(x, True)
    return binary("logical_and", binary("eq", x, x, TO_BOOL),
                  binary("ne", unary("abs", x, SAME), _math.inf, TO_BOOL), LOGICAL)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """NaN -> nan, +inf -> posinf (default: the dtype's largest), -inf -> neginf (its
    lowest). Integer tensors come back as a copy."""
    if not x._dtype.is_floating_point:
        return x.clone()
    info = _finfo(x._dtype)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    kernel = optional_kernel(x._device, "nan_to_num")           # one pass, not six
    if kernel is not None and not (x._requires_grad and _grad_enabled()):
        out = _empty(x._sizes, x._dtype, x._device)
        if kernel(out, x, nan, posinf, neginf):
            return out
    out = where(isnan(x), nan, x)
    out = where(binary("eq", x, _math.inf, TO_BOOL), posinf, out)
    return where(binary("eq", x, -_math.inf, TO_BOOL), neginf, out)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol * |b| (finite differences only), or a == b, or both NaN when
    equal_nan."""
    if a._dtype is not b._dtype:
        raise RuntimeError(f"{a._dtype.scalar_name} did not match {b._dtype.scalar_name}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = binary("eq", a, b, TO_BOOL)
    if equal_nan and a._dtype.is_floating_point:
        close = binary("logical_or", close, binary("logical_and", isnan(a), isnan(b), LOGICAL),
                       LOGICAL)
    if not a._dtype.is_floating_point:
        a, b = a.to(dt.float64), b.to(dt.float64)
    both = binary("logical_and", isfinite(a), isfinite(b), LOGICAL)
    a, b = where(both, a, 0), where(both, b, 0)         # no inf - inf in the error
    error = unary("abs", binary("sub", a, b, SAME), SAME)
    allowed = binary("add", binary("mul", unary("abs", b, SAME), rtol, SAME), atol, SAME)
    within = binary("logical_and", both, binary("le", error, allowed, TO_BOOL), LOGICAL)
    return binary("logical_or", close, within, LOGICAL)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(a, b, rtol, atol, equal_nan).all())


def equal(a, b):
    """True when a and b have the same shape and equal elements (NaN is never equal)."""
    if a._sizes != b._sizes:
        return False
    return bool(binary("eq", a, b, TO_BOOL).all())


TENSOR_METHODS = {name: globals()[name] for name in __all__}
TENSOR_METHODS["nan_to_num_"] = inplace_composite(nan_to_num)
