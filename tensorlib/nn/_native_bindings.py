"""torch._C._nn, the native nn bindings, for the names libraries call directly: `_parse_to`
(kornia's augmentations read .to()'s arguments with it to follow a module's moves)."""
import types

import tensorlib
from tensorlib import _C
from tensorlib.nn.modules.module import _parse_to


def parse_to(*args, **kwargs):
    """(device, dtype, non_blocking, memory_format) of Tensor.to / Module.to's arguments, the
    device as a device object (None for what was not given)."""
    if "copy" in kwargs:
        raise RuntimeError(".to() does not accept copy argument")
    if "dtype" in kwargs and any(isinstance(a, tensorlib.dtype) for a in args):
        raise TypeError("to() received an invalid combination of arguments: dtype given both "
                        "positionally and as a keyword")
    memory_format = kwargs.get("memory_format")
    device, dtype, non_blocking = _parse_to(*args, **kwargs)
    return (None if device is None else tensorlib.device(device)), dtype, non_blocking, \
        memory_format


_nn = types.ModuleType("torch._C._nn", __doc__)
_nn._parse_to = parse_to
_C._nn = _nn
