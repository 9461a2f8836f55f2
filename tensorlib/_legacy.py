"""PyTorch's legacy constructors: `Tensor(...)`, `FloatTensor(...)` and the other typed
tensor classes, and `Tensor.new(...)`. Each reads its arguments as sizes (ints or a Size:
an uninitialised tensor), data (a sequence or numpy array: a copy in the fixed dtype), a
tensor (an alias sharing its memory) or nothing (an empty tensor)."""
import numbers

import numpy as np

import tensorlib._C.dtypes as dt
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib._default_device import factory_device
from tensorlib._size import Size

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
           "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]


def _is_size(x):
    return isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_))


def legacy_new(dtype, device, args, kwargs, exact_dtype):
    """The tensor a legacy constructor builds in `dtype` on `device` (None: the default);
    exact_dtype: a tensor argument must already have `dtype` (typed classes, Tensor.new)."""
    from tensorlib.ops.creation import empty, is_sequence, tensor
    kwargs = dict(kwargs)
    if "device" in kwargs:
        device = kwargs.pop("device")
    size = kwargs.pop("size", None)
    if kwargs:
        raise TypeError(f"new() received an invalid combination of arguments - got an "
                        f"unexpected keyword argument '{next(iter(kwargs))}'")
    if size is not None:
        if args:
            raise TypeError("new() received an invalid combination of arguments - got both "
                            "positional arguments and 'size'")
        args = tuple(size)
    if not args:
        return empty(0, dtype=dtype, device=device)
    first = args[0]
    if len(args) == 1 and isinstance(first, TensorImpl):
        if exact_dtype and first._dtype is not dtype:
            raise TypeError(f"expected {dtype} (got {first._dtype})")
        if device is not None and factory_device(device) != first._device:
            raise RuntimeError(f"Attempted to create a tensor on device {device} from a "
                               f"tensor on device {first._device}")
        return first[...]                       # shares memory, as PyTorch's alias()
    if len(args) == 1 and isinstance(first, Size):
        args = tuple(first)
    if all(_is_size(a) for a in args):
        sizes = tuple(int(a) for a in args)
        for s in sizes:
            if s < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                                   f"{list(sizes)}")
        return empty(sizes, dtype=dtype, device=device)
    if len(args) > 1:
        bad = next(a for a in args if not _is_size(a))
        raise TypeError(f"new(): argument 'size' must be tuple of ints, but found element of "
                        f"type {type(bad).__name__}")
    if isinstance(first, np.ndarray) or not isinstance(first, np.generic) and is_sequence(first):
        return tensor(first, dtype=dtype, device=device)
    raise TypeError(f"new(): data must be a sequence (got {_type_name(first)})")


def _type_name(x):
    cls = type(x)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


class LegacyConstructorMeta(type):
    """Tensor's metaclass: `Tensor(...)` runs the legacy constructor in the default dtype;
    everything else about the class stays `type`'s (instances are made by the core, not
    through this call)."""

    def __call__(cls, *args, **kwargs):
        if cls.__new__ is not TensorImpl.__new__:        # Parameter and its kind
            return super().__call__(*args, **kwargs)
        t = legacy_new(dt.get_default_dtype(), None, args, kwargs, exact_dtype=False)
        if cls is not t.__class__:
            t = _as_subclass(t, cls)
            if cls.__init__ is not object.__init__:
                cls.__init__(t, *args, **kwargs)
        return t


def _as_subclass(t, cls):
    """An instance of Tensor subclass `cls` over t's memory (what Tensor(...) gives a
    subclass that defines no __new__)."""
    from tensorlib._tensor_subclass import refuse_dispatch_subclass
    refuse_dispatch_subclass(cls)
    obj = TensorImpl.__new__(cls)
    obj._storage, obj._sizes, obj._strides = t._storage, t._sizes, t._strides
    obj._offset, obj._dtype, obj._device = t._offset, t._dtype, t._device
    obj._is_inference = t._is_inference
    return obj


def new(self, *args, **kwargs):
    """Tensor.new: the legacy constructor in this tensor's dtype and device."""
    return legacy_new(self._dtype, self._device, args, kwargs, exact_dtype=True)


class TensorTypeMeta(type):
    """The metaclass of FloatTensor, cuda.FloatTensor and the like: calling one constructs in
    its dtype on its device type, and isinstance(t, FloatTensor) asks whether t is a float32
    tensor on that device type (as in PyTorch)."""

    def __call__(cls, *args, **kwargs):
        if "device" in kwargs and factory_device(kwargs["device"]).type != cls.device_type:
            raise RuntimeError(f"legacy constructor expects device type: {cls.device_type} "
                               f"but device type: {factory_device(kwargs['device']).type} was "
                               f"passed")
        return legacy_new(cls.dtype, cls.device_type, args, kwargs, exact_dtype=True)

    def __instancecheck__(cls, obj):
        return (isinstance(obj, TensorImpl) and obj._dtype is cls.dtype
                and obj._device.type == cls.device_type
                and not getattr(obj, "is_sparse", False)
                and not getattr(obj, "is_sparse_csr", False))

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _tensor_type(dtype, device_type="cpu"):
    name = f"{dtype.scalar_name}Tensor"
    module = "tensorlib" if device_type == "cpu" else f"tensorlib.{device_type}"
    return TensorTypeMeta(name, (), {"dtype": dtype, "device_type": device_type,
                                     "is_cuda": device_type == "cuda", "is_sparse": False,
                                     "__module__": module})


_DTYPES = {"FloatTensor": dt.float32, "DoubleTensor": dt.float64, "HalfTensor": dt.float16,
           "BFloat16Tensor": dt.bfloat16, "ByteTensor": dt.uint8, "CharTensor": dt.int8,
           "ShortTensor": dt.int16, "IntTensor": dt.int32, "LongTensor": dt.int64,
           "BoolTensor": dt.bool_}


def tensor_types(device_type):
    """{name: class} of the ten typed tensor classes on another device type (tensorlib.cuda's
    FloatTensor and the like)."""
    return {name: _tensor_type(dtype, device_type) for name, dtype in _DTYPES.items()}


FloatTensor = _tensor_type(dt.float32)
DoubleTensor = _tensor_type(dt.float64)
HalfTensor = _tensor_type(dt.float16)
BFloat16Tensor = _tensor_type(dt.bfloat16)
ByteTensor = _tensor_type(dt.uint8)
CharTensor = _tensor_type(dt.int8)
ShortTensor = _tensor_type(dt.int16)
IntTensor = _tensor_type(dt.int32)
LongTensor = _tensor_type(dt.int64)
BoolTensor = _tensor_type(dt.bool_)
