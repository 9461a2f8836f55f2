"""Forward-mode AD with PyTorch's API: dual_level, make_dual, unpack_dual,
enter_dual_level/exit_dual_level.

NOTE [ Tangents ride on the recording path ]
A dual tensor is marked as taking part in autograd (`_requires_grad`), so every op on it
takes the path that records a graph node; while a dual level is active, the recorder also
calls `_propagate`, which applies the op's forward derivative (JVP rule) to the inputs'
tangents. Outside a dual level that hook is None, so eager code pays one pointer test on
the recording path and nothing on the no-grad path. Consequences: inside a level a dual
tensor (and what is computed from it) reports requires_grad=True; tangents propagate only
while grad mode is on (under no_grad ops record nothing, so their outputs carry no
tangent); on exit every tangent is dropped and tensors that took part only through forward
AD are made plain again. One level at a time, as in PyTorch.

JVP rules, by family (`JVP_RULES`):
- elementwise ops: their Jacobian is diagonal, so J t = backward formula applied to t
  (expanded to the output's shape), summed over the inputs that have tangents;
- reductions over disjoint slices (sum, mean, prod, amax, var, norms, logsumexp, max over a
  dim...): J t = sum over the reduced dims of (J^T 1) * t;
- ops linear in their floating inputs (views, reshapes, cat/stack, indexing, scatter/gather,
  cumsum, padding, casts): the op itself applied to the tangents;
- bilinear ops (matmul, mm, linear, convolutions): the product rule;
- softmax and log_softmax: their closed forms.
An op without a rule raises NotImplementedError naming it.

NOTE [ Complex tangents ]
Primals and tangents may be complex (CPU). The backward formulas compute, for an output
cotangent g, the adjoint J* g of the op's real-linear derivative J in PyTorch's convention
(holomorphic f: g conj(f'(z))). For a holomorphic op J t = f'(z) t = conj(J* conj(t)), and
for a real-valued output (abs, angle, var, norms) Re(conj(J* conj(t))) = J t, so the
elementwise and reduction rules conjugate the tangent going in and the result coming out (the
identity for real tensors) and a real output keeps the real part. The ops that are neither
holomorphic nor real-valued (conj, view_as_real, complex, real/imag through view_as_real)
are linear and have the linear rule; sgn is a composite of linear and real-valued ops.
jvp's results match torch.autograd.forward_ad and torch.func.jvp (tests/autograd/
test_forward_ad_complex.py)."""
import weakref
from collections import namedtuple

import tensorlib
from tensorlib._C import autograd as _engine
from tensorlib._C import grad_mode as _grad_mode
from tensorlib._C.autograd import FORMULAS, Context
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.autograd import recording as _recording
from tensorlib.autograd.formulas.reduction import _dims, arg
from tensorlib.ops._opdef import OPS

__all__ = ["dual_level", "make_dual", "unpack_dual", "enter_dual_level", "exit_dual_level",
           "UnpackedDualTensor"]

_TANGENT = "_fw_tangent"
_FW_ONLY = "_fw_only"      # took part in autograd only because of forward AD

_level = None              # the active level (PyTorch allows one at a time), or None
_carriers = []             # weakrefs to tensors given a tangent or a forward-only mark


# ---- levels --------------------------------------------------------------------------------
def enter_dual_level():
    """Start a forward-AD level; returns its index."""
    global _level
    if _level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _level = 0
    _engine.set_forward_hook(_propagate)
    _recording.dual_level_active = True
    return _level


def exit_dual_level(*, level=None):
    """End the level: every tangent made in it is dropped."""
    global _level
    if _level is None or (level is not None and level != _level):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    _engine.set_forward_hook(None)
    _recording.dual_level_active = False
    _level = None
    for ref in _carriers:
        t = ref()
        if t is None:
            continue
        d = t.__dict__
        d.pop(_TANGENT, None)
        if d.pop(_FW_ONLY, False):
            t._requires_grad = False
            t._grad_fn = None
    _carriers.clear()


