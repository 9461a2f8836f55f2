"""Derivatives of the inverse hyperbolic functions (tensorlib/ops/pointwise_math.py), as
torch's: conjugated for complex inputs."""
from tensorlib.autograd.formulas.complex import conj
from tensorlib.autograd.recording import formula


@formula("asinh", save=(0,))
def asinh(ctx, g):
    x = ctx.args[0]
    return (g * conj((x * x + 1).rsqrt()),)


@formula("acosh", save=(0,))
def acosh(ctx, g):
    """1 / (sqrt(x - 1) sqrt(x + 1)): for complex x the principal branch's derivative
    (rsqrt(x^2 - 1) takes the wrong sign across the imaginary axis)."""
    x = ctx.args[0]
    return (g * conj(((x - 1).sqrt() * (x + 1).sqrt()).reciprocal()),)


@formula("atanh", save=(0,))
def atanh(ctx, g):
    x = ctx.args[0]
    return (g * conj(1 / (1 - x * x)),)
