"""PyTorch's legacy constructors, still common in real programs: `torch.Tensor(...)` and the
typed `FloatTensor(...)`, `LongTensor(...)`, ... (`torch.autograd.Variable`: autograd/variable.py).

- Sizes (`Tensor(2, 3)`, `Tensor(torch.Size([2, 3]))`, `Tensor(5)`) make an uninitialized
  tensor; `Tensor()` an empty one.
- Data (a sequence, a numpy array, anything with `__array__`) is copied and converted to the
  constructor's dtype: the default dtype for `Tensor`, float32 for `FloatTensor`, ...
- A tensor of the constructor's dtype is aliased (shares its storage); another dtype is a
  TypeError, as in PyTorch.
`isinstance(t, torch.FloatTensor)` holds for float32 CPU tensors, as in PyTorch."""
import numbers

import numpy as np

import tensorlib._C.dtypes as dt
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib._size import Size

_SIGNATURES = ("(*, torch.device device), (Tensor other), (tuple of ints size, *, torch.device "
               "device), (object data, *, torch.device device)")


def build(dtype, args, device=None):
    """The tensor a legacy constructor of `dtype` makes from its positional `args`."""
    import tensorlib
    if not args:
        return tensorlib.empty(0, dtype=dtype, device=device)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, TensorImpl):
            if data.dtype is not dtype:
                raise TypeError(f"expected {dtype} (got {data.dtype}): a legacy constructor "
                                f"aliases a tensor of its own dtype; use .to({dtype})")
            alias = data.detach()
            return alias if device is None else alias.to(device)
        if isinstance(data, Size):
            return tensorlib.empty(tuple(data), dtype=dtype, device=device)
        if isinstance(data, numbers.Integral) and not isinstance(data, (bool, np.bool_)):
            return tensorlib.empty((int(data),), dtype=dtype, device=device)
        if isinstance(data, (str, bytes, numbers.Number)) or not _is_data(data):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return tensorlib.tensor(data, dtype=dtype, device=device)
    for position, size in enumerate(args):
        if isinstance(size, bool) or not isinstance(size, numbers.Integral):
            raise TypeError(f"new() received an invalid combination of arguments - got "
                            f"({', '.join(type(a).__name__ for a in args)}), but expected one "
                            f"of: {_SIGNATURES}; argument 'size' must be a tuple of ints, but "
                            f"found element of type {type(size).__name__} at pos {position}")
    return tensorlib.empty(tuple(int(s) for s in args), dtype=dtype, device=device)


def _is_data(value):
    return (isinstance(value, (list, tuple, np.ndarray, np.generic))
            or hasattr(value, "__array__") or hasattr(value, "__array_interface__")
            or (hasattr(value, "__len__") and hasattr(value, "__getitem__")))


def init_tensor(self, args, device):
    """`torch.Tensor(...)`: fill the fields of a Tensor made by the type call."""
    src = build(dt.get_default_dtype(), args, device)
    self._storage, self._sizes, self._strides = src._storage, src._sizes, src._strides
    self._offset, self._dtype, self._device = src._offset, src._dtype, src._device


class _LegacyType(type):
    """The metaclass of FloatTensor & co.: calling one builds a tensor of its dtype on the CPU;
    isinstance checks dtype and device."""

    def __call__(cls, *args, device=None):
        import tensorlib
        if device is not None and tensorlib.device(device).type != "cpu":
            raise RuntimeError(f"legacy constructor {cls.__name__} makes CPU tensors; "
                               f"got device={device} (use torch.tensor(..., device=...))")
        return build(cls.dtype, args, device)

    def __instancecheck__(cls, obj):
        return isinstance(obj, TensorImpl) and obj.dtype is cls.dtype \
            and obj.device.type == "cpu" and not getattr(obj, "is_sparse", False) \
            and not getattr(obj, "is_sparse_csr", False)


def _legacy_type(name, dtype):
    return _LegacyType(name, (), {"dtype": dtype, "__module__": "tensorlib",
                                  "__doc__": f"Legacy constructor of {dtype} CPU tensors."})


FloatTensor = _legacy_type("FloatTensor", dt.float32)
DoubleTensor = _legacy_type("DoubleTensor", dt.float64)
HalfTensor = _legacy_type("HalfTensor", dt.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", dt.bfloat16)
ByteTensor = _legacy_type("ByteTensor", dt.uint8)
CharTensor = _legacy_type("CharTensor", dt.int8)
ShortTensor = _legacy_type("ShortTensor", dt.int16)
IntTensor = _legacy_type("IntTensor", dt.int32)
LongTensor = _legacy_type("LongTensor", dt.int64)
BoolTensor = _legacy_type("BoolTensor", dt.bool_)

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
           "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]

