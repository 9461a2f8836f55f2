"""Seeding the CUDA generator (torch.cuda.random). tensorlib has one counter-based Philox
generator per device type, so these work, and agree with the CPU's numbers, whether or not a
GPU is present."""
from tensorlib.ops import random as _random

__all__ = ["manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
           "get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all"]


def _generator():
    return _random._default("cuda")


def manual_seed(seed):
    """Seed the CUDA generator (every CUDA device shares it)."""
    _generator().manual_seed(int(seed))


manual_seed_all = manual_seed


def seed():
    """Seed the CUDA generator from the OS's entropy."""
    _generator().seed()


seed_all = seed


def initial_seed():
    return _generator().initial_seed()


def get_rng_state(device="cuda"):
    return _generator().get_state()


def set_rng_state(new_state, device="cuda"):
    _generator().set_state(new_state)


def get_rng_state_all():
    from tensorlib.cuda import device_count
    return [get_rng_state() for _ in range(device_count())]


def set_rng_state_all(new_states):
    for state in new_states:
        set_rng_state(state)
