"""torch.backends.cpu for PyTorch programs: `get_cpu_capability()`, the widest vector
instruction set the CPU kernels use (libraries pick faster paths by it: torchvision's uint8
resize). tensorlib's CPU kernels are numpy's ufuncs and C loops compiled for it, so this is
the set numpy dispatches to on this machine."""
import functools

__all__ = ["get_cpu_capability"]


@functools.lru_cache(maxsize=None)
def get_cpu_capability():
    """"AVX512" or "AVX2" on x86-64 with them (PyTorch's names), else "DEFAULT"."""
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:                   # numpy 1.x
        from numpy.core import _multiarray_umath as umath
    features = getattr(umath, "__cpu_features__", {})
    if features.get("AVX512_SKX"):
        return "AVX512"
    if features.get("AVX2"):
        return "AVX2"
    return "DEFAULT"
