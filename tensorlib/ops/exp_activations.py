"""ELU (CELU and SELU as its parameters), softplus, logsigmoid and Mish, nn.functional's
exp-based activations as ops of their own (one recorded node each, formulas in
autograd/formulas/activations.py): a backend's one-pass kernel where it has one, else
composed of exp/expm1/log1p/tanh and selects (4-9 passes: a 16-float ELU took 15.7 us against
PyTorch's 1.6). PyTorch's own torch.celu/selu are not these: nothing is exported here."""
from tensorlib._C.pointwise import SAME, TO_BOOL, binary, unary
from tensorlib.ops._opdef import differentiable as _differentiable
from tensorlib.ops._where import where
from tensorlib.ops.piecewise_activations import one_pass

__all__ = []


def _elu_composite(x, alpha, scale, input_scale):
    positive = binary("gt", x, 0, TO_BOOL)
    clamped = where(positive, 0.0, x)                   # expm1 sees no overflowing argument
    negative = binary("mul", unary("expm1", binary("mul", clamped, input_scale, SAME), SAME),
                      alpha * scale, SAME)
    return where(positive, binary("mul", x, scale, SAME), negative)


@_differentiable("elu")
def elu(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """scale * x for x > 0, else alpha * scale * expm1(input_scale * x) (selu's constants
    are alpha and scale)."""
    out = one_pass("elu", x, alpha, scale, input_scale)
    return out if out is not None else _elu_composite(x, alpha, scale, input_scale)


@_differentiable("celu")
def celu(x, alpha=1.0):
    """x for x > 0, else alpha * expm1(x / alpha): ELU with input scale 1 / alpha."""
    out = one_pass("elu", x, alpha, 1.0, 1.0 / alpha)
    return out if out is not None else _elu_composite(x, alpha, 1.0, 1.0 / alpha)


@_differentiable("softplus")
def softplus(x, beta=1.0, threshold=20.0):
    """log1p(exp(beta * x)) / beta, x itself where beta * x > threshold."""
    out = one_pass("softplus", x, beta, threshold)
    if out is not None:
        return out
    scaled = binary("mul", x, beta, SAME)
    linear = binary("gt", scaled, threshold, TO_BOOL)
    soft = unary("log1p", unary("exp", where(linear, 0.0, scaled), SAME), SAME)
    if beta != 1:
        soft = binary("div", soft, beta, SAME)
    return where(linear, x, soft)


@_differentiable("log_sigmoid")
def logsigmoid(x):
    """min(x, 0) - log1p(exp(-|x|)), finite for every finite x."""
    out = one_pass("log_sigmoid", x)
    if out is not None:
        return out
    tail = unary("log1p", unary("exp", unary("neg", unary("abs", x, SAME), SAME), SAME), SAME)
    return binary("sub", binary("minimum", x, 0.0, SAME), tail, SAME)


@_differentiable("mish")
def mish(x):
    """x * tanh(softplus(x))."""
    out = one_pass("mish", x)
    if out is not None:
        return out
    return binary("mul", x, unary("tanh", softplus(x), SAME), SAME)
