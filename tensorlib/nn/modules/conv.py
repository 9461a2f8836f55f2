"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d (the math in nn.functional)."""
import math

import tensorlib
from tensorlib.nn import functional as F
from tensorlib.nn import init
from tensorlib.nn.modules.module import Module
from tensorlib.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _ntuple(value, n):
    if isinstance(value, (list, tuple)):
        value = tuple(value)
        return value * n if len(value) == 1 else value
    return (value,) * n


class _ConvNd(Module):
    """What every convolution layer shares: the hyper-parameters, the weight (out, in / groups,
    *kernel) -- (in, out / groups, *kernel) when transposed -- the bias and their init."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode",
                     "output_padding", "in_channels", "out_channels", "kernel_size"]
    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, nd)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, nd)
        self.stride = _ntuple(stride, nd)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, nd)
        self.dilation = _ntuple(dilation, nd)
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, nd)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's argument: (left, right) per dim, the last dim first
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * nd
            if padding == "same":
                for d, k, i in zip(self.dilation, self.kernel_size, range(nd - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    self._reversed_padding_repeated_twice[2 * i] = left
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - left
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(self.padding)
                                                     for _ in range(2)]
        if transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(tensorlib.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(tensorlib.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as PyTorch
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.kernel_size):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):  # noqa: A002
        fn = type(self)._fn
        if self.padding_mode != "zeros":
            from tensorlib.ops.joining import pad
            return fn(pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                      weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):  # noqa: A002
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    r"""1-D convolution over an input (N, C_in, L) or (C_in, L).

    Args:
        in_channels, out_channels: channels of the input and of the output
        kernel_size: size of the kernel; stride: default 1
        padding: int, tuple, 'valid' (none) or 'same' (output as long as input; stride 1)
        dilation: spacing between kernel elements; groups: blocked connections in -> out
        bias: add a learnable bias; padding_mode: 'zeros', 'reflect', 'replicate', 'circular'

    Shape:
        - Input: (N, C_in, L_in), Output: (N, C_out, L_out) with
          L_out = floor((L_in + 2 padding - dilation (kernel_size - 1) - 1) / stride + 1)

    Attributes:
        weight: (out_channels, in_channels / groups, kernel_size), bias: (out_channels,),
        both from U(-sqrt(k), sqrt(k)), k = groups / (C_in * kernel_size)
    """
    _nd = 1
    _fn = staticmethod(F.conv1d)


class Conv2d(_Conv):
    r"""2-D convolution over an input (N, C_in, H, W) or (C_in, H, W).

    Args: as Conv1d, with kernel_size, stride, padding and dilation an int or a pair.

    Shape:
        - Input: (N, C_in, H_in, W_in), Output: (N, C_out, H_out, W_out) with
          H_out = floor((H_in + 2 padding[0] - dilation[0] (kernel_size[0] - 1) - 1)
          / stride[0] + 1), likewise W_out

    Examples::

        >>> m = nn.Conv2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2))
        >>> m(tensorlib.randn(20, 16, 50, 100)).shape
        tensorlib.Size([20, 33, 28, 100])
    """
    _nd = 2
    _fn = staticmethod(F.conv2d)


class Conv3d(_Conv):
    r"""3-D convolution over an input (N, C_in, D, H, W) or (C_in, D, H, W)."""
    _nd = 3
    _fn = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size,  # noqa: A002
                        num_spatial_dims, dilation=None):
        """The output_padding that makes the output `output_size` (PyTorch's rule)."""
        if output_size is None:
            return self.output_padding
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        output_size = list(output_size)
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, "
                             f"output_size must have {num_spatial_dims} or "
                             f"{num_non_spatial_dims + num_spatial_dims} elements (got "
                             f"{len(output_size)})")
        ret = []
        for d in range(num_spatial_dims):
            dim_size = input.shape[d + num_non_spatial_dims]
            dil = 1 if dilation is None else dilation[d]
            min_size = ((dim_size - 1) * stride[d] - 2 * padding[d]
                        + dil * (kernel_size[d] - 1) + 1)
            max_size = min_size + stride[d] - 1
            if not min_size <= output_size[d] <= max_size:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {min_size} to {max_size} (for an input of "
                                 f"{list(input.shape[2:])})")
            ret.append(output_size[d] - min_size)
        return tuple(ret)

    def forward(self, input, output_size=None):  # noqa: A002
        nd = self._nd
        output_padding = self._output_padding(input, output_size, self.stride, self.padding,
                                              self.kernel_size, nd, self.dilation)
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding,
                              output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    r"""1-D transposed convolution over (N, C_in, L) or (C_in, L) (the gradient of Conv1d
    with respect to its input). L_out = (L_in - 1) stride - 2 padding + dilation
    (kernel_size - 1) + output_padding + 1. weight: (in_channels, out_channels / groups, k)."""
    _nd = 1
    _fn = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    r"""2-D transposed convolution over (N, C_in, H, W) or (C_in, H, W).

    H_out = (H_in - 1) stride[0] - 2 padding[0] + dilation[0] (kernel_size[0] - 1) +
    output_padding[0] + 1, likewise W_out; forward(input, output_size=...) picks the
    output_padding that gives output_size. weight: (in_channels, out_channels / groups, kH, kW).
    """
    _nd = 2
    _fn = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    r"""3-D transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W)."""
    _nd = 3
    _fn = staticmethod(F.conv_transpose3d)
