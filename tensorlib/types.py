"""torch.types: the type aliases annotations use (`_size`, `_device`, `Number`, `Device`...).
tensorlib has no symbolic sizes, so the Sym* alternatives of PyTorch's aliases are plain
int/float/bool here."""
import os
from builtins import (bool as _bool, bytes as _bytes, complex as _complex,  # noqa: F401
                      float as _float, int as _int, str as _str)
from collections.abc import Sequence
from typing import IO, Union

from tensorlib._C.device import device as _device
from tensorlib._C.dtypes import dtype as _dtype
from tensorlib._layout import layout as _layout  # noqa: F401
from tensorlib._size import Size
from tensorlib._tensor import Tensor
from tensorlib.library.dispatch_keys import DispatchKey

__all__ = ["Number", "Device", "FileLike"]

_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Union[Tensor, None]]]
_size = Union[Size, list[int], tuple[int, ...]]
_symsize = Union[Size, Sequence[int]]
_dispatchkey = Union[str, DispatchKey]
IntLikeType = int
FloatLikeType = float
BoolLikeType = bool
Number = Union[int, float, bool]
_Number = (int, float, bool)
FileLike = Union[str, os.PathLike, IO[bytes]]
Device = Union[_device, str, int, None]
