"""Parameter and Buffer: tensors that a Module registers when they are assigned to it.

A Parameter is a Tensor subclass that shares its data's storage (no copy) and is a leaf that
requires grad; ops on it return plain Tensors, as in PyTorch. UninitializedParameter and
UninitializedBuffer are the placeholders of lazy modules until their shape is known."""
import threading
from contextlib import contextmanager

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.overrides import _disabled_torch_function_impl

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


def _alias(cls, data):
    """An instance of `cls` over data's storage, sizes, strides and offset (a fresh leaf)."""
    obj = TensorImpl.__new__(cls)
    obj._storage = data._storage
    obj._sizes = data._sizes
    obj._strides = data._strides
    obj._offset = data._offset
    obj._dtype = data._dtype
    obj._device = data._device
    obj._is_inference = data._is_inference
    return obj


def _to_host(t):
    return t.detach().cpu().numpy().copy(), str(t._device)


def _from_host(array, device):
    return tensorlib.tensor(array).to(device)


class Parameter(tensorlib.Tensor):
    r"""A kind of Tensor that is to be considered a module parameter.

    Assigning a Parameter as a Module attribute adds it to the module's parameters (it appears
    in :meth:`~Module.parameters`); a plain Tensor assigned the same way does not.

    Args:
        data (Tensor): parameter tensor; its storage is shared, not copied.
        requires_grad (bool, optional): if the parameter requires gradient. Default: `True`
    """

    __module__ = "tensorlib.nn.parameter"
    # ops on Parameters return plain Tensors, and the C wrapper skips them (PyTorch's choice)
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = tensorlib.empty(0)
        if not isinstance(data, TensorImpl):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not "
                            f"{type(data).__name__}")
        obj = _alias(cls, data)
        if requires_grad:
            obj.requires_grad_(True)
        return obj

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        with tensorlib.no_grad():
            result = type(self)(self.detach().clone(), self._requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        # host round trip: tensorlib.Tensor has no pickling of its own yet
        array, device = _to_host(self)
        return _rebuild_parameter, (type(self), array, device, self._requires_grad)


def _rebuild_parameter(cls, array, device, requires_grad):
    return cls(_from_host(array, device), requires_grad)


class _BufferMeta(type(tensorlib.Tensor)):
    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, TensorImpl) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(tensorlib.Tensor, metaclass=_BufferMeta):
    r"""A kind of Tensor that should not be considered a model parameter: assigning a Buffer
    as a Module attribute registers it as a buffer (persistent unless `persistent=False`).

    Args:
        data (Tensor): buffer tensor.
        persistent (bool, optional): whether the buffer is part of the module's
            :attr:`state_dict`. Default: ``True``
    """

    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = tensorlib.empty(0)
        t = data.detach()
        t._is_buffer = True
        t._persistent = persistent
        return t


_UNINITIALIZED_ALLOWED = frozenset({
    "size", "copy_", "is_complex", "is_floating_point", "half", "float", "double", "char",
    "short", "int", "long", "cuda", "cpu", "to", "get_device", "data", "device", "dtype",
    "requires_grad", "requires_grad_", "grad", "is_leaf", "grad_fn", "materialize",
    "cls_to_become", "shape", "share_memory_", "persistent"})
_CONVERSIONS = frozenset({"to", "cuda", "cpu", "half", "float", "double", "char", "short",
                          "int", "long"})
_TENSOR_NAMES = frozenset(n for n in dir(tensorlib.Tensor) if not n.startswith("_"))


_inside_allowed = threading.local()
_inside_allowed.depth = 0


@contextmanager
def _allowed_call():
    if not hasattr(_inside_allowed, "depth"):
        _inside_allowed.depth = 0
    _inside_allowed.depth += 1
    try:
        yield
    finally:
        _inside_allowed.depth -= 1


def _uninitialized_error(name, kind="UninitializedParameter"):
    return ValueError(f"Attempted to use an uninitialized parameter in {name}. This error "
                      f"happens when you are using a `LazyModule` or explicitly manipulating "
                      f"`tensorlib.nn.parameter.{kind}` objects. When using LazyModules Call "
                      f"`forward` with a dummy batch to initialize the parameters before "
                      f"calling tensorlib functions")


def _uninitialized_use(name):
    def refuse(self, *args, **kwargs):
        raise _uninitialized_error(name, type(self).__name__)
    return refuse


class _RefusingAllocator:
    """The allocator of a placeholder's device: an op reading a placeholder allocates its
    result on the placeholder's device, and that is where it is refused (the methods the
    mixin allows run inside `_allowed_call` and allocate on the real device). Mismatched
    device checks (`x + placeholder`) ask `refuse` before they raise their own error."""

    def __init__(self, device):
        self.device = device

    def __call__(self, nbytes, index):
        if _inside_allowed.depth:
            return self.device._allocate(nbytes, index)
        self.refuse()

    def refuse(self):
        raise _uninitialized_error("a tensorlib function")


