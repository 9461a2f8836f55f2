"""`out=`: the one place it is implemented. `install` wraps the public functions
(`tensorlib.<name>`) that take `out=` in PyTorch; the wrapper calls the op unchanged when out is
None (one extra Python call, nothing else), and otherwise computes the op, then checks, resizes
and writes `out` with PyTorch's rules:

- an `out` whose shape differs is resized (contiguous strides, its storage kept when large
  enough); a UserWarning is given when it had elements, as PyTorch's `resize_output`;
- dtypes: elementwise ops and most reductions cast their result into out when
  `can_cast(result, out.dtype)` (else RuntimeError "result type Float can't be cast to the
  desired output type Long"); sum/prod/cumsum compute in out's dtype; factories take out's
  dtype and device; linear algebra, indexing, sorting, amax/amin and the like need out's
  dtype to be the result's (indices: int64);
- out on another device than the result raises RuntimeError;
- with grad mode on, out= with any argument (out included) that requires grad raises
  RuntimeError, as PyTorch's functions with out= are not differentiable;
- `out` itself (or the tuple of outs, in the op's result type) is returned.

Tensor methods take no `out=` (as in PyTorch): only the namespace functions are wrapped.
"""
import functools
import inspect
import warnings

import tensorlib._C.dtypes as dt
from tensorlib.ops._composites import optional_kernel
from tensorlib._C.factory import empty
from tensorlib._C.grad_mode import is_grad_enabled, set_grad_enabled
from tensorlib._C.pointwise import SAME, TO_FLOAT, binary_into, unary_into
from tensorlib._C.tensor_impl import TensorImpl, contiguous_strides, numel
from tensorlib.ops import _autocast

# how each op's result meets out's dtype (sorted out against torch by tests/parity)
CAST, OUT_DTYPE, EXACT, FACTORY = "cast", "out_dtype", "exact", "factory"
# fft results: out must be complex (c2c, r2c) or real floating (c2r) of any width, and is cast;
# 1-D ihfft alone needs the exact dtype
COMPLEX_OUT, REAL_OUT, COMPLEX_EXACT = "complex_out", "real_out", "complex_exact"

_RULES = {
    CAST: (
        "acos", "arccos", "asin", "arcsin", "atan", "arctan", "atan2", "arctan2", "add", "sub",
        "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide",
        "remainder", "fmod", "pow", "float_power", "maximum", "minimum", "fmax", "fmin",
        "bitwise_and", "bitwise_or", "bitwise_xor", "eq", "ne", "lt", "le", "gt", "ge",
        "greater", "less", "greater_equal", "less_equal", "not_equal", "logical_and",
        "logical_or", "logical_xor", "logical_not", "exp", "exp2", "expm1", "log", "log2",
        "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "erf",
        "erfc", "erfinv", "reciprocal", "square", "sigmoid", "copysign", "hypot", "logaddexp",
        "addcmul", "addcdiv", "xlogy", "deg2rad", "rad2deg", "angle", "logit", "i0", "sinc",
        "lgamma", "digamma", "mean", "nanmean", "std", "var", "logsumexp", "all", "any", "cat",
        "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack",
        "row_stack", "outer", "ger", "acosh", "asinh", "atanh", "arccosh", "arcsinh",
        "arctanh", "ldexp", "nextafter", "heaviside", "gcd", "lcm",
    ),
    OUT_DTYPE: ("sum", "nansum", "prod", "cumsum", "cumprod"),
    EXACT: (
        "amax", "amin", "max", "min", "aminmax", "median", "nanmedian", "kthvalue", "mode",
        "sort", "msort", "topk", "cummax", "cummin", "argmax", "argmin", "mm", "bmm", "matmul",
        "addmm", "baddbmm", "addbmm", "addmv", "addr", "mv", "dot", "vdot", "inner", "kron",
        "tensordot", "matrix_power", "gather", "index_select", "take", "take_along_dim",
        "masked_select", "scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy",
        "multinomial",
        "nonzero", "searchsorted", "bucketize", "where", "clamp", "clip", "clamp_min",
        "clamp_max", "abs", "absolute", "bitwise_not", "neg", "negative", "floor", "ceil",
        "round", "trunc", "fix", "frac", "sign", "sgn", "signbit", "lerp", "nan_to_num",
        "isposinf", "isneginf", "norm", "softmax", "log_softmax", "logcumsumexp", "diag",
        "polar", "complex", "tril", "triu", "diff", "quantile", "nanquantile", "renorm",
        "isin", "frexp", "histogram", "cholesky_solve", "cholesky_inverse",
    ),
    FACTORY: ("zeros", "ones", "full", "empty", "arange", "linspace", "logspace", "eye",
              "rand", "randn", "randint", "randperm"),
}
_RANGES = ("arange", "linspace", "logspace")
# no out= overload without a dim in PyTorch (torch.sum(x, out=y) is a TypeError)
_OUT_NEEDS_DIM = ("sum", "prod", "median", "nanmedian")
RULE = {name: rule for rule, names in _RULES.items() for name in names}
# the linalg.* and nn.functional.* functions with out= in PyTorch (tensorlib.linalg and
# nn.functional install them): linalg's results need out's exact dtype, except pinv's and
# matrix_rank's, which are cast
LINALG_RULE = {**{name: EXACT for name in (
    "cholesky", "cholesky_ex", "cross", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv",
    "inv_ex", "matmul", "matrix_norm", "matrix_power", "multi_dot", "norm", "qr", "slogdet",
    "solve", "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm", "ldl_factor",
    "ldl_factor_ex", "ldl_solve")},
    "pinv": CAST, "matrix_rank": CAST}
