"""Parameter and Buffer: tensors that a Module registers when they are assigned to it.

A Parameter is a Tensor subclass that shares its data's storage (no copy) and is a leaf that
requires grad; ops on it return plain Tensors, as in PyTorch."""
import tensorlib
from tensorlib._C.tensor_impl import TensorImpl

__all__ = ["Parameter", "Buffer", "is_lazy"]


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


class _BufferMeta(type):
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

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = tensorlib.empty(0)
        t = data.detach()
        t._is_buffer = True
        t._persistent = persistent
        return t


def is_lazy(param):
    """tensorlib has no lazy (uninitialized) parameters."""
    return False
