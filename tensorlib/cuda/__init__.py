"""`tensorlib.cuda`: NVIDIA GPUs through the CUDA backend (PyCUDA), with torch.cuda's names.

Every call answers as torch's do on a machine with no GPU: `is_available()` is False (the
reason is in `tensorlib info`), `device_count()` is 0, seeding and the memory counters work,
and calls that need a GPU raise a RuntimeError that says why (no driver, no GPU, pycuda
missing). Work is queued asynchronously on the current stream; `synchronize()` waits, and
reading a value (`item`, `tolist`, `cpu`, printing) waits by itself.
`tensorlib.cuda.amp` is imported on first use."""
import importlib

from tensorlib._legacy import tensor_types as _tensor_types
from tensorlib.cuda import _state
from tensorlib.cuda.memory import (OutOfMemoryError, empty_cache, max_memory_allocated,
                                   max_memory_reserved, mem_get_info, memory_allocated,
                                   memory_reserved, memory_stats, memory_summary,
                                   reset_max_memory_allocated, reset_peak_memory_stats,
                                   set_per_process_memory_fraction)
from tensorlib.cuda.random import (get_rng_state, get_rng_state_all, initial_seed, manual_seed,
                                   manual_seed_all, seed, seed_all, set_rng_state,
                                   set_rng_state_all)
from tensorlib.cuda.streams import (Event, Stream, StreamContext, current_stream,
                                    default_stream, set_stream, stream)

__all__ = ["is_available", "is_initialized", "init", "device_count", "current_device",
           "set_device", "device", "device_of", "get_device_name", "get_device_properties",
           "get_device_capability", "get_arch_list", "is_bf16_supported", "synchronize",
           "OutOfMemoryError", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_stats", "reset_peak_memory_stats",
           "reset_max_memory_allocated", "empty_cache", "memory_summary", "mem_get_info",
           "set_per_process_memory_fraction", "manual_seed", "manual_seed_all", "seed",
           "seed_all", "initial_seed", "get_rng_state", "set_rng_state", "get_rng_state_all",
           "set_rng_state_all", "Stream", "Event", "StreamContext", "current_stream",
           "default_stream", "set_stream", "stream", "amp", "FloatTensor", "DoubleTensor",
           "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor",
           "IntTensor", "LongTensor", "BoolTensor"]

# the typed classes (torch.cuda.FloatTensor, ...): constructors on the GPU, and isinstance
# checks that a tensor has that dtype on a CUDA device
globals().update(_tensor_types("cuda"))


def is_available():
    """True when the CUDA backend has a usable GPU (never raises)."""
    return _state.available()


def is_initialized():
    """Whether a call has set up the CUDA backend in this process."""
    return _state.initialized()


def init():
    """Set up the CUDA backend now (RuntimeError saying why when there is no GPU)."""
    _state.backend()


def device_count():
    """The number of usable GPUs: 0 when there is no driver, GPU or pycuda."""
    if not _state.available():
        return 0
    return _state.backend().device_count()


def current_device():
    return _state.current()


def set_device(device):
    """Make `device` current; a negative ordinal (torch's 'no device') does nothing."""
    if isinstance(device, int) and not isinstance(device, bool) and device < 0:
        return
    i = _state.index(device, optional=False)
    if i >= 0:
        _state.backend().set_device(i)


class device:
    """`with tensorlib.cuda.device(1):` -- the current device inside; None or -1 does
    nothing, as in torch."""

    def __init__(self, device):
        negative = device is None or (isinstance(device, int) and device < 0)
        self.idx = -1 if negative else _state.index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = current_device()
            if self.prev_idx != self.idx:
                set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.prev_idx >= 0 and self.prev_idx != self.idx:
            set_device(self.prev_idx)
        return False


class device_of(device):
    """The device context of a tensor's device (nothing for a CPU tensor)."""

    def __init__(self, obj):
        d = obj.device
        super().__init__(d.index if d.type == "cuda" else -1)


def get_device_properties(device=None):
    """name, major, minor, total_memory, multi_processor_count, ... of the GPU."""
    return _state.backend().device_properties(_state.index(device))


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    p = get_device_properties(device)
    return (p.major, p.minor)


def get_arch_list():
    """The architectures kernels are compiled for: the GPUs' own (compiled at run time);
    [] without CUDA, as in torch."""
    if not _state.available():
        return []
    return sorted({f"sm_{p.major}{p.minor}" for p in
                   (get_device_properties(i) for i in range(device_count()))})


def is_bf16_supported(including_emulation=True):
    """bfloat16 kernels need compute capability 8.0 (Ampere); False without a GPU."""
    if not _state.available():
        return False
    return get_device_capability()[0] >= 8 or bool(including_emulation)


def synchronize(device=None):
    """Wait for all work queued on the device."""
    _state.backend().synchronize(_state.index(device))


def __getattr__(name):
    # `tensorlib.cuda.amp` (autocast, GradScaler) is its own module, imported on first use
    if name == "amp":
        return importlib.import_module("tensorlib.cuda.amp")
    raise AttributeError(f"module 'tensorlib.cuda' has no attribute '{name}'")
