"""Derivatives of the joining ops."""
from tensorlib.autograd.recording import formula  # noqa: F401
