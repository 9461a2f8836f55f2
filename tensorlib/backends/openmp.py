"""torch.backends.openmp for PyTorch programs: whether the CPU backend's kernels were built
with OpenMP (their shared object calls into the OpenMP runtime)."""
import functools

__all__ = ["is_available"]


@functools.lru_cache(maxsize=None)
def is_available():
    try:
        from tensorlib_cpu import fastreduce
        with open(fastreduce.__file__, "rb") as f:
            image = f.read()
    except (ImportError, OSError):
        return False
    return b"GOMP_parallel" in image or b"__kmpc_fork_call" in image
