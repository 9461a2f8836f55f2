"""The one error class of checkpoint loading, and its kind for a forbidden global."""
import pickle


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be read: truncated, corrupted, of an unknown or unsupported
    format, or naming a class or function that is not allowed. Loading raises nothing else
    for a bad file."""


class UnsafeGlobalError(CheckpointError, pickle.UnpicklingError):
    """A checkpoint names a class or function that is not allowed to be rebuilt: neither
    tensorlib's own nor given to `tensorlib.serialization.safe_globals`/`add_safe_globals`.
    Also a `pickle.UnpicklingError`, as PyTorch raises for `weights_only=True`."""
