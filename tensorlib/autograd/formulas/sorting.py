"""Derivatives of the sorting ops."""
from tensorlib.autograd.recording import formula  # noqa: F401
