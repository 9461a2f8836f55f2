"""torch.masked.MaskedTensor (PyTorch's prototype): a tensor `data` and a boolean `mask` of
the same shape, True where an element is specified. Elementwise ops keep the mask (binary ops
need equal masks), reductions leave the unspecified elements out (tensorlib.masked's
reductions) and mark a result specified when any of its inputs was.

Unlike PyTorch's, this MaskedTensor is not a Tensor subclass: it is its own class whose
methods and operators do the work, and tensorlib's functions reach it through the
__torch_function__ protocol for tensor-like objects (tensorlib/overrides.py), so
`tensorlib.exp(mt)` and `tensorlib.sum(mt, 0)` work. Autograd runs on the data tensor:
`masked_tensor(..., requires_grad=True)` makes a leaf whose `.grad` is a MaskedTensor, and
`get_data()` / `as_masked_tensor` keep the graph to and from plain tensors. Differences
that follow from not being a Tensor: a plain Tensor on the left of an operator (`t + mt`)
raises TypeError (`mt + t` and `tensorlib.add(t, mt)` work), and the tensor given to
as_masked_tensor receives a plain gradient (zero where unspecified) where PyTorch's is a
MaskedTensor. Strided layout only (PyTorch's sparse MaskedTensors are not implemented)."""
import operator
import warnings

import tensorlib
from tensorlib import masked as _masked

__all__ = ["MaskedTensor", "as_masked_tensor", "is_masked_tensor", "masked_tensor"]

_DTYPES = ("float16", "float32", "float64", "bool", "int8", "int16", "int32", "int64")
UNARY = ("abs", "absolute", "acos", "arccos", "acosh", "arccosh", "angle", "asin", "arcsin",
         "asinh", "arcsinh", "atan", "arctan", "atanh", "arctanh", "bitwise_not", "ceil",
         "clamp", "clip", "conj_physical", "cos", "cosh", "deg2rad", "digamma", "erf", "erfc",
         "erfinv", "exp", "exp2", "expm1", "fix", "floor", "frac", "lgamma", "log", "log10",
         "log1p", "log2", "logit", "i0", "isnan", "nan_to_num", "neg", "negative", "positive",
         "pow", "rad2deg", "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sgn", "signbit",
         "sin", "sinc", "sinh", "sqrt", "square", "tan", "tanh", "trunc", "relu", "logical_not")
BINARY = ("add", "atan2", "arctan2", "bitwise_and", "bitwise_or", "bitwise_xor",
          "bitwise_left_shift", "bitwise_right_shift", "div", "divide", "floor_divide", "fmod",
          "logaddexp", "logaddexp2", "mul", "multiply", "nextafter", "remainder", "sub",
          "subtract", "true_divide", "eq", "ne", "le", "ge", "greater", "greater_equal", "gt",
          "less_equal", "lt", "less", "maximum", "minimum", "fmax", "fmin", "not_equal")
REDUCTIONS = ("sum", "mean", "amin", "amax", "argmin", "argmax", "prod", "all", "norm", "var",
              "std")
PASSTHROUGH = ("reshape", "view", "transpose", "permute", "unsqueeze", "squeeze", "flatten",
               "expand", "t", "contiguous", "select", "narrow", "flip", "roll")


def is_masked_tensor(obj, /):
    """True if obj is a MaskedTensor."""
    return isinstance(obj, MaskedTensor)


def masked_tensor(data, mask, requires_grad=False):
    """A MaskedTensor of copies of data and mask (a new leaf when requires_grad)."""
    return MaskedTensor(data, mask, requires_grad)


def as_masked_tensor(data, mask):
    """A MaskedTensor whose data stays in data's graph (gradients flow back to data)."""
    return MaskedTensor._from_values(data, mask)


def _check(data, mask):
    if is_masked_tensor(data) or not isinstance(data, tensorlib.Tensor):
        raise TypeError("data must be a Tensor")
    if is_masked_tensor(mask) or not isinstance(mask, tensorlib.Tensor):
        raise TypeError("mask must be a Tensor")
    if data.layout != mask.layout:
        raise TypeError("data and mask must have the same layout.")
    if data.layout != tensorlib.strided:
        raise TypeError(f"data layout of {data.layout} is not supported.")
    if mask.dtype != tensorlib.bool:
        raise TypeError("mask must have dtype bool.")
    if data.dtype.name not in _DTYPES:
        raise TypeError(f"{data.dtype} is not supported in MaskedTensor.")
    if data.dim() != mask.dim():
        raise ValueError("data.dim() must equal mask.dim()")
    if data.size() != mask.size():
        raise ValueError("data.size() must equal mask.size()")


def _format(value, formatter):
    return formatter.format(value) if isinstance(value, float) else str(value)


def _masked_str(data, mask, formatter):
    if data.dim() == 1:
        items = [_format(v, formatter) for v in data.tolist()]
        unset = [not m for m in mask.tolist()]
        width = max(8 if u else len(s) for s, u in zip(items, unset))
        return "[" + ", ".join("--".rjust(width) if u else s for s, u in zip(items, unset)) + "]"
    rows = [_masked_str(d, m, formatter) for d, m in zip(data, mask)]
    rows = ["\n".join("  " + line for line in row.split("\n")) for row in rows]
    return "[\n" + ",\n".join(rows) + "\n]"


