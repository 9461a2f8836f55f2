"""LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm: normalizations without running
statistics; the math is in nn.functional."""
import numbers

import tensorlib
from tensorlib.nn import functional as F
from tensorlib.nn import init
from tensorlib.nn.modules.module import Module
from tensorlib.nn.parameter import Parameter

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm"]


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
