"""The CUDA caching allocator's statistics (torch.cuda.memory). Without a GPU the counters
read 0 and the cache calls do nothing, as in torch; `mem_get_info` asks the driver, so it
needs one."""
from tensorlib.cuda import _state

__all__ = ["OutOfMemoryError", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_stats", "reset_peak_memory_stats",
           "reset_max_memory_allocated", "empty_cache", "memory_summary", "mem_get_info",
           "set_per_process_memory_fraction"]


class OutOfMemoryError(RuntimeError):
    """The CUDA allocator could not find room, even after emptying its cache."""


def memory_stats(device=None):
    """{allocated_bytes, peak_allocated_bytes, reserved_bytes, peak_reserved_bytes,
    active_blocks, cached_blocks, allocations, frees, alloc_retries, ooms}; empty when CUDA
    was never initialised (torch returns an empty dict then too)."""
    if not (_state.available() and _state.initialized()):
        return {}
    return _state.backend().memory_stats(_state.index(device))


def _stat(name, device):
    return memory_stats(device).get(name, 0)


def memory_allocated(device=None):
    """Bytes held by live tensors on the device."""
    return _stat("allocated_bytes", device)


def max_memory_allocated(device=None):
    return _stat("peak_allocated_bytes", device)


def memory_reserved(device=None):
    """Bytes the caching allocator holds from the driver (live blocks + cached ones)."""
    return _stat("reserved_bytes", device)


def max_memory_reserved(device=None):
    return _stat("peak_reserved_bytes", device)


def reset_peak_memory_stats(device=None):
    if _state.available() and _state.initialized():
        _state.backend().reset_peak_memory_stats(_state.index(device))


reset_max_memory_allocated = reset_peak_memory_stats


def empty_cache():
    """Give cached, unused blocks back to the driver (blocks another stream may still use
    stay until that stream's work is done)."""
    if _state.available() and _state.initialized():
        _state.backend().empty_cache()


def mem_get_info(device=None):
    """(free, total) bytes of device memory, from the driver."""
    return _state.backend().mem_get_info(_state.index(device))


def set_per_process_memory_fraction(fraction, device=None):
    """Cap the allocator at `fraction` of the device's memory (OutOfMemoryError past it)."""
    if not 0 <= fraction <= 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _state.backend().set_memory_fraction(fraction, _state.index(device))


def memory_summary(device=None, abbreviated=False):
    """A printable table of the allocator's counters for the device."""
    stats = memory_stats(device)
    rows = [("Allocated memory", "allocated_bytes", "peak_allocated_bytes"),
            ("Reserved memory", "reserved_bytes", "peak_reserved_bytes")]
    width = 75
    where = "no CUDA device" if not stats else f"device {_state.index(device)}"
    lines = ["=" * width, f" tensorlib CUDA memory summary, {where}".ljust(width), "-" * width,
             f" {'Metric':<28}{'Cur usage':>22}{'Peak usage':>22}", "-" * width]
    for label, cur, peak in rows:
        lines.append(f" {label:<28}{_fmt(stats.get(cur, 0)):>22}{_fmt(stats.get(peak, 0)):>22}")
    counts = ("allocations", "frees", "active_blocks", "cached_blocks", "alloc_retries", "ooms")
    if not abbreviated:
        lines.append("-" * width)
        lines += [f" {name.replace('_', ' ').capitalize():<28}{stats.get(name, 0):>22}"
                  for name in counts]
    lines.append("=" * width)
    return "\n".join(lines) + "\n"


def _fmt(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