def _data(value):
    return value._masked_data if is_masked_tensor(value) else value


def _any(mask, dim, keepdim):
    dims = [dim] if isinstance(dim, int) else list(dim)
    for d in sorted((d % max(mask.dim(), 1) for d in dims), reverse=True):
        mask = mask.any(dim=d, keepdim=keepdim)
    return mask


class MaskedTensor:
    def __init__(self, data, mask, requires_grad=False):
        _check(data, mask)
        warnings.warn("The PyTorch API of MaskedTensors is in prototype stage and will change "
                      "in the near future. Please open a Github issue for features requests "
                      "and see our documentation on the torch.masked module for further "
                      "information about the project.", UserWarning, stacklevel=2)
        self._masked_data = data.detach().clone().requires_grad_(requires_grad)
        self._masked_mask = mask.clone()

    @classmethod
    def _from_values(cls, data, mask):
        """Wraps data without copying or detaching it (the differentiable constructor)."""
        _check(data, mask)
        out = cls.__new__(cls)
        out._masked_data, out._masked_mask = data, mask
        return out

    # ---- members ---------------------------------------------------------------------------
    def get_data(self):
        return self._masked_data

    def get_mask(self):
        return self._masked_mask

    def to_tensor(self, value):
        """The data with the unspecified elements set to value."""
        return self._masked_data.masked_fill(~self._masked_mask, value)

    def _wrap(self, data, mask=None):
        return MaskedTensor._from_values(data, self._masked_mask if mask is None else mask)

    @property
    def shape(self):
        return self._masked_data.shape

    @property
    def dtype(self):
        return self._masked_data.dtype

    @property
    def device(self):
        return self._masked_data.device

    @property
    def layout(self):
        return self._masked_data.layout

    @property
    def ndim(self):
        return self._masked_data.dim()

    @property
    def is_sparse(self):
        return False

    def size(self, dim=None):
        return self._masked_data.size() if dim is None else self._masked_data.size(dim)

    def dim(self):
        return self._masked_data.dim()

    def numel(self):
        return self._masked_data.numel()

    def __len__(self):
        return len(self._masked_data)

    # ---- autograd ----------------------------------------------------------------------------
    @property
    def requires_grad(self):
        return self._masked_data.requires_grad

    def requires_grad_(self, requires_grad=True):
        self._masked_data.requires_grad_(requires_grad)
        return self

    @property
    def grad(self):
        grad = self._masked_data.grad
        return None if grad is None else self._wrap(grad)

    def backward(self, gradient=None, retain_graph=None, create_graph=False):
        self._masked_data.backward(_data(gradient), retain_graph=retain_graph,
                                   create_graph=create_graph)

    def detach(self):
        return self._wrap(self._masked_data.detach())

    def clone(self):
        return self._wrap(self._masked_data.clone(), self._masked_mask.clone())

    def to(self, *args, **kwargs):
        data = self._masked_data.to(*args, **kwargs)
        mask = self._masked_mask.to(data.device)
        return self._wrap(data, mask)

    def __repr__(self):
        formatter = "{0:8.4f}"
        if self.dim() == 0:
            specified = bool(self._masked_mask.item())
            text = _format(self._masked_data.item(), formatter) if specified else "--"
            return f"MaskedTensor({text}, {specified})"
        body = _masked_str(self._masked_data.detach().cpu(), self._masked_mask.cpu(), formatter)
        return "MaskedTensor(\n" + "\n".join("  " + line for line in body.split("\n")) + "\n)"

    # ---- elementwise ---------------------------------------------------------------------------
    def _unary(self, fn, *args, **kwargs):
        for a in args:
            if isinstance(a, (tensorlib.Tensor, MaskedTensor)):
                raise TypeError("MaskedTensor unary ops require that len(args) == 1")
        return self._wrap(fn(self._masked_data, *args, **kwargs))

    @staticmethod
    def _binary(fn, lhs, rhs, *args):
        for a in args:
            if isinstance(a, (tensorlib.Tensor, MaskedTensor)):
                raise TypeError("MaskedTensor binary ops do not support Tensor arguments "
                                "aside from the lhs and rhs")
        if is_masked_tensor(lhs) and is_masked_tensor(rhs) and \
                not bool(tensorlib.equal(lhs._masked_mask, rhs._masked_mask)):
            raise ValueError("Input masks must match. If you need support for this, please "
                             "open an issue on Github.")
        mask = lhs._masked_mask if is_masked_tensor(lhs) else rhs._masked_mask
        return MaskedTensor._from_values(fn(_data(lhs), _data(rhs), *args), mask)

    def __getitem__(self, index):
        return self._wrap(self._masked_data[index], self._masked_mask[index])

    # ---- reductions ----------------------------------------------------------------------------
    def _reduce(self, name, dim=None, keepdim=False, dtype=None, **options):
        """tensorlib.masked's reduction of the data under the mask; the result is specified
        where any reduced element was."""
        data, mask = self._masked_data, self._masked_mask
        if name == "all":
            filled = data.masked_fill(~mask, True)
            result = filled.all() if dim is None else filled.all(dim=dim, keepdim=keepdim)
        else:
            result = getattr(_masked, name)(data, dim=dim, keepdim=keepdim, dtype=dtype,
                                            mask=mask, **options)
        out_mask = mask.any() if dim is None else _any(mask, dim, keepdim)
        return MaskedTensor._from_values(result, out_mask)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name in _CONSTRUCTORS:        # tensorlib.masked's wrapped copies of them
            return _CONSTRUCTORS[name](*args, **kwargs)
        if name in UNARY or name in BINARY or name in REDUCTIONS or name in PASSTHROUGH:
            self = args[0] if is_masked_tensor(args[0]) else args[1]
            method = getattr(self, name)
            if self is args[0]:
                return method(*args[1:], **kwargs)
            if kwargs or len(args) != 2:
                return NotImplemented
            return cls._binary(getattr(tensorlib, name), args[0], args[1])
        if name == "where" and len(args) == 3 and not kwargs:
            cond, a, b = args
            if is_masked_tensor(a) and is_masked_tensor(b):
                return cls._binary(lambda x, y: tensorlib.where(_data(cond), x, y), a, b)
        return NotImplemented


