"""The exception classes of torch.distributed: programs catch these by name."""

__all__ = ["DistError", "DistBackendError", "DistStoreError"]


class DistError(RuntimeError):
    """A failure in tensorlib.distributed."""


class DistBackendError(DistError):
    """The communication engine failed or a collective timed out."""


class DistStoreError(DistError):
    """A rendezvous store failed (kept for programs that catch it; MPI needs no store)."""
