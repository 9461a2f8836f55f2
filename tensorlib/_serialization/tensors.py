"""Tensors to bytes and back, shared by every format.

Saving keys storages by identity: each storage's bytes (the whole storage) are written once,
and each tensor is (storage, dtype, shape, stride, offset). Loading makes one host buffer per
storage, moves it to its device once (map_location), and rebuilds every tensor as a view of
it, so tensors that shared a storage when saved share one after loading.
"""
import numpy as np

import tensorlib
import tensorlib._C.dtypes as dt
from tensorlib._C.tensor_impl import host_array, wrap
from tensorlib._serialization.errors import CheckpointError

DTYPE_NAMES = {d.name: d for d in dt.all_dtypes}


def storage_bytes(tensor):
    """A C-contiguous uint8 numpy array of the tensor's whole storage (no copy on cpu)."""
    storage = tensor._storage
    raw = wrap(storage, (storage._nbytes,), (1,), 0, dt.uint8)
    if raw._device.type != "cpu":
        raw = raw.cpu()
    return host_array(raw)


def dtype_by_name(name):
    try:
        return DTYPE_NAMES[name]
    except (KeyError, TypeError):
        raise CheckpointError(f"unknown dtype {name!r} in checkpoint") from None


def check_layout(nbytes, dtype, shape, stride, offset):
    """Raise CheckpointError unless the view lies inside a storage of `nbytes` bytes."""
    if any(not isinstance(v, int) or isinstance(v, bool) or v < 0
           for v in (*shape, *stride, offset)) or len(shape) != len(stride):
        raise CheckpointError(f"bad tensor layout in checkpoint: shape {shape}, stride "
                              f"{stride}, offset {offset}")
    if 0 in shape:
        return
    last = offset + sum((n - 1) * s for n, s in zip(shape, stride))
    if (last + 1) * dtype.itemsize > nbytes:
        raise CheckpointError(f"tensor of shape {list(shape)}, stride {list(stride)}, offset "
                              f"{offset} ({dtype.name}) reaches past the end of its storage "
                              f"of {nbytes} bytes: the checkpoint is corrupted")


class StorageTable:
    """Host buffers of the loaded storages and their per-(storage, dtype) bases on the
    target device."""

    def __init__(self, map_location):
        self.map_location = map_location
        self.buffers = {}         # key -> (uint8 numpy array, location string)
        self.bases = {}           # (key, dtype name) -> 1-D tensor over the whole storage

    def add(self, key, array, location):
        self.buffers[key] = (array, location)

    def tensor(self, key, dtype, shape, stride, offset, requires_grad=False):
        try:
            array, location = self.buffers[key]
        except KeyError:
            raise CheckpointError(f"checkpoint refers to a missing storage {key!r}") from None
        shape, stride = tuple(shape), tuple(stride)
        check_layout(array.nbytes, dtype, shape, stride, offset)
        base = self.bases.get((key, dtype.name))
        if base is None:
            usable = array.nbytes - array.nbytes % dtype.itemsize
            base = tensorlib.from_numpy(array[:usable].view(dtype.np))
            base = self._place(base, location)
            self.bases[(key, dtype.name)] = base
        t = wrap(base._storage, shape, stride, offset, dtype)
        if requires_grad:
            t.requires_grad_(True)
        return t

    def _place(self, base, location):
        target = map_device(self.map_location, location, base)
        if isinstance(target, tensorlib.Tensor):
            return target
        if str(target) == "cpu":
            return base
        return base.to(target)


def map_device(map_location, location, storage):
    """Where a storage saved on `location` goes: None keeps it there (as PyTorch does), a
    device or string moves everything there, a dict maps location strings, and a callable
    `fn(storage, location)` returns a tensor, a device, or None for the saved location."""
    if map_location is None:
        target = location
    elif isinstance(map_location, dict):
        target = map_location.get(location, location)
        if not isinstance(target, str):
            target = str(target)
    elif callable(map_location) and not isinstance(map_location, (str, tensorlib.device)):
        result = map_location(storage, location)
        if result is None:
            target = location
        elif isinstance(result, tensorlib.Tensor):
            return result
        else:
            target = result
    else:
        target = map_location
    target = str(target)
    if target == "cpu":
        return "cpu"
    device_type = target.split(":")[0]
    reason = tensorlib.backends.why_unavailable(device_type) if device_type in \
        [r.name for r in tensorlib.backends.list()] else f"no backend named {device_type!r}"
    if reason:
        raise CheckpointError(f"Attempting to deserialize object on device {target!r}, but "
                              f"it is unavailable ({reason}). Pass map_location='cpu' to load "
                              f"onto the CPU.")
    return target


def host_buffer(nbytes):
    """A writable, 64-byte aligned uint8 array of nbytes."""
    raw = np.empty(nbytes + 64, dtype=np.uint8)
    start = (-raw.ctypes.data) % 64
    return raw[start:start + nbytes]


def numpy_dtype(name):
    """A numpy dtype from the name saved for it (plain dtype strings, or 'bfloat16' and the
    other ml_dtypes names)."""
    import ml_dtypes
    if isinstance(name, str) and hasattr(ml_dtypes, name):
        return np.dtype(getattr(ml_dtypes, name))
    try:
        d = np.dtype(name)
    except TypeError:
        raise CheckpointError(f"unknown numpy dtype {name!r} in checkpoint") from None
    if d.hasobject:
        raise CheckpointError(f"numpy dtype {name!r} holds Python objects; not loadable")
    return d


def numpy_dtype_name(d):
    if d.kind == "V" and d.names is None and d.type.__module__.startswith("ml_dtypes"):
        return d.type.__name__
    return d.str

