"""torch.backends.mps for PyTorch programs: tensorlib has no Metal backend."""

__all__ = ["is_available", "is_built"]


def is_available():
    return False


def is_built():
    return False
