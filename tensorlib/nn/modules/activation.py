"""Activation modules: each keeps its hyper-parameters (and PReLU its weight) and calls the
function of the same name in nn.functional. MultiheadAttention is added to this file
separately."""
import warnings

import tensorlib
from tensorlib.nn import functional as F
from tensorlib.nn import init
from tensorlib.nn.modules.module import Module
from tensorlib.nn.parameter import Parameter

__all__ = ["Threshold", "ReLU", "ReLU6", "LeakyReLU", "PReLU", "ELU", "CELU", "SELU", "GELU",
           "SiLU", "Mish", "Sigmoid", "Tanh", "Softplus", "Softsign", "Hardtanh", "Hardswish",
           "Hardsigmoid", "Softmax", "Softmin", "LogSoftmax", "Softmax2d", "LogSigmoid",
           "Tanhshrink", "Hardshrink", "Softshrink", "GLU"]


def _inplace_suffix(inplace, first=False):
    if not inplace:
        return ""
    return "inplace=True" if first else ", inplace=True"


class Threshold(Module):
    r"""y = x if x > threshold else value."""

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" \
               f"{_inplace_suffix(self.inplace)}"


class ReLU(Module):
    r"""ReLU(x) = max(0, x), elementwise.

    Args:
        inplace: write the result into the input. Default: ``False``

    Shape:
        - Input: (*), Output: (*), same shape
    """

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_suffix(self.inplace, first=True)


class Hardtanh(Module):
    r"""x clamped to [min_val, max_val]."""

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if not self.max_val > self.min_val:
            raise AssertionError

    def forward(self, input):  # noqa: A002
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" \
               f"{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    r"""ReLU6(x) = min(max(0, x), 6)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_suffix(self.inplace, first=True)


class LeakyReLU(Module):
    r"""x if x > 0 else negative_slope * x."""

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class PReLU(Module):
    r"""x if x > 0 else a * x, with a learned `a` (one, or one per channel: dim 1).

    Args:
        num_parameters: number of `a` to learn: 1 or the number of input channels. Default: 1
        init: the initial value of `a`. Default: 0.25
    """

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(tensorlib.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):  # noqa: A002
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class ELU(Module):
    r"""x if x > 0 else alpha * (exp(x) - 1)."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class CELU(ELU):
    r"""x if x > 0 else alpha * (exp(x / alpha) - 1)."""

    def forward(self, input):  # noqa: A002
        return F.celu(input, self.alpha, self.inplace)


class SELU(Module):
    r"""scale * (x if x > 0 else alpha * (exp(x) - 1)), alpha ~ 1.6733, scale ~ 1.0507."""

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.selu(input, self.inplace)

    def extra_repr(self):
        return _inplace_suffix(self.inplace, first=True)


class GELU(Module):
    r"""x * Phi(x); approximate='tanh' uses PyTorch's tanh approximation."""

    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):  # noqa: A002
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={repr(self.approximate)}"


class SiLU(Module):
    r"""x * sigmoid(x)."""

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_suffix(self.inplace, first=True)


class Mish(SiLU):
    r"""x * tanh(softplus(x))."""

    def forward(self, input):  # noqa: A002
        return F.mish(input, inplace=self.inplace)


class Sigmoid(Module):
    r"""1 / (1 + exp(-x))."""

    def forward(self, input):  # noqa: A002
        return F.sigmoid(input)


class Tanh(Module):
    r"""tanh(x)."""

    def forward(self, input):  # noqa: A002
        return tensorlib.tanh(input)


class Hardswish(Module):
    r"""x * relu6(x + 3) / 6."""

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.hardswish(input, self.inplace)


class Hardsigmoid(Hardswish):
    r"""relu6(x + 3) / 6."""

    def forward(self, input):  # noqa: A002
        return F.hardsigmoid(input, self.inplace)


class Softplus(Module):
    r"""log(1 + exp(beta * x)) / beta, linear where beta * x > threshold."""

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):  # noqa: A002
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softsign(Module):
    r"""x / (1 + |x|)."""

    def forward(self, input):  # noqa: A002
        return F.softsign(input)


class Tanhshrink(Module):
    r"""x - tanh(x)."""

    def forward(self, input):  # noqa: A002
        return F.tanhshrink(input)


class LogSigmoid(Module):
    r"""log(sigmoid(x))."""

    def forward(self, input):  # noqa: A002
        return F.logsigmoid(input)


class Hardshrink(Module):
    r"""x if |x| > lambd else 0."""

    __constants__ = ["lambd"]

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):  # noqa: A002
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    r"""x - lambd if x > lambd, x + lambd if x < -lambd, else 0."""

    def forward(self, input):  # noqa: A002
        return F.softshrink(input, self.lambd)


class GLU(Module):
    r"""a * sigmoid(b) for the two halves a, b of the input along `dim`."""

    __constants__ = ["dim"]

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class _SoftmaxBase(Module):
    __constants__ = ["dim"]

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    r"""exp(x_i) / sum_j exp(x_j) along `dim`.

    Shape:
        - Input: (*), Output: (*), same shape; values in [0, 1] summing to 1 along dim
    """

    def forward(self, input):  # noqa: A002
        return F.softmax(input, self.dim, _stacklevel=5)


class Softmin(_SoftmaxBase):
    r"""softmax(-x) along `dim`."""

    def forward(self, input):  # noqa: A002
        return F.softmin(input, self.dim, _stacklevel=5)


class LogSoftmax(_SoftmaxBase):
    r"""log(softmax(x)) along `dim`, computed stably."""

    def forward(self, input):  # noqa: A002
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    r"""Softmax over the channel dim (-3) of a (C, H, W) or (N, C, H, W) input."""

    def forward(self, input):  # noqa: A002
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             f"instead")
        return F.softmax(input, -3, _stacklevel=5)
