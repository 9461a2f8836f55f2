"""Derivatives of the random ops."""
from tensorlib.autograd.recording import formula  # noqa: F401