FUNCTIONAL_RULE = {"normalize": CAST}
# special.*: every function with out= casts (round needs the exact dtype; softmax and
# log_softmax take no out=); tensorlib.special installs the ones it has
SPECIAL_RULE = {**{name: CAST for name in (
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "digamma", "entr", "erf",
    "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
    "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "logit", "logsumexp", "multigammaln",
    "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
    "ndtr", "ndtri", "polygamma", "psi", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "sinc", "spherical_bessel_j0", "xlog1py", "xlogy",
    "zeta")},
    "round": EXACT}
FFT_RULE = {**{name: COMPLEX_OUT for name in (
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "rfft2", "rfftn", "ihfft2",
    "ihfftn")},
    **{name: REAL_OUT for name in ("irfft", "irfft2", "irfftn", "hfft", "hfft2", "hfftn")},
    "ihfft": COMPLEX_EXACT, "fftfreq": FACTORY, "rfftfreq": FACTORY}

# ops with bool or index results: no autograd check of their arguments (PyTorch's)
_NOT_DIFFERENTIABLE = frozenset((
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "less", "greater_equal", "less_equal",
    "not_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_not", "all", "any", "argmax", "argmin", "isposinf",
    "isneginf", "signbit", "nonzero", "searchsorted", "bucketize", "isin", "gcd", "lcm",
    "histogram", "linalg.matrix_rank"))
# all/any write bool or uint8 only
_LOGICAL_OUT = {"all": (dt.bool_, dt.uint8), "any": (dt.bool_, dt.uint8)}
# exact-dtype ops whose PyTorch kernel words the error this way
_FOUND_DTYPE_MESSAGE = ("special.round",)
# ops whose PyTorch kernel takes int64 outs only, in these words
_LONG_OUT_MESSAGE = ("multinomial",)
# logsumexp writes floating (or complex) outs only
_FLOAT_OUT = ("logsumexp", "special.logsumexp")
# PyTorch's cat refuses a narrowing out dtype with TypeError (TensorIterator ops: RuntimeError)
_CAST_ERROR = {"cat": TypeError, "concat": TypeError, "concatenate": TypeError}


def install(namespace, rules=None, prefix=""):
    """Wrap every function in `namespace` (tensorlib's globals, or a namespace module's:
    `rules` and the `prefix` of its names, "linalg.") that takes out= in PyTorch."""
    for name, rule in (RULE if rules is None else rules).items():
        fn = namespace.get(name)
        if fn is not None:
            namespace[name] = with_out(prefix + name, rule, fn)