def _to_placeholder_device(t):
    """Move `t` (and its storage, which views take their device from) onto the placeholder
    device of its device."""
    t._device = t._storage.device = _placeholder_device(t._device)


_PLACEHOLDER_DEVICES = {}                 # real device's (type, index) -> placeholder device


def _placeholder_device(real):
    """A device equal to `real` (same type, index, kernels) but a distinct object whose
    allocator refuses: ops on a placeholder fail with PyTorch's ValueError while tensors on
    the real device pay nothing (the hot path compares devices by identity)."""
    if isinstance(real._allocate, _RefusingAllocator):
        return real
    placeholder = _PLACEHOLDER_DEVICES.get((real.type, real.index))
    if placeholder is None:
        placeholder = tensorlib.device(real.type, real.index)
        placeholder._kernels, placeholder._backend = real._kernels, real._backend
        placeholder._release = real._release
        placeholder._allocate = _RefusingAllocator(real)
        _PLACEHOLDER_DEVICES[(real.type, real.index)] = placeholder
    return placeholder


class UninitializedTensorMixin:
    r"""A tensor whose shape is not known yet: only moving it (to/cuda/cpu/dtype casts),
    `size`, `copy_` and :meth:`materialize` are allowed; any other Tensor method or operator
    raises ValueError. Tensors passed to tensorlib functions raise the same ValueError: the
    placeholder lives on a device of its own whose allocator refuses (`_placeholder_device`).
    `device` is the real device."""

    __torch_function__ = _disabled_torch_function_impl

    def materialize(self, shape, device=None, dtype=None):
        r"""Give the tensor its data (uninitialized values of `shape`) and turn it into the
        class it stands for (Parameter or Tensor)."""
        device = self.device if device is None else device
        dtype = self._dtype if dtype is None else dtype
        self.data = tensorlib.empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def device(self):
        return self._device._allocate.device

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. "
                           "This error usually happens in `load_state_dict` when trying to load "
                           "an uninitialized parameter into an initialized one. Call `forward` "
                           "to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call "
                           "`forward` to initialize the parameters before calling "
                           "`module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))

    def __getattribute__(self, name):
        if name not in _TENSOR_NAMES:
            return object.__getattribute__(self, name)
        if _inside_allowed.depth:   # an allowed method's own calls on self: plain Tensor's
            return getattr(super(UninitializedTensorMixin, self), name)
        if name not in _UNINITIALIZED_ALLOWED:
            return _uninitialized_use(f"Tensor.{name}").__get__(self)
        with _allowed_call():
            value = object.__getattribute__(self, name)
        if not callable(value) or isinstance(value, TensorImpl):
            return value

        def call(*args, **kwargs):
            with _allowed_call():
                result = value(*args, **kwargs)
            if name in _CONVERSIONS and isinstance(result, TensorImpl) and result is not self:
                result = self._still_uninitialized(result)
            return result
        return call

    def _still_uninitialized(self, converted):
        """A moved or cast copy stays uninitialized (as PyTorch's __torch_function__ keeps
        the subclass), so Module.to() on a lazy module keeps its placeholders."""
        obj = _alias(type(self), converted)
        _to_placeholder_device(obj)
        obj.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_cache"})
        if self.requires_grad:
            tensorlib.Tensor.requires_grad_(obj, True)
        return obj


for _dunder in ("__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__",
                "__mul__", "__rmul__", "__imul__", "__truediv__", "__rtruediv__",
                "__itruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__pow__",
                "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__abs__", "__pos__",
                "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__or__", "__xor__",
                "__invert__", "__getitem__", "__setitem__", "__len__", "__iter__",
                "__bool__", "__float__", "__int__", "__index__", "__array__"):
    setattr(UninitializedTensorMixin, _dunder, _uninitialized_use(f"Tensor.{_dunder}"))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    r"""A parameter of a lazy module before its first forward; :meth:`materialize` makes it
    a Parameter of the inferred shape."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        obj = _alias(cls, tensorlib.empty(0, device=device, dtype=dtype))
        _to_placeholder_device(obj)
        if requires_grad:
            tensorlib.Tensor.requires_grad_(obj, True)
        return obj

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.device, self._dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(UninitializedTensorMixin, tensorlib.Tensor):
    r"""A buffer of a lazy module before its first forward; :meth:`materialize` makes it a
    Tensor of the inferred shape."""

    cls_to_become = tensorlib.Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        obj = _alias(cls, tensorlib.empty(0, device=device, dtype=dtype))
        _to_placeholder_device(obj)
        if requires_grad:
            tensorlib.Tensor.requires_grad_(obj, True)
        obj.persistent = persistent
        obj._is_buffer = True
        obj._persistent = persistent
        return obj

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass


def is_lazy(param):
    """Whether `param` is an uninitialized parameter or buffer of a lazy module."""
    return isinstance(param, UninitializedTensorMixin)