class dual_level:
    """Context manager (and decorator) for one forward-AD level."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper


def _check_level(level, fn_name):
    if _level is None or (level is not None and level != _level):
        raise RuntimeError(f"{fn_name}: Trying to use forward AD with no active dual level "
                           f"(or with a level that is not the current one). Enter one with "
                           f"`with tensorlib.autograd.forward_ad.dual_level():` first.")


# ---- dual tensors ----------------------------------------------------------------------------
def _differentiable_dtype(dtype):
    return dtype.is_floating_point or dtype.is_complex


UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])


def _really_requires_grad(t):
    return t._requires_grad and not t.__dict__.get(_FW_ONLY, False)


def _set_tangent(t, tangent, forward_only):
    d = t.__dict__
    if tangent is not None:
        d[_TANGENT] = tangent
    if forward_only:
        d[_FW_ONLY] = True
    _carriers.append(weakref.ref(t))


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` carrying `tangent` as its forward derivative in this level."""
    _check_level(level, "make_dual")
    if not isinstance(tensor, TensorImpl) or not isinstance(tangent, TensorImpl):
        raise TypeError("make_dual: expected tensor and tangent to be Tensors")
    if not _differentiable_dtype(tensor.dtype):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not _differentiable_dtype(tangent.dtype):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tangent.dtype.is_complex and not tensor.dtype.is_complex:
        raise NotImplementedError(f"make_dual: a complex tangent ({tangent.dtype}) for a real "
                                  f"primal ({tensor.dtype}) is not supported by tensorlib (a "
                                  f"real input has real directions only); pass a complex "
                                  f"primal or a real tangent")
    if tuple(tensor.shape) != tuple(tangent.shape):
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                           f"that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")
    if tensor.device != tangent.device:
        raise RuntimeError(f"Expected tangent to be on the same device as primal: "
                           f"{tangent.device} and {tensor.device}")
    dual = tensor.detach()
    _engine.set_forward_hook(None)
    try:
        _engine.record("alias", dual, (tensor,), None)      # joins tensor's graph, if any
    finally:
        _engine.set_forward_hook(_propagate)
    _set_tangent(dual, tangent.to(tensor.dtype), not _really_requires_grad(tensor))
    return dual


def unpack_dual(tensor, *, level=None):
    """(primal, tangent): the tangent is None when `tensor` has none in this level."""
    if _level is None or (level is not None and level != _level):
        return UnpackedDualTensor(tensor, None)
    tangent = tensor.__dict__.get(_TANGENT) if isinstance(tensor, TensorImpl) else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    if tensor.__dict__.get(_FW_ONLY, False):
        primal = tensor.detach()
    else:
        _engine.set_forward_hook(None)
        try:
            primal = tensor.view_as(tensor)
        finally:
            _engine.set_forward_hook(_propagate)
    return UnpackedDualTensor(primal, tangent)


# ---- propagation -----------------------------------------------------------------------------
def _tangent_of(a):
    if isinstance(a, TensorImpl):
        return a.__dict__.get(_TANGENT)
    if isinstance(a, (list, tuple)):
        ts = [_tangent_of(x) for x in a]
        return ts if any(t is not None for t in ts) else None
    return None


def _tensor_args(args):
    for a in args:
        if isinstance(a, TensorImpl):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from _tensor_args(a)


def _propagate(op, out, args, kwargs):
    """The recorder's forward hook: give `out` the tangent of op's JVP rule."""
    tangents = [_tangent_of(a) for a in args]
    if all(t is None for t in tangents):
        return
    rule = JVP_RULES.get(op)
    if rule is None:
        raise NotImplementedError(f"Trying to use forward AD with {op} that does not support "
                                  f"it because it has not been implemented yet (tensorlib has "
                                  f"no JVP rule for '{op}').")
    forward_only = not any(_really_requires_grad(t) for t in _tensor_args(args))
    _engine.set_forward_hook(None)
    # a tangent needs a graph of its own only when something really requires grad
    previous = _grad_mode.set_grad_enabled(not forward_only and _grad_mode.is_grad_enabled())
    try:
        result = rule(op, args, tangents, kwargs or {}, out)
    finally:
        _grad_mode.set_grad_enabled(previous)
        _engine.set_forward_hook(_propagate)
    if isinstance(out, TensorImpl):
        out, result = (out,), (result,)
    for o, t in zip(out, result):
        if _differentiable_dtype(o._dtype):
            if t is not None and t._sizes != o._sizes:
                t = t.expand(o._sizes)
            if t is not None and t._dtype is not o._dtype:
                if t._dtype.is_complex and not o._dtype.is_complex:
                    t = tensorlib.real(t)           # a real output moves along Re(J t)
                t = t.to(o._dtype)
            _set_tangent(o, t, forward_only)