def with_out(name, rule, fn):
    """fn with a keyword-only `out=None`. The wrapper is generated with fn's own parameters,
    so that the out=None path is one call with nothing repacked (a generic *args/**kwargs
    wrapper cost ~0.1 us more per call); fn without a readable signature gets that one."""
    op = _same_signature(name, rule, fn)
    if op is None:
        def op(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            return _run_into(name, rule, fn, args, kwargs, out)
    return functools.wraps(fn)(op)


def _same_signature(name, rule, fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    P = inspect.Parameter
    sig, call, args, kwargs, env = [], [], [], [], {}
    star = False
    for p in params:
        if p.name == "out" or p.name.startswith("_"):
            return None
        default = ""
        if p.default is not P.empty:
            env[f"_d_{p.name}"] = p.default
            default = f"=_d_{p.name}"
        if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD):
            sig.append(p.name + default)
            call.append(p.name)
            args.append(p.name)
        elif p.kind is P.VAR_POSITIONAL:
            sig.append("*" + p.name)
            call.append("*" + p.name)
            args.append("*" + p.name)
            star = True
        elif p.kind is P.KEYWORD_ONLY:
            if not star:
                sig.append("*")
                star = True
            sig.append(p.name + default)
            call.append(f"{p.name}={p.name}")
            kwargs.append(f"{p.name!r}: {p.name}")
        else:
            return None                      # **kwargs: the generic wrapper
    if not star:
        sig.append("*")
    sig.append("out=None")
    source = (f"def op({', '.join(sig)}):\n"
              f"    if out is None:\n"
              f"        return _fn({', '.join(call)})\n"
              f"    return _run_into(_name, _rule, _fn, ({''.join(a + ', ' for a in args)}), "
              f"{{{', '.join(kwargs)}}}, out)\n")
    env.update(_fn=fn, _name=name, _rule=rule, _run_into=_run_into)
    exec(source, env)  # noqa: S102 - our own source, built from fn's parameter names
    return env["op"]


def _run_into(name, rule, fn, args, kwargs, out):
    outs = _out_tensors(name, out)
    for target in outs:              # an uninitialized parameter refuses first, as PyTorch's
        refuse = getattr(target._device._allocate, "refuse", None)   # (nn/parameter.py)
        if refuse is not None:
            refuse()
    if name in _OUT_NEEDS_DIM and (args[1] if len(args) > 1 else kwargs.get("dim")) is None:
        raise TypeError(f"{name}() with out= needs a dim (there is no out= overload of the "
                        "full reduction)")
    if is_grad_enabled() and name not in _NOT_DIFFERENTIABLE and (_requires_grad(args) or _requires_grad(kwargs.values()) or
                              _requires_grad(outs)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if rule == FACTORY:
        kwargs = _factory_kwargs(kwargs, outs[0])
    elif rule == OUT_DTYPE:
        kwargs = _computing_dtype(name, args, kwargs, outs[0])
    elif name in _LOGICAL_OUT and outs[0]._dtype is dt.uint8 and args and \
            isinstance(args[0], TensorImpl):
        args = (args[0].to(dt.uint8),) + tuple(args[1:])   # PyTorch's legacy uint8 all/any
    if name in _DIRECT and isinstance(out, TensorImpl) and _DIRECT[name](out, args, kwargs):
        return out
    result = fn(*args, **kwargs)
    results = result if isinstance(result, tuple) else (result,)
    if isinstance(out, TensorImpl) != (not isinstance(result, tuple)) or \
            len(results) != len(outs):
        raise TypeError(f"{name}(): argument 'out' must be {_expected(results)}")
    for position, (value, target) in enumerate(zip(results, outs)):
        _check_dtype(name, rule, value, target, position)
        if target._device is not value._device:
            raise RuntimeError(f"Expected out tensor to have device {value._device}, but got "
                               f"{target._device} instead")
    previous = set_grad_enabled(False)       # writing out is not recorded (nor refused for
    try:                                     # an out that requires grad, under no_grad)
        for value, target in zip(results, outs):
            if rule == FACTORY:
                value = _factory_fit(name, value, target)
            else:
                resize_output(target, value._sizes)
            target.copy_(value)
    finally:
        set_grad_enabled(previous)
    if isinstance(out, TensorImpl):
        return out
    return type(result)(*outs) if hasattr(result, "_fields") else tuple(outs)


def _product_into(out, args, kwargs):
    """mm/matmul of two matrices written straight into an `out` that already has the
    result's shape, dtype and device, is contiguous and shares no memory with a or b: the
    GEMM writes it, with no result to copy over (torch.mm(a, b, out=c) at 256^3 cost
    30-60 us more than a @ b that way). False, having done nothing, for any other call."""
    if kwargs or len(args) != 2 or _autocast.active:
        return False
    a, b = args
    if not (isinstance(a, TensorImpl) and isinstance(b, TensorImpl)):
        return False
    sa, sb = a._sizes, b._sizes
    if len(sa) != 2 or len(sb) != 2 or sa[1] != sb[0] or sa[1] == 0 \
            or out._sizes != (sa[0], sb[1]) or not (a._dtype is b._dtype is out._dtype) \
            or not (a._device is b._device is out._device) or not out.is_contiguous() \
            or out._storage is a._storage or out._storage is b._storage:
        return False
    mm = optional_kernel(out._device, "mm")
    if mm is None:
        return False
    mm(out, a, b)
    out._storage.version += 1
    return True


def _binary_into(op, kind, keyword=None, plain=None):
    """out= of an elementwise op of two operands, written by its kernel (binary_into) when
    the op's keyword argument (add's alpha, div's rounding_mode) has its plain value."""
    def into(out, args, kwargs):
        if len(args) != 2 or _autocast.active or len(kwargs) > (keyword is not None):
            return False
        if keyword is not None:
            value = kwargs.get(keyword, plain)
            if value is not plain and not (type(value) is type(plain) and value == plain):
                return False
        return binary_into(op, out, args[0], args[1], kind)
    return into


def _unary_into(op):
    def into(out, args, kwargs):
        if kwargs or len(args) != 1 or not isinstance(args[0], TensorImpl) or \
                _autocast.active:
            return False
        return unary_into(op, out, args[0], TO_FLOAT)
    return into


# ops whose result a kernel can write into out directly (else: computed, then copied)
_DIRECT = {"mm": _product_into, "matmul": _product_into,
           "add": _binary_into("add", SAME, "alpha", 1),
           "sub": _binary_into("sub", SAME, "alpha", 1),
           "mul": _binary_into("mul", SAME), "multiply": _binary_into("mul", SAME),
           "div": _binary_into("div", TO_FLOAT, "rounding_mode", None),
           "true_divide": _binary_into("div", TO_FLOAT),
           **{op: _unary_into(op) for op in ("exp", "expm1", "log", "log1p", "sqrt", "sin",
                                             "cos", "tan", "asin", "acos", "atan", "sinh",
                                             "cosh", "tanh", "erf")}}


def _factory_fit(name, value, target):
    """Factories resize out without a warning; the ranges keep out's shape when its number
    of elements is right (arange warns when it is not), as PyTorch's."""
    if name in _RANGES:
        if numel(target._sizes) == numel(value._sizes):
            return value.reshape(target._sizes)
        if name == "arange" and numel(target._sizes):
            warnings.warn(f"The number of elements in the out tensor of shape "
                          f"{list(target._sizes)} is {numel(target._sizes)} which does not "
                          f"match the computed number of elements {numel(value._sizes)}. The "
                          f"out tensor will be resized to a tensor of shape "
                          f"{tuple(value._sizes)}.", UserWarning, stacklevel=4)
    resize_(target, value._sizes)
    return value


def _out_tensors(name, out):
    outs = (out,) if isinstance(out, TensorImpl) else tuple(out) \
        if isinstance(out, (tuple, list)) else None
    if outs is None or not all(isinstance(t, TensorImpl) for t in outs):
        raise TypeError(f"{name}(): argument 'out' must be Tensor or a tuple of Tensors, not "
                        f"{type(out).__name__}")
    return outs


def _expected(results):
    return "Tensor" if len(results) == 1 else f"a tuple of {len(results)} Tensors"


def _requires_grad(values):
    for v in values:
        if isinstance(v, TensorImpl):
            if v._requires_grad:
                return True
        elif isinstance(v, (tuple, list)) and _requires_grad(v):
            return True
    return False


def _factory_kwargs(kwargs, target):
    """A factory builds in out's dtype and on out's device unless told otherwise; a dtype
    that differs from out's is an error (PyTorch's)."""
    dtype = kwargs.get("dtype")
    if dtype is not None and dtype is not target._dtype:
        raise RuntimeError(f"dtype {dtype.scalar_name} does not match dtype of out parameter "
                           f"({target._dtype.scalar_name})")
    return {**kwargs, "dtype": target._dtype,
            "device": kwargs.get("device") or target._device}


def _computing_dtype(name, args, kwargs, target):
    """sum/prod/cumsum with out= accumulate in out's dtype (or must be given that dtype)."""
    dtype = kwargs.get("dtype")
    if dtype is not None and dtype is not target._dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {dtype.name}, but got "
                           f"{target._dtype.name} instead")
    if name in ("cumsum", "cumprod") and target._dtype is dt.bool_:
        raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")
    if name == "nansum" and not target._dtype.is_floating_point and args and \
            getattr(args[0], "is_floating_point", bool)() and args[0].numel():
        raise NotImplementedError(f"\"nansum_cpu\" not implemented for "
                                  f"'{target._dtype.scalar_name}'")
    return {**kwargs, "dtype": target._dtype}


def _check_dtype(name, rule, value, target, position):
    if name in _LOGICAL_OUT:
        if target._dtype not in _LOGICAL_OUT[name]:
            raise RuntimeError(f"{name} only supports bool tensor for result, got: "
                               f"{target._dtype.scalar_name}")
    elif name in _FLOAT_OUT and not target._dtype.category >= 2:
        raise RuntimeError(f"{name.rpartition('.')[2]}(): Expected floating point type for "
                           f"result tensor, but got: {target._dtype.scalar_name}")
    elif rule in (COMPLEX_OUT, REAL_OUT, COMPLEX_EXACT):
        _check_fft_dtype(name, rule, value, target)
    elif rule == CAST or rule == OUT_DTYPE or rule == FACTORY:
        if not dt.can_cast(value._dtype, target._dtype):
            raise _CAST_ERROR.get(name, RuntimeError)(
                f"result type {value._dtype.scalar_name} can't be cast to the desired output "
                f"type {target._dtype.scalar_name}")
    elif value._dtype is not target._dtype and name in _LONG_OUT_MESSAGE:
        raise RuntimeError(f"{name} expects Long tensor out, got: {target._dtype.scalar_name}")
    elif value._dtype is not target._dtype and name in _FOUND_DTYPE_MESSAGE:
        raise RuntimeError(f"Found dtype {target._dtype.scalar_name} but expected "
                           f"{value._dtype.scalar_name}")
    elif value._dtype is not target._dtype:
        what = "out tensor" if position == 0 else f"out tensor {position}"
        raise RuntimeError(f"{name}(): expected {what} to have dtype {value._dtype.name}, but "
                           f"got {target._dtype.name} instead")


def _check_fft_dtype(name, rule, value, target):
    """PyTorch names the n-d transform its 2-d ones (and ifft2/ifftn) run on."""
    complex_out = rule != REAL_OUT
    if target._dtype.is_complex != complex_out or not (complex_out or
                                                       target._dtype.is_floating_point):
        base = name.rpartition(".")[2]
        base = "fftn" if base in ("fft2", "ifft2", "ifftn") else \
            base[:-1] + "n" if base.endswith("2") else base
        raise RuntimeError(f"{base} expects a {'complex' if complex_out else 'floating point'} "
                           f"output tensor, but got {target._dtype.scalar_name}")
    if rule == COMPLEX_EXACT and value._dtype is not target._dtype:
        raise RuntimeError(f"Found dtype {target._dtype.scalar_name} but expected "
                           f"{value._dtype.scalar_name}")


def resize_output(t, sizes):
    """Give `t` the shape `sizes` (PyTorch's resize_output): warn when it held elements."""
    sizes = tuple(sizes)
    if t._sizes == sizes:
        return t
    if numel(t._sizes):
        warnings.warn(f"An output with one or more elements was resized since it had shape "
                      f"{list(t._sizes)}, which does not match the required output shape "
                      f"{list(sizes)}. This behavior is deprecated; pass an out tensor of the "
                      "right shape, or one with no elements.", UserWarning, stacklevel=4)
    return resize_(t, sizes)


def resize_(t, *sizes):
    """Tensor.resize_: contiguous `sizes`, over the same storage when it is large enough,
    else over a new one (the values are then unspecified, as PyTorch's)."""
    from tensorlib.ops._args import sizes_arg
    sizes = sizes_arg(sizes)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(sizes)}")
    if is_grad_enabled() and t._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    needed = (t._offset + numel(sizes)) * t._dtype.itemsize
    if needed > t._storage._nbytes:
        t._storage = empty(sizes, t._dtype, t._device)._storage
        t._offset = 0
    t._sizes, t._strides = sizes, contiguous_strides(sizes)
    t._cache = None
    t._storage.version += 1
    return t
