"""torch.backends.mkl for PyTorch programs: whether the CPU BLAS (numpy's) is Intel MKL."""
import functools

__all__ = ["is_available"]


@functools.lru_cache(maxsize=None)
def is_available():
    import numpy as np
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except Exception:                     # an older numpy without mode="dicts"
        return False
    return "mkl" in str(blas.get("name", "")).lower()
