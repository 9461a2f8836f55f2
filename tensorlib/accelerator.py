"""tensorlib.accelerator: PyTorch's device-agnostic accelerator API.

An accelerator is, as in PyTorch, a device other than the host CPU: the first available
non-cpu backend (cuda, then opencl, then third-party plugins by name) that has a device whose
backend says it does not run on the host (`Backend.runs_on_host`). An OpenCL CPU device
(PoCL) is therefore not an accelerator: on a CPU-only machine `is_available()` is False, and
the CPU backend is the better choice anyway (its BLAS and OpenMP kernels use the same cores).
`device_count()` counts the accelerator devices; the current index starts at the first of
them. `best_device()` (not in PyTorch) is the device string programs should run on; the
examples pick their device with it."""
import tensorlib.backends as _backends

__all__ = ["is_available", "current_accelerator", "device_count", "synchronize",
           "current_device_index", "current_device_idx", "set_device_index",
           "set_device_idx", "best_device"]

_PREFERRED = ("cuda", "opencl")
_current_index = None            # None: the accelerator's first device


def accelerator_indices(name):
    """The indices of backend `name`'s devices that are not the host CPU."""
    backend = _backends.get(name)
    try:
        count = backend.device_count()
    except Exception:  # noqa: BLE001 - a backend that cannot count has no usable device
        return []
    return [i for i in range(count) if not backend.runs_on_host(i)]


def _kind():
    names = [n for n in _backends.available() if n != "cpu"]
    ordered = [n for n in _PREFERRED if n in names] + sorted(n for n in names
                                                             if n not in _PREFERRED)
    for name in ordered:
        if accelerator_indices(name):
            return name
    return None


def best_device():
    """'<accelerator>:<index>' of the current accelerator device, else 'cpu'."""
    kind = _kind()
    if kind is None:
        return "cpu"
    return f"{kind}:{current_device_index()}"


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
    return 0 if kind is None else len(accelerator_indices(kind))


def _index(device):
    if device is None:
        return current_device_index()
    if isinstance(device, int):
        return device
    import tensorlib
    d = tensorlib.device(device) if isinstance(device, str) else device
    if d.type != _require():
        raise ValueError(f"{d.type} doesn't match the current accelerator {_require()}.")
    return 0 if d.index is None else d.index


def current_device_index():
    kind = _require()
    return accelerator_indices(kind)[0] if _current_index is None else _current_index


def set_device_index(device):
    """Select the accelerator device used when none is given (validated against the count)."""
    global _current_index
    kind = _require()
    index = _index(device)
    indices = accelerator_indices(kind)
    if index not in indices:
        raise RuntimeError(f"{kind}:{index} does not exist or is the host CPU: the {kind} "
                           f"backend's accelerator devices are {indices}")
    _current_index = index


current_device_idx = current_device_index
set_device_idx = set_device_index


def synchronize(device=None):
    """Wait until all work queued on the accelerator device has finished."""
    _backends.get(_require()).synchronize(_index(device))
