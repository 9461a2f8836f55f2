"""When the CPU kernels write their outputs with non-temporal (streaming) stores.

A streamed store skips the read of each line it writes (one memory pass saved of three on a
read-one-write-one kernel) but also leaves the line out of the caches. That wins only for
outputs that would not have stayed cached anyway: past the last-level cache. Measured:
- AMD EPYC Zen 4 (32 MB L3, 2 cores): the compiled chain was faster with plain stores at
  every size tried (2 threads, 4M floats 1.10 against 1.52 ms streamed, 16M 4.72 against
  8.25). layer_norm's streamed 16 MB output was measured 1.5x faster when it was written
  (the machine was not recorded) and has run streamed in every AMD measurement since
  (1.83x PyTorch in the sixth session's idle run); not compared with plain stores there.
- Intel Xeon (AVX-512/AMX, a KVM guest reporting a 480 MB L3, 2 cores): layer_norm
  4096x1024 at 2 threads 992 us streamed against 819 plain (PyTorch 826), the 16 MB output
  staying in the L3 for the next op.
So compiled kernels stream past 3/4 of the last-level cache (glibc's memcpy rule) and never
on AMD; layer_norm streams past the larger of 8 MB and that, and on AMD from 8 MB."""
import os

from tensorlib_cpu.blas_choice import cpu_vendor

__all__ = ["last_level_cache_bytes", "COMPILED_STREAM_MIN_BYTES",
           "LAYER_NORM_STREAM_MIN_BYTES"]


def last_level_cache_bytes():
    """The size of the largest CPU cache sysfs lists (0 where it lists none)."""
    root = "/sys/devices/system/cpu/cpu0/cache"
    best = 0
    try:
        entries = [e for e in os.listdir(root) if e.startswith("index")]
    except OSError:
        return 0
    for entry in entries:
        try:
            with open(os.path.join(root, entry, "size")) as f:
                text = f.read().strip().upper()
            scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
            best = max(best, int(text.rstrip("KMG")) * scale)
        except (OSError, ValueError):
            continue
    return best


_AMD = cpu_vendor() == "AuthenticAMD"
_PAST_CACHE = last_level_cache_bytes() * 3 // 4
# 0: never streamed
COMPILED_STREAM_MIN_BYTES = 0 if _AMD else _PAST_CACHE
LAYER_NORM_STREAM_MIN_BYTES = 8 << 20 if _AMD else max(8 << 20, _PAST_CACHE)
