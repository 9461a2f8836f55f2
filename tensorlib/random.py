"""`torch.random`: seeding and the state of the default CPU generator, and `fork_rng`, which
puts the generators' states back when its block ends (a program's sampling inside does not
move the stream outside), and `get_stream`/`set_stream`: which stream CPU generators follow,
tensorlib's Philox (default) or PyTorch's (`TENSORLIB_RNG=pytorch`, ops/random_torch_stream.py)."""
import contextlib
import warnings

from tensorlib.ops import random as _ops_random
from tensorlib.ops import random_torch_stream as _ts
from tensorlib.ops.random import (default_generator, get_rng_state, initial_seed,  # noqa: F401
                                  manual_seed, seed, set_rng_state)

__all__ = ["default_generator", "fork_rng", "get_rng_state", "get_stream", "initial_seed",
           "manual_seed", "seed", "set_rng_state", "set_stream"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """Save the CPU generator's state (and the accelerator generators' of `device_type`, for
    `devices`) on entry and restore them on exit."""
    if not enabled:
        yield
        return
    import tensorlib
    module = getattr(tensorlib, device_type, None)
    if device_type == "meta":
        module = None
    if devices is None:
        count = module.device_count() if module is not None and hasattr(module, "device_count") \
            else 0
        if count > 1:
            warnings.warn(f"{device_type} reports that you have {count} available devices, and "
                          f"you have used {_caller} without explicitly specifying which devices "
                          f"are being used. For safety, we initialize *every* {device_type} "
                          f"device by default.", UserWarning, stacklevel=3)
        devices = list(range(count))
    else:
        devices = list(devices)
    cpu_state = get_rng_state()
    device_states = [module.get_rng_state(d) for d in devices] if devices else []
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for device, state in zip(devices, device_states):
            module.set_rng_state(state, device)


def get_stream():
    """The stream CPU generators follow: "philox" (tensorlib's default: one seed, the same
    numbers on every device) or "pytorch" (PyTorch's CPU Mersenne-Twister stream)."""
    return _ts.get_stream()


def set_stream(name):
    """Switch the CPU random stream at run time ("philox" or "pytorch"; the environment's
    TENSORLIB_RNG sets it at import). The CPU default generator restarts in the new stream at
    its current initial seed, as after manual_seed(initial_seed()); CPU Generators made from
    now on follow it (existing ones keep theirs). Returns the previous name."""
    previous = _ts.set_stream_name(name)
    _ops_random.default_generator._use_stream(name)
    return previous