def inplace_tangent(self, result):
    """An in-place op wrote `result` (recorded out of place) into self: self's tangent
    becomes result's."""
    tangent = result.__dict__.get(_TANGENT)
    if tangent is None and _TANGENT not in self.__dict__:
        return
    if self._base is not None:
        raise NotImplementedError("forward AD through an in-place op on a view is not "
                                  "supported by tensorlib; use the out-of-place op")
    self.__dict__.pop(_TANGENT, None)
    _set_tangent(self, tangent, not _really_requires_grad(result))


def _ctx(args, kwargs, out, wanted):
    ctx = Context()
    ctx.args = tuple(args)
    ctx.kwargs = kwargs
    ctx.out = out
    ctx.needs_input_grad = tuple(i == wanted for i in range(len(args)))
    return ctx


def _elementwise(op, args, tangents, kwargs, out):
    """Diagonal Jacobian: J t = conj(backward(conj(t))) (for real values the backward
    formula applied to the tangent). See NOTE [ Complex tangents ]."""
    backward = FORMULAS[op].backward
    total = None
    for i, t in enumerate(tangents):
        if t is None or isinstance(t, list):
            continue
        g = t if t._sizes == out._sizes else t.expand(out._sizes)
        grads = backward(_ctx(args, kwargs, out, i), _conj(g))
        gi = grads[i] if isinstance(grads, tuple) else grads
        if gi is not None:
            gi = _conj(gi)
            total = gi if total is None else total + gi
    return total if total is not None else tensorlib.zeros_like(out)


def _conj(t):
    return t.conj_physical() if t._dtype.is_complex else t


_REDUCTION_DIM_INDEX = {"sum": 1, "mean": 1, "prod": 1, "amax": 1, "amin": 1,
                        "logsumexp": 1, "var": 1, "std": 1, "vector_norm": 2, "max_dim": 1,
                        "min_dim": 1}


def _reduction(op, args, tangents, kwargs, out):
    """Each output element reduces its own slice: J t = sum over the slice of (J^T 1) * t."""
    values = out[0] if isinstance(out, tuple) else out
    ctx = _ctx(args, kwargs, out, 0)
    grads = FORMULAS[op].backward(ctx, tensorlib.ones_like(values))
    partial = grads[0] if isinstance(grads, tuple) else grads
    x = args[0]
    dims = _dims(ctx, x, _REDUCTION_DIM_INDEX[op])
    if op in ("max_dim", "min_dim"):
        dims = (tensorlib._C.views.wrap_dim(arg(ctx, 1, "dim"), x.dim()),)
    product = _conj(partial) * tangents[0]
    jv = (product.sum(tuple(dims), keepdim=True) if dims else product).reshape(values.shape)
    return (jv, None) if isinstance(out, tuple) else jv


def _zeros_for_missing(a, t):
    """The tangent standing in for argument a in a linear op: its tangent, zeros for a
    floating tensor without one, a itself otherwise (shapes, indices, masks)."""
    if isinstance(a, TensorImpl):
        if t is not None:
            return t
        return tensorlib.zeros_like(a) if a._dtype.is_floating_point else a
    if isinstance(a, list):
        ts = t if t is not None else [None] * len(a)
        return [_zeros_for_missing(x, u) for x, u in zip(a, ts)]
    return a


_ZERO_CONSTANT = {"pad": 3, "constant_pad_nd": 2}      # position of a constant fill value


def _linear(op, args, tangents, kwargs, out):
    """Linear in the floating inputs: the op applied to the tangents."""
    new = [_zeros_for_missing(a, t) for a, t in zip(args, tangents)]
    kwargs = dict(kwargs)
    position = _ZERO_CONSTANT.get(op)
    if position is not None:
        if len(new) > position:
            new[position] = 0.0
        elif "value" in kwargs:
            kwargs["value"] = 0.0
    return OPS[op](*new, **kwargs)


def _bilinear(op, args, tangents, kwargs, out):
    """The product rule for an op linear in each of its first two arguments (and in a bias
    third argument, for linear)."""
    args = list(args)
    rest = args[2:]
    bias_tangent = None
    if op == "linear":
        bias = args[2] if len(args) > 2 else kwargs.get("bias")
        bias_tangent = tangents[2] if len(tangents) > 2 else None
        rest = [None] if len(args) > 2 else []
        kwargs = {k: v for k, v in kwargs.items() if k != "bias"}
        del bias
    fn = OPS[op]
    total = None
    if tangents[0] is not None:
        total = fn(tangents[0], args[1], *rest, **kwargs)
    if tangents[1] is not None:
        term = fn(args[0], tangents[1], *rest, **kwargs)
        total = term if total is None else total + term
    if bias_tangent is not None:
        total = bias_tangent.expand(out._sizes) if total is None else total + bias_tangent
    return total