def _unary_method(name):
    def method(self, *args, **kwargs):
        return self._unary(getattr(tensorlib, name), *args, **kwargs)
    method.__name__ = name
    return method


def _binary_method(name, reflected=False):
    fn = getattr(tensorlib, name)

    def method(self, other, *args, **kwargs):
        if kwargs:
            raise ValueError("len(kwargs) must equal 0")
        if reflected:
            return MaskedTensor._binary(fn, other, self, *args)
        return MaskedTensor._binary(fn, self, other, *args)
    method.__name__ = name
    return method


def _inplace_method(name):
    def method(self, other):
        result = MaskedTensor._binary(getattr(tensorlib, name), self, other)
        self._masked_data = result._masked_data
        return self
    method.__name__ = name + "_"
    return method


def _reduction_method(name):
    def method(self, dim=None, keepdim=False, dtype=None, **options):
        return self._reduce(name, dim, keepdim, dtype, **options)
    method.__name__ = name
    return method


def _passthrough_method(name):
    def method(self, *args, **kwargs):
        return self._wrap(getattr(self._masked_data, name)(*args, **kwargs),
                          getattr(self._masked_mask, name)(*args, **kwargs))
    method.__name__ = name
    return method


_CONSTRUCTORS = {"is_masked_tensor": is_masked_tensor, "masked_tensor": masked_tensor,
                 "as_masked_tensor": as_masked_tensor}
for _name in UNARY:
    if hasattr(tensorlib, _name):
        setattr(MaskedTensor, _name, _unary_method(_name))
for _name in BINARY:
    if hasattr(tensorlib, _name):
        setattr(MaskedTensor, _name, _binary_method(_name))
for _name in REDUCTIONS:
    setattr(MaskedTensor, _name, _reduction_method(_name))
MaskedTensor.norm = lambda self, ord=2.0, dim=None, keepdim=False, dtype=None: \
    self._reduce("norm", dim, keepdim, dtype, ord=ord)
for _name in PASSTHROUGH:
    setattr(MaskedTensor, _name, _passthrough_method(_name))
for _op, _name in ((operator.add, "add"), (operator.sub, "sub"), (operator.mul, "mul"),
                   (operator.truediv, "div"), (operator.floordiv, "floor_divide"),
                   (operator.mod, "remainder"), (operator.pow, "pow"),
                   (operator.and_, "bitwise_and"), (operator.or_, "bitwise_or"),
                   (operator.xor, "bitwise_xor")):
    _dunder = _op.__name__.strip("_")
    setattr(MaskedTensor, f"__{_dunder}__", _binary_method(_name))
    setattr(MaskedTensor, f"__r{_dunder}__", _binary_method(_name, reflected=True))
    setattr(MaskedTensor, f"__i{_dunder}__", _inplace_method(_name))
for _dunder, _name in (("eq", "eq"), ("ne", "ne"), ("lt", "lt"), ("le", "le"), ("gt", "gt"),
                       ("ge", "ge")):
    setattr(MaskedTensor, f"__{_dunder}__", _binary_method(_name))
MaskedTensor.__neg__ = _unary_method("neg")
MaskedTensor.__abs__ = _unary_method("abs")
MaskedTensor.__invert__ = _unary_method("bitwise_not")
MaskedTensor.__hash__ = object.__hash__
MaskedTensor.T = property(lambda self: self.t() if self.dim() == 2 else
                          self._wrap(self._masked_data.permute(*range(self.dim() - 1, -1, -1)),
                                     self._masked_mask.permute(*range(self.dim() - 1, -1, -1))))
