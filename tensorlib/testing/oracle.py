"""The numpy float64 meaning of every primitive, and inputs that keep each one well defined.

The conformance suite compares a backend's kernels against these; they are written from the
documented semantics (PyTorch's), not from any backend's code, so the CPU backend is tested
by them like any other."""
import math

import numpy as np

F32, F64, I32, I64, BOOL = (np.dtype(t) for t in ("float32", "float64", "int32", "int64", "bool"))
INTS = (I32, I64)

_erf = np.vectorize(math.erf, otypes=[np.float64])

# op: (float64 oracle, (low, high) of float inputs, integer-and-bool dtypes it also takes)
UNARY = {
    "abs": (np.abs, (-5, 5), INTS), "neg": (np.negative, (-5, 5), INTS),
    "exp": (np.exp, (-5, 5), ()), "expm1": (np.expm1, (-3, 3), ()),
    "log": (np.log, (0.05, 10), ()), "log1p": (np.log1p, (-0.9, 5), ()),
    "sqrt": (np.sqrt, (0, 10), ()), "sin": (np.sin, (-6, 6), ()), "cos": (np.cos, (-6, 6), ()),
    "tan": (np.tan, (-1.3, 1.3), ()), "asin": (np.arcsin, (-0.99, 0.99), ()),
    "acos": (np.arccos, (-0.99, 0.99), ()), "atan": (np.arctan, (-5, 5), ()),
    "sinh": (np.sinh, (-4, 4), ()), "cosh": (np.cosh, (-4, 4), ()),
    "tanh": (np.tanh, (-4, 4), ()), "erf": (_erf, (-3, 3), ()),
    "floor": (np.floor, (-4, 4), INTS), "ceil": (np.ceil, (-4, 4), INTS),
    "round": (np.round, (-4, 4), INTS),            # half to even, as torch.round
    "trunc": (np.trunc, (-4, 4), INTS), "sign": (np.sign, (-2, 2), INTS),
    "isnan": (np.isnan, (-2, 2), ()),              # writes bool
    "logical_not": (np.logical_not, None, (BOOL,)),  # bool in, bool out
    "bitwise_not": (np.invert, None, INTS + (BOOL,)),
}

COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
               "gt": np.greater, "ge": np.greater_equal}
# op: (oracle, dtypes)
BINARY = {
    "add": (np.add, (F32,) + INTS), "sub": (np.subtract, (F32,) + INTS),
    "mul": (np.multiply, (F32,) + INTS), "div": (np.true_divide, (F32,)),
    "pow": (np.power, (F32,) + INTS), "maximum": (np.maximum, (F32,) + INTS),
    "minimum": (np.minimum, (F32,) + INTS), "remainder": (np.remainder, (F32,) + INTS),
    "fmod": (np.fmod, (F32,) + INTS), "floor_divide": (np.floor_divide, (F32,) + INTS),
    "atan2": (np.arctan2, (F32,)),
    "logical_and": (np.logical_and, (BOOL,)), "logical_or": (np.logical_or, (BOOL,)),
    "logical_xor": (np.logical_xor, (BOOL,)),
    "bitwise_and": (np.bitwise_and, INTS + (BOOL,)), "bitwise_or": (np.bitwise_or, INTS + (BOOL,)),
    "bitwise_xor": (np.bitwise_xor, INTS + (BOOL,)),
}
BINARY.update({op: (fn, (F32,) + INTS + (BOOL,)) for op, fn in COMPARISONS.items()})
BOOL_OUT = set(COMPARISONS) | {"logical_and", "logical_or", "logical_xor", "isnan"}

REDUCTIONS = {"sum": np.sum, "prod": np.prod, "amax": np.max, "amin": np.min}
ARG_REDUCTIONS = {"argmax": np.argmax, "argmin": np.argmin}   # numpy also picks the first
SCANS = {"cumsum": np.cumsum, "cumprod": np.cumprod}


def out_dtype(op, dtype):
    return BOOL if op in BOOL_OUT else dtype


