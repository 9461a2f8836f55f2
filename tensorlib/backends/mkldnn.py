"""torch.backends.mkldnn: whether the CPU backend runs on oneDNN, and the switch that turns it
off for convolutions and GEMM in this process (`enabled = False`, or `with flags(False):`).
The CPU backend is reached through the backend registry (`vendor_library` /
`set_vendor_library`), never imported from here."""
import contextlib
import sys
import types

__all__ = ["enabled", "deterministic", "is_available", "flags", "set_flags"]

_NAME = "mkldnn"
_flags = {"enabled": True, "deterministic": False}


def _cpu():
    from tensorlib.backends._loader import LOADER
    return LOADER.load("cpu")


def is_available():
    """True when the CPU backend has oneDNN (installed and loading), even while `enabled`
    is False, as torch answers whether it was built with it."""
    return bool(_cpu().vendor_library(_NAME))


def set_flags(_enabled=None, _deterministic=None):
    """Set the switches that are given; returns the previous (enabled, deterministic)."""
    previous = (_flags["enabled"], _flags["deterministic"])
    if _enabled is not None:
        _flags["enabled"] = bool(_enabled)
        _cpu().set_vendor_library(_NAME, _flags["enabled"])
    if _deterministic is not None:
        _flags["deterministic"] = bool(_deterministic)
    return previous


@contextlib.contextmanager
def flags(enabled=False, deterministic=False):
    previous = set_flags(enabled, deterministic)
    try:
        yield
    finally:
        set_flags(*previous)


class _Module(types.ModuleType):
    """Makes `mkldnn.enabled = False` act, as torch.backends.mkldnn's module does."""

    @property
    def enabled(self):
        return _flags["enabled"]

    @enabled.setter
    def enabled(self, value):
        set_flags(_enabled=value)

    @property
    def deterministic(self):
        return _flags["deterministic"]

    @deterministic.setter
    def deterministic(self, value):
        set_flags(_deterministic=value)


sys.modules[__name__].__class__ = _Module
