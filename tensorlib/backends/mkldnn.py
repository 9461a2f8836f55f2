"""torch.backends.mkldnn for PyTorch programs: tensorlib does not link oneDNN, so
is_available() is False; `enabled` is kept as set."""
import contextlib

enabled = True
deterministic = False

__all__ = ["enabled", "deterministic", "is_available", "flags"]


def is_available():
    return False


@contextlib.contextmanager
def flags(enabled=False, deterministic=False):
    module = globals()
    saved = {n: module[n] for n in ("enabled", "deterministic")}
    module.update(enabled=enabled, deterministic=deterministic)
    try:
        yield
    finally:
        module.update(saved)