def rng(salt=0):
    return np.random.default_rng(1234 + salt)


def values(r, shape, dtype, low=-5, high=5):
    """Random values of `dtype`; integers span [low, high] (at least -20..20)."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return r.random(shape) < 0.5
    if dtype.kind in "iu":
        return r.integers(min(low, -20), max(high, 20) + 1, shape).astype(dtype)
    return r.uniform(low, high, shape).astype(dtype)


def unary_input(op, r, shape, dtype):
    fn, domain, _ = UNARY[op]
    if dtype.kind != "f":
        return values(r, shape, dtype)
    x = values(r, shape, dtype, *domain)
    flat = x.reshape(-1)
    if op == "round":
        flat[:6] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5]   # ties go to even
    elif op == "sign":
        flat[:2] = [0.0, -0.0]
    elif op == "isnan":
        flat[::3] = np.nan
    return x


def binary_inputs(op, r, shape, dtype):
    """(a, b) where op is defined and not near a discontinuity."""
    if op in COMPARISONS and dtype.kind == "f":      # ties must occur: half-integers
        return tuple((r.integers(-3, 4, shape) / 2).astype(dtype) for _ in "ab")
    if op == "pow":
        if dtype.kind == "f":
            return values(r, shape, dtype, 0.5, 3), values(r, shape, dtype, -2, 2)
        return r.integers(-4, 5, shape).astype(dtype), r.integers(0, 6, shape).astype(dtype)
    if op in ("div", "remainder", "fmod", "floor_divide"):
        b = r.uniform(0.5, 4, shape) * r.choice([-1, 1], shape)
        if dtype.kind != "f":
            return r.integers(-50, 51, shape).astype(dtype), np.ceil(b).astype(dtype)
        quotient = r.integers(-5, 6, shape) + r.uniform(0.1, 0.9, shape)   # a/b away from ints
        return (b * quotient).astype(dtype), b.astype(dtype)
    a, b = values(r, shape, dtype), values(r, shape, dtype)
    if op in ("maximum", "minimum") and dtype.kind == "f":
        a.reshape(-1)[1::7] = np.nan                  # NaN propagates, as in torch
    return a, b


def reduction_input(op, r, shape, dtype):
    if op == "prod":
        if dtype.kind == "f":
            return values(r, shape, dtype, 0.5, 1.5)
        return r.choice([-2, -1, 1, 2], shape).astype(dtype)
    if op in ARG_REDUCTIONS or op in ("amax", "amin") and dtype.kind != "f":
        return r.integers(-3, 4, shape).astype(dtype)  # ties: the first index wins
    return values(r, shape, dtype)


def scan_input(op, r, shape, dtype):
    if op == "cumprod":
        if dtype.kind == "f":
            return values(r, shape, dtype, 0.8, 1.25)
        return r.choice([-2, -1, 1, 2], shape).astype(dtype)
    return values(r, shape, dtype)


def stable_sort(x, dim, descending):
    """(values, indices): ties keep their original order, also when descending (torch)."""
    order = np.argsort(-x if descending else x, axis=dim, kind="stable")
    return np.take_along_axis(x, order, dim), order


def gather(x, dim, index):
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return x[tuple(grid)]


def scatter_add(out, dim, index, src):
    out = out.astype(np.float64 if out.dtype.kind == "f" else out.dtype)
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    np.add.at(out, tuple(grid), src[tuple(slice(0, n) for n in index.shape)])
    return out


def cast(src, dtype):
    """copy's conversion: float -> int truncates toward zero, anything -> bool is != 0."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return src != 0
    if dtype.kind in "iu" and src.dtype.kind == "f":
        return np.trunc(src).astype(dtype)
    return src.astype(dtype)


def reduce(op, x, dims):
    wide = x.astype(np.float64) if x.dtype.kind == "f" else x
    return REDUCTIONS[op](wide, axis=tuple(dims), keepdims=True)


def matmul(a, b):
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


