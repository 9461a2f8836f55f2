"""torch.backends.cudnn for PyTorch programs: the switches they set, read back as set.

tensorlib has no cuDNN: is_available() is False and version() None, so the switches change
nothing; programs that set `benchmark = True` or `deterministic = True` run unchanged."""
import contextlib

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True

__all__ = ["enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32",
           "is_available", "version", "is_acceptable", "flags"]


def is_available():
    """Whether cuDNN can be used: never, tensorlib does not link it."""
    return False


def version():
    """cuDNN's version, None when it is not there (as PyTorch's without cuDNN)."""
    return None


def is_acceptable(tensor):
    return False


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True):
    """Set the switches for the block, then restore them (torch.backends.cudnn.flags)."""
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    module = globals()
    saved = {n: module[n] for n in names}
    module.update(enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
                  deterministic=deterministic, allow_tf32=allow_tf32)
    try:
        yield
    finally:
        module.update(saved)
