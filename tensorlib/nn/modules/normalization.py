"""LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm: normalizations without running
statistics; the math is in nn.functional."""
import numbers

import tensorlib
from tensorlib.autograd.function import Function
from tensorlib.nn import functional as F
from tensorlib.nn import init
from tensorlib.nn.modules.module import Module
from tensorlib.nn.parameter import Parameter

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "CrossMapLRN2d"]


def _as_shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(s) for s in normalized_shape)


def _register_affine(module, shape, affine, bias, device, dtype):
    """Register gamma/beta (or None in their place) so all norm layers share state_dict keys."""
    if affine:
        module.weight = Parameter(tensorlib.empty(shape, device=device, dtype=dtype))
        if bias:
            module.bias = Parameter(tensorlib.empty(shape, device=device, dtype=dtype))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(weight, bias):
    """Identity affine: gamma ones, beta (when present) zeros."""
    init.ones_(weight)
    if bias is not None:
        init.zeros_(bias)


class LayerNorm(Module):
    r"""Layer normalization over the last len(normalized_shape) dims.

    y = (x - E[x]) / sqrt(Var[x] + eps) * gamma + beta, the statistics over the normalized
    dims of each sample (biased variance).

    Args:
        normalized_shape: an int or the trailing shape to normalize over
        eps: added to the variance. Default: 1e-5
        elementwise_affine: learnable gamma (ones) and beta (zeros) of shape
            normalized_shape. Default: True
        bias: if False, no beta (only with elementwise_affine). Default: True
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _register_affine(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            _reset_affine(self.weight, self.bias)

    def forward(self, input):  # noqa: A002
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    r"""Group normalization: the C channels split into num_groups groups, each (sample,
    group) normalized over its channels and spatial dims; per-channel affine.

    Args:
        num_groups: number of groups (divides num_channels)
        num_channels: C
        eps: added to the variance. Default: 1e-5
        affine: learnable per-channel gamma (ones) and beta (zeros). Default: True
        bias (keyword-only): with affine, whether beta exists. Default: True

    Shape: input (N, C, *), output the same.
    """

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _register_affine(self, num_channels, affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            _reset_affine(self.weight, self.bias)

    def forward(self, input):  # noqa: A002
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    r"""Root mean square normalization: y = x / sqrt(mean(x^2) + eps) * gamma over the last
    len(normalized_shape) dims.

    Args:
        normalized_shape: an int or the trailing shape to normalize over
        eps: added to the mean square; None uses the input dtype's machine epsilon.
            Default: None
        elementwise_affine: learnable gamma (ones). Default: True
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(tensorlib.empty(self.normalized_shape, device=device,
                                                    dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    r"""Local response normalization across channels:
    b_c = a_c / (k + alpha / n * sum_{c'} a_{c'}^2) ** beta over `size` neighbouring
    channels.

    Shape: input (N, C, *) with at least 3 dims, output the same.
    """

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):  # noqa: A002
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _band(channels, rows):
    return [[1.0 if j in rows(c) else 0.0 for j in range(channels)] for c in range(channels)]


def _forward_window(channels, size):
    """PyTorch's CrossMapLRN2d running window: channel c sums the squares of channels up to
    c + pre_pad - 1 and, past pre_pad, drops those from 1 (never channel 0) up to c - pre_pad
    (the legacy implementation's window, kept as is)."""
    pre_pad = int((size - 1) / 2 + 1)
    return _band(channels, lambda c: {0} | set(range(max(1, c - pre_pad + 1), c + pre_pad)))


def _backward_window(channels, size):
    """The window PyTorch's hand-written backward sums over (a symmetric one, not the
    forward's: PyTorch's gradient, kept as is)."""
    if size == 1:
        raise RuntimeError(f"start (1) + length ({channels}) exceeds dimension size "
                           f"({channels}).")
    pad = int(size - (size - 1) / 2)
    return _band(channels, lambda c: set(range(c - pad, c + size - pad)))


class _CrossMapLRN2dFunction(Function):
    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):  # noqa: A002
        window = input.new_tensor(_forward_window(input.size(1), size))
        sums = tensorlib.matmul((input * input).movedim(1, -1), window.t()).movedim(-1, 1)
        scale = sums * (alpha / size) + k
        output = input * scale.pow(-beta)
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        ctx.save_for_backward(input, output, scale)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output, scale = ctx.saved_tensors
        window = input.new_tensor(_backward_window(input.size(1), ctx.size))
        ratio = (grad_output * output / scale).movedim(1, -1)
        accum = tensorlib.matmul(ratio, window.t()).movedim(-1, 1)
        grad = scale.pow(-ctx.beta) * grad_output - \
            (2 * ctx.alpha * ctx.beta / ctx.size) * input * accum
        return grad, None, None, None, None


class CrossMapLRN2d(Module):
    r"""The legacy (Lua Torch) local response normalization of 4-D input across channels:
    x * (k + alpha / size * window sum of x^2) ** -beta, with PyTorch's windows."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):  # noqa: A002
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             f"instead.")
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
