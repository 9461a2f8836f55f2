"""torch.sparse.FloatTensor and its kin: the legacy constructors GNN code still calls.
`FloatTensor(indices, values, size)` keeps the values' dtype (as PyTorch's does);
`FloatTensor(*sizes)` is an empty sparse tensor of the class's dtype. isinstance checks the
layout and the dtype."""
import tensorlib._C.dtypes as dt
from tensorlib._size import Size
from tensorlib._tensor import Tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
           "IntTensor", "ShortTensor", "CharTensor", "ByteTensor"]


class _LegacyType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.is_sparse and obj.dtype is cls._dtype

    def __call__(cls, *args, device=None):
        import tensorlib
        from tensorlib.sparse._coo import sparse_coo_tensor
        if len(args) in (2, 3) and isinstance(args[0], Tensor) and isinstance(args[1], Tensor):
            return sparse_coo_tensor(*args, device=device)
        if len(args) == 1 and isinstance(args[0], (tuple, list, Size)):
            args = tuple(args[0])
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            sizes = args if args else (0,)
            indices = tensorlib.zeros((len(sizes), 0), dtype=dt.int64, device=device)
            values = tensorlib.zeros(0, dtype=cls._dtype, device=device)
            return sparse_coo_tensor(indices, values, sizes)
        raise TypeError(f"new() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)}), but expected one of: "
                        f"(*, device), (Tensor indices, Tensor values, *, device), (Tensor "
                        f"indices, Tensor values, tuple of ints size, *, device), (tuple of "
                        f"ints size, *, device)")


def _legacy(name, dtype):
    return _LegacyType(name, (), {"_dtype": dtype, "__module__": "tensorlib.sparse",
                                  "__doc__": f"A sparse COO tensor of {dtype} (legacy)."})


FloatTensor = _legacy("FloatTensor", dt.float32)
DoubleTensor = _legacy("DoubleTensor", dt.float64)
HalfTensor = _legacy("HalfTensor", dt.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", dt.bfloat16)
LongTensor = _legacy("LongTensor", dt.int64)
IntTensor = _legacy("IntTensor", dt.int32)
ShortTensor = _legacy("ShortTensor", dt.int16)
CharTensor = _legacy("CharTensor", dt.int8)
ByteTensor = _legacy("ByteTensor", dt.uint8)
