"""`torch.random`: seeding and the state of the default CPU generator, and `fork_rng`, which
puts the generators' states back when its block ends (a program's sampling inside does not
move the stream outside)."""
import contextlib
import warnings

from tensorlib.ops.random import (default_generator, get_rng_state, initial_seed,  # noqa: F401
                                  manual_seed, seed, set_rng_state)

__all__ = ["default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed",
           "seed", "set_rng_state"]


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
