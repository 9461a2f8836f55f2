"""set_default_device/get_default_device: the device factories use when given none.

The factories (`ops/creation.py`, `ops/random.py`) resolve their `device=` argument with
`factory_device`, so `None` means the default set here (cpu until it is changed)."""
from tensorlib._C.device import canonical, set_default_hooks

__all__ = ["set_default_device", "get_default_device"]

_default = None          # None: cpu, without a lookup on the factories' path


def set_default_device(device):
    """Make factories allocate on `device` (None restores cpu). The device must exist now:
    a missing backend raises here, not at the next factory call."""
    global _default
    _default = None if device is None else canonical(device)
    if _default is not None and _default.type == "cpu":
        _default = None


def get_default_device():
    return canonical("cpu") if _default is None else _default


def factory_device(spec):
    """A factory's `device=` argument as a canonical device."""
    return canonical(_default if spec is None else spec)


set_default_hooks(lambda: _default, set_default_device)      # `with tensorlib.device(...):`
