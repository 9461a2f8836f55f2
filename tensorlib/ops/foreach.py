"""torch._foreach_*: one op applied to each tensor of a list (optimizers written outside
PyTorch -- schedule-free, pytorch_optimizer, timm's -- update their parameters with these).

Each is the op per tensor, as PyTorch's own slow path runs them on the CPU: the ops' kernels,
autograd and errors apply unchanged. The argument forms follow PyTorch's overloads: a number
(Scalar), a list of numbers (ScalarList), a list of tensors (List) or one 0-dim tensor
(Tensor). Out-of-place forms return a tuple; in-place forms return the list they were given.
"""
from numbers import Number

from tensorlib._C.tensor_impl import TensorImpl

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
          "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
          "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
# binary ops -> the overloads PyTorch has beyond Scalar, ScalarList and List
_BINARY = {"add": {"alpha", "tensor"}, "sub": {"alpha"}, "mul": {"tensor"},
           "div": {"tensor"}, "clamp_min": set(), "clamp_max": set(), "maximum": set(),
           "minimum": set(), "pow": set()}
_BY_NUMBER = {"maximum": "clamp_min", "minimum": "clamp_max"}


def _tensors(name, tensors, arg=0):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument {arg} must be a list of Tensors, not "
                        f"{type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, TensorImpl):
            raise TypeError(f"expected Tensor as element {i} in argument {arg}, but got "
                            f"{type(t).__name__}")
    return tensors


def _self(name, tensors):
    _tensors(name, tensors)
    if not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return tensors


def _same_length(tensors, other):
    if len(other) != len(tensors):
        raise RuntimeError(f"Tensor lists must have the same number of tensors, got "
                           f"{len(tensors)} and {len(other)}")


def _per_tensor(name, tensors, other):
    """The second argument as one value per tensor: ("list", tensors), ("scalars", numbers),
    or the same number or 0-dim tensor for each."""
    if isinstance(other, (list, tuple)):
        if other and all(isinstance(o, TensorImpl) for o in other):
            _same_length(tensors, other)
            return "list", list(other)
        if not all(isinstance(o, Number) for o in other):
            raise TypeError(f"{name}(): expected a list of Tensors or of numbers")
        if len(other) != len(tensors):
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return "scalars", list(other)
    if isinstance(other, TensorImpl):
        if other.dim() != 0:
            raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.dim()} "
                               f"dimensions and {other.numel()} elements.")
        return "tensor", [other] * len(tensors)
    if isinstance(other, Number):
        return "scalar", [other] * len(tensors)
    raise TypeError(f"{name}(): expected a number, a list of numbers, a Tensor or a list of "
                    f"Tensors, got {type(other).__name__}")


def _unary(op, inplace):
    name = f"_foreach_{op}" + ("_" if inplace else "")
    method = op + ("_" if inplace else "")

    def apply(self):
        _self(name, self)
        if inplace:
            for t in self:
                getattr(t, method)()
            return self
        return tuple(getattr(t, method)() for t in self)
    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = f"`{op}` of each tensor" + (" in place." if inplace else ".")
    return apply


def _binary(op, extras, inplace):
    name = f"_foreach_{op}" + ("_" if inplace else "")
    method = op + ("_" if inplace else "")

    def apply(self, other, *, alpha=None):
        _self(name, self)
        kind, values = _per_tensor(name, self, other)
        if kind == "tensor" and "tensor" not in extras:
            raise TypeError(f"{name}() takes no single Tensor operand: pass a list of Tensors "
                            f"or a number")
        if alpha is not None and ("alpha" not in extras or kind not in ("list", "tensor")):
            raise TypeError(f"{name}() received an invalid combination of arguments: alpha "
                            f"goes with a Tensor list or a Tensor, got a {kind}")
        kwargs = {} if alpha is None else {"alpha": alpha}
        if op in _BY_NUMBER and kind in ("scalar", "scalars"):
            fn = _BY_NUMBER[op] + ("_" if inplace else "")       # maximum(x, 2): clamp_min
            results = [getattr(t, fn)(v) for t, v in zip(self, values)]
        elif inplace and op in _BY_NUMBER:                       # no Tensor.maximum_
            results = [t.copy_(getattr(t, op)(v)) for t, v in zip(self, values)]
        else:
            results = [getattr(t, method)(v, **kwargs) for t, v in zip(self, values)]
        return self if inplace else tuple(results)
    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = f"`{op}` of each tensor with its operand" + \
        (" in place." if inplace else ".")
    return apply