def _conv2d_bias(op, args, tangents, kwargs, out):
    """conv2d with a fused bias: the product rule of conv2d plus the bias tangent per
    channel."""
    x, w, bias, *rest = args
    total = _bilinear("conv2d", [x, w] + rest, tangents[:2], kwargs, out)
    bias_tangent = tangents[2] if len(tangents) > 2 else None
    if bias_tangent is not None:
        column = bias_tangent.reshape(1, -1, 1, 1)
        total = column.expand(out._sizes) if total is None else total + column
    return total


def _softmax(op, args, tangents, kwargs, out):
    dim = arg(_ctx(args, kwargs, out, 0), 1, "dim")
    t = tangents[0].to(out.dtype)
    if op == "softmax":
        return out * (t - (out * t).sum(dim, keepdim=True))
    return t - (out.exp() * t).sum(dim, keepdim=True)


def _addmm(op, args, tangents, kwargs, out):
    """beta * input + alpha * mat1 @ mat2: beta t_input + alpha (t_1 @ mat2 + mat1 @ t_2)."""
    input_, mat1, mat2, beta, alpha = args
    t_in, t1, t2 = tangents[:3]
    result = None
    for part in ((t1 @ mat2) if t1 is not None else None,
                 (mat1 @ t2) if t2 is not None else None):
        if part is not None:
            result = part if result is None else result + part
    if result is not None and alpha != 1:
        result = result * alpha
    if t_in is not None:
        scaled = t_in * beta if beta != 1 else t_in
        result = scaled.expand(out._sizes) if result is None else result + scaled
    return result


_ELEMENTWISE = ("abs", "acos", "add", "asin", "atan", "atan2", "ceil", "clamp", "cos", "cosh",
                "div", "erf", "erfc", "exp", "expm1", "gelu", "silu", "hardtanh",
                "leaky_relu", "hardsigmoid", "hardswish", "elu", "celu", "softplus",
                "log_sigmoid", "mish", "floor", "floor_divide", "fmod",
                "hypot", "log", "log1p", "logaddexp", "masked_fill", "maximum", "minimum",
                "mul", "neg", "pow", "relu", "remainder", "round", "sigmoid", "sign", "sin",
                "sinh", "sqrt", "sub", "tan", "tanh", "trunc", "where", "index_fill",
                "scatter_value", "complex_abs", "angle", "asinh", "acosh", "atanh")
_LINEAR = ("as_strided", "cat", "clone", "constant_pad_nd", "cumsum", "diag", "diag_embed",
           "diagonal", "expand", "flatten", "flip", "gather", "getitem", "index_add",
           "index_copy", "index_put", "index_select", "masked_scatter", "masked_select",
           "narrow", "pad", "permute", "put_along_dim", "repeat", "repeat_interleave",
           "reshape", "roll", "scatter", "scatter_add", "select", "split_with_sizes", "squeeze",
           "stack",
           "sum_to_size", "t", "take_along_dim", "take_flat", "to_copy", "trace", "transpose",
           "tril", "triu", "unfold", "unsqueeze", "view", "im2col", "col2im",
           "view_as_real", "view_as_complex", "conj_physical", "complex")

JVP_RULES = {}
JVP_RULES.update({name: _elementwise for name in _ELEMENTWISE})
JVP_RULES.update({name: _linear for name in _LINEAR})
JVP_RULES.update({name: _reduction for name in _REDUCTION_DIM_INDEX})
JVP_RULES.update({name: _bilinear for name in ("matmul", "mm", "linear", "conv1d", "conv2d",
                                               "conv3d", "conv_transpose1d",
                                               "conv_transpose2d", "conv_transpose3d")})
JVP_RULES.update({"softmax": _softmax, "log_softmax": _softmax})
JVP_RULES["conv2d_bias"] = _conv2d_bias
JVP_RULES["addmm"] = _addmm
JVP_RULES["alias"] = lambda op, args, tangents, kwargs, out: tangents[0]
_recording.inplace_tangent = inplace_tangent
