"""The dispatch table: (op, device type) -> kernel. Each backend's table is a dict bound to its
canonical device objects, so a lookup on the hot path is one dict access."""
from tensorlib._C.device cimport device

cdef dict _tables = {}              # device type -> {op name: kernel}
cdef object _fallback = None        # callable(op, device) -> kernel running on the cpu, or None


def table(str device_type):
    """The kernel dict of a device type (created empty; backends fill it in register())."""
    t = _tables.get(device_type)
    if t is None:
        t = _tables[device_type] = {}
    return t


def register_kernel(str device_type, str op, kernel):
    table(device_type)[op] = kernel


def set_fallback(factory):
    """Install the opt-in CPU fallback factory (tensorlib.backends.set_cpu_fallback)."""
    global _fallback
    _fallback = factory


cpdef object lookup(str op, device dev):
    """The kernel for `op` on `dev`; NotImplementedError (a RuntimeError) naming both if the
    backend lacks it and the CPU fallback is off."""
    k = dev._kernels.get(op)
    if k is not None:
        return k
    if _fallback is not None:
        k = _fallback(op, dev)
        if k is not None:
            return k
    raise NotImplementedError(
        f"The operator '{op}' is not implemented for the '{dev.type}' backend. "
        f"Set TENSORLIB_CPU_FALLBACK=1 (or tensorlib.backends.set_cpu_fallback(True)) "
        f"to run it on the CPU instead.")


cpdef bint has_kernel(str op, device dev):
    return op in dev._kernels


def devices_with(str op):
    return sorted(kind for kind, t in _tables.items() if op in t)