def _pointwise3(op, inplace):
    """addcmul/addcdiv: self + value * (tensor1 op tensor2), value a number, a list of
    numbers or a 1-D tensor of them."""
    name = f"_foreach_{op}" + ("_" if inplace else "")
    method = op + ("_" if inplace else "")

    def apply(self, tensor1, tensor2, value=1):
        _self(name, self)
        for other, arg in ((tensor1, 1), (tensor2, 2)):
            _tensors(name, other, arg)
            _same_length(self, other)
        if isinstance(value, TensorImpl):
            if value.dim() != 1 or value.numel() != len(self):
                raise RuntimeError(f"{name}: the scalars tensor must be 1-D with one value per "
                                   f"tensor ({len(self)}), got shape {tuple(value.shape)}")
            value = value.tolist()
        values = value if isinstance(value, (list, tuple)) else [value] * len(self)
        if len(values) != len(self):
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        results = [getattr(t, method)(a, b, value=v)
                   for t, a, b, v in zip(self, tensor1, tensor2, values)]
        return self if inplace else tuple(results)
    apply.__name__ = apply.__qualname__ = name
    return apply


def _lerp(inplace):
    name = "_foreach_lerp" + ("_" if inplace else "")
    method = "lerp_" if inplace else "lerp"

    def apply(self, tensors1, weight):
        _self(name, self)
        _tensors(name, tensors1, 1)
        _same_length(self, tensors1)
        kind, weights = _per_tensor(name, self, weight)
        results = [getattr(t, method)(e, w) for t, e, w in zip(self, tensors1, weights)]
        return self if inplace else tuple(results)
    apply.__name__ = apply.__qualname__ = name
    return apply


_pow_each = _binary("pow", set(), False)


def _foreach_pow(self, exponent):
    """Each tensor to a power; or, with a number first, that number to each tensor."""
    if isinstance(self, Number):
        _self("_foreach_pow", exponent)
        return tuple(e.__rpow__(self) for e in exponent)
    return _pow_each(self, exponent)


def _foreach_zero_(self):
    _self("_foreach_zero_", self)
    for t in self:
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    _self("_foreach_copy_", self)
    _tensors("_foreach_copy_", src, 1)
    _same_length(self, src)
    for t, s in zip(self, src):
        t.copy_(s, non_blocking)
    return self


def _foreach_clone(self, *, memory_format=None):
    _self("_foreach_clone", self)
    kwargs = {} if memory_format is None else {"memory_format": memory_format}
    return tuple(t.clone(**kwargs) for t in self)


def _foreach_norm(self, ord=2, dtype=None):  # noqa: A002 - PyTorch's name
    """The vector norm of each tensor (0-dim results)."""
    from tensorlib.linalg import vector_norm
    _self("_foreach_norm", self)
    return tuple(vector_norm(t, ord, dtype=dtype) for t in self)


def _foreach_powsum(self, ord=2, dtype=None):  # noqa: A002
    """sum(|x| ** ord) of each tensor: a norm before its root."""
    _self("_foreach_powsum", self)
    out = []
    for t in self:
        if dtype is not None:
            t = t.to(dtype)
        out.append((t if ord == 2 and not t.is_complex() else t.abs()).pow(ord).sum())
    return tuple(out)


def _foreach_max(self):
    _self("_foreach_max", self)
    return tuple(t.max() for t in self)


def _foreach_mm(self, mat2):
    _self("_foreach_mm", self)
    _tensors("_foreach_mm", mat2, 1)
    _same_length(self, mat2)
    return tuple(a.mm(b) for a, b in zip(self, mat2))


def _build():
    ops = {"_foreach_pow": _foreach_pow, "_foreach_pow_": _binary("pow", set(), True),
           "_foreach_zero_": _foreach_zero_, "_foreach_copy_": _foreach_copy_,
           "_foreach_clone": _foreach_clone, "_foreach_norm": _foreach_norm,
           "_foreach_powsum": _foreach_powsum, "_foreach_max": _foreach_max,
           "_foreach_mm": _foreach_mm, "_foreach_lerp": _lerp(False),
           "_foreach_lerp_": _lerp(True)}
    for op in _UNARY:
        ops[f"_foreach_{op}"] = _unary(op, False)
        ops[f"_foreach_{op}_"] = _unary(op, True)
    for op, extras in _BINARY.items():
        if op != "pow":
            ops[f"_foreach_{op}"] = _binary(op, extras, False)
            ops[f"_foreach_{op}_"] = _binary(op, extras, True)
    for op in ("addcmul", "addcdiv"):
        ops[f"_foreach_{op}"] = _pointwise3(op, False)
        ops[f"_foreach_{op}_"] = _pointwise3(op, True)
    return ops


globals().update(_build())
__all__ = sorted(name for name in globals() if name.startswith("_foreach_"))
