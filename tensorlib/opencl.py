"""`tensorlib.opencl`: the OpenCL devices, as `torch.cuda` is for CUDA.

Devices are `opencl:0`, `opencl:1`, ... over all platforms (see `tensorlib_opencl.device`;
TENSORLIB_OPENCL_DEVICE picks them). Work is queued asynchronously; `synchronize()` waits, and
reading a value (`item`, `tolist`, `cpu`, printing) waits by itself."""
import tensorlib.backends as _backends

__all__ = ["is_available", "device_count", "get_device_name", "current_device", "synchronize",
           "manual_seed", "manual_seed_all", "seed", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "memory_stats", "empty_cache", "set_per_process_memory_fraction"]


def _backend():
    return _backends.get("opencl")


def _index(device):
    if device is None:
        return 0
    if isinstance(device, int):
        return device
    from tensorlib._C.device import canonical
    return canonical(device).index


def is_available():
    return _backends.why_unavailable("opencl") is None


def device_count():
    return _backend().device_count() if is_available() else 0


def get_device_name(device=None):
    return _backend().device_name(_index(device))


def current_device():
    return 0


def synchronize(device=None):
    _backend().synchronize(None if device is None else _index(device))


def manual_seed(seed):
    """Seed the OpenCL default generator (one per device type, as for every backend)."""
    from tensorlib.ops import random as _random
    _random._default("opencl").manual_seed(seed)


manual_seed_all = manual_seed


def seed():
    from tensorlib.ops import random as _random
    _random._default("opencl").seed()


def memory_stats(device=None):
    return _backend().memory_stats(_index(device))


def memory_allocated(device=None):
    """Bytes held by live tensors on the device."""
    return memory_stats(device)["allocated_bytes"]


def max_memory_allocated(device=None):
    return memory_stats(device)["peak_allocated_bytes"]


def memory_reserved(device=None):
    """Bytes the caching allocator holds from the driver (live tensors + cached blocks)."""
    return memory_stats(device)["reserved_bytes"]


def empty_cache():
    """Give cached, unused blocks back to the driver."""
    if is_available():
        _backend().empty_cache()


def set_per_process_memory_fraction(fraction, device=None):
    """Limit the allocator to `fraction` of the device's memory (OutOfMemoryError past it)."""
    if not 0 <= fraction <= 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    st = _backend().state(_index(device))
    st.allocator.limit = int(fraction * st.dev.global_mem)
