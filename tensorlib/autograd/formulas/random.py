"""Derivatives of the random ops: none are registered, on purpose. Draws are leaves (their
values do not depend on differentiable inputs), and normal(mean, std) with tensor arguments is
composed of differentiable ops (mean + std * randn), so autograd already handles it."""
from tensorlib.autograd.recording import formula  # noqa: F401
