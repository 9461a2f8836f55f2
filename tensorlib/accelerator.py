"""tensorlib.accelerator: PyTorch's device-agnostic accelerator API.

The accelerator is the first available non-cpu backend: cuda, then opencl, then third-party
plugins by name. (Here PoCL makes `opencl` an accelerator even on a CPU-only machine.)"""
import tensorlib.backends as _backends

__all__ = ["is_available", "current_accelerator", "device_count", "synchronize",
           "current_device_index", "current_device_idx", "set_device_index",
           "set_device_idx"]

_PREFERRED = ("cuda", "opencl")
_current_index = 0


def _kind():
    names = [n for n in _backends.available() if n != "cpu"]
    for name in _PREFERRED:
        if name in names:
            return name
    return sorted(names)[0] if names else None


def _require():
    kind = _kind()
    if kind is None:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return kind


def is_available():
    return _kind() is not None


def current_accelerator(check_available=False):
    """The accelerator's device type as a device (index-free), or None when there is none."""
    kind = _kind()
    if kind is None:
        return None
    import tensorlib
    return tensorlib.device(kind)


def device_count():
    kind = _kind()
    return 0 if kind is None else _backends.get(kind).device_count()


def _index(device):
    if device is None:
        return _current_index
    if isinstance(device, int):
        return device
    import tensorlib
    d = tensorlib.device(device) if isinstance(device, str) else device
    if d.type != _require():
        raise ValueError(f"{d.type} doesn't match the current accelerator {_require()}.")
    return 0 if d.index is None else d.index


def current_device_index():
    _require()
    return _current_index


def set_device_index(device):
    """Select the accelerator device used when none is given (validated against the count)."""
    global _current_index
    kind = _require()
    index = _index(device)
    if not 0 <= index < device_count():
        raise RuntimeError(f"{kind}:{index} does not exist: the {kind} backend has "
                           f"{device_count()} device(s)")
    _current_index = index


current_device_idx = current_device_index
set_device_idx = set_device_index


def synchronize(device=None):
    """Wait until all work queued on the accelerator device has finished."""
    _backends.get(_require()).synchronize(_index(device))
