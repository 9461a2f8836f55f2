"""Seeding a child process's host-side random generators (Python's `random` and numpy's
global one, when numpy is installed), as PyTorch's DataLoader workers do: numpy lives here,
below `utils.data`, which computes only with tensorlib ops."""
import random


def seed_host_generators(seed):
    """Seed `random` with `seed` and numpy's global RNG with its low 32 bits."""
    random.seed(seed)
    try:
        import numpy as np
    except ImportError:          # pragma: no cover - numpy is a dependency
        return
    np.random.seed(seed % 2 ** 32)
