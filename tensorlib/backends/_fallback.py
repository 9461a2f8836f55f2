"""The opt-in CPU fallback: a primitive a backend lacks runs on the CPU, its tensor arguments
copied there and the outputs copied back, with one warning per (op, device type)."""
import os
import warnings

from tensorlib._C import dispatch
from tensorlib.backends.interface import OUTPUT_COUNTS

_warned = set()
_enabled = False


def _cpu_kernel(op, dev):
    import tensorlib
    cpu = tensorlib.device("cpu")
    from tensorlib._C.device import canonical
    kernel = canonical(cpu)._kernels.get(op)
    if kernel is None:
        return None
    if (op, dev.type) not in _warned:
        _warned.add((op, dev.type))
        warnings.warn(f"The operator '{op}' is not implemented for the '{dev.type}' backend; "
                      f"running it on the CPU (TENSORLIB_CPU_FALLBACK is on).", stacklevel=3)

    n_outputs = OUTPUT_COUNTS.get(op, 1)

    def run_on_cpu(*args, **kwargs):
        moved = [a.cpu() if isinstance(a, tensorlib.Tensor) else a for a in args]
        kernel(*moved, **kwargs)
        for original, host in zip(args[:n_outputs], moved[:n_outputs]):
            if host is not original:      # through the backend's own copy: no recursion
                original._device._backend.copy_from_host(original, host.numpy())
    return run_on_cpu


def set_cpu_fallback(enabled):
    """Run primitives a backend lacks on the CPU (copying in and out) instead of raising."""
    global _enabled
    _enabled = bool(enabled)
    dispatch.set_fallback(_cpu_kernel if _enabled else None)


def cpu_fallback_enabled():
    return _enabled


set_cpu_fallback(os.environ.get("TENSORLIB_CPU_FALLBACK", "0") == "1")
