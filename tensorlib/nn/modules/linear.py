"""Identity, Linear and Bilinear: the parameters live here, the math in nn.functional."""
import math

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.nn import functional as F
from tensorlib.nn import init
from tensorlib.nn.modules import module as _module
from tensorlib.nn.modules.module import Module
from tensorlib.nn.parameter import Parameter

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    r"""A placeholder that returns its input; its arguments are ignored.

    Shape:
        - Input: (*), Output: (*), same shape
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):  # noqa: A002
        return input


class Linear(Module):
    r"""Applies an affine linear transformation: y = x A^T + b.

    Args:
        in_features: size of each input sample
        out_features: size of each output sample
        bias: if ``False``, the layer has no additive bias. Default: ``True``

    Shape:
        - Input: (*, H_in) with H_in = in_features
        - Output: (*, H_out) with H_out = out_features

    Attributes:
        weight: (out_features, in_features), initialized from U(-sqrt(k), sqrt(k)),
            k = 1 / in_features
        bias: (out_features,), from the same distribution

    Examples::

        >>> m = nn.Linear(20, 30)
        >>> m(tensorlib.randn(128, 20)).size()
        tensorlib.Size([128, 30])
    """

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(tensorlib.empty((out_features, in_features), device=device,
                                                dtype=dtype))
        if bias:
            self.bias = Parameter(tensorlib.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(in_features), 1/sqrt(in_features))
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):  # noqa: A002
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


def has_forward_hooks(module):
    """Whether calling `module` runs forward (pre-)hooks, its own or global ones: the fused
    paths that skip a module call apply only where none would run."""
    return bool(module._forward_hooks or module._forward_pre_hooks
                or _module._global_forward_hooks or _module._global_forward_pre_hooks)


def fused_linear_relu(lin, x):
    """relu(lin(x)) as one product with the bias and relu in the GEMM's epilogue
    (ops.linalg.linear_relu_no_grad), for a plain unhooked Linear where no gradient is
    wanted; None where that does not apply (the caller then runs the two modules)."""
    if type(lin) is not Linear or not isinstance(x, TensorImpl) or len(x._sizes) < 2:
        return None
    weight, bias = lin.weight, lin.bias
    if tensorlib.is_grad_enabled() and (x._requires_grad or weight._requires_grad
                                        or (bias is not None and bias._requires_grad)):
        return None                  # training: checked first, before any view is made
    if has_forward_hooks(lin) or not x.is_contiguous():
        return None
    rows = tensorlib.ops.linalg.linear_relu_no_grad(x.reshape(-1, x._sizes[-1]), weight, bias)
    return None if rows is None else rows.reshape(x._sizes[:-1] + (rows._sizes[-1],))


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear (PyTorch's name for MultiheadAttention.out_proj's class, which its
    quantization passes leave alone)."""


class Bilinear(Module):
    r"""Applies a bilinear transformation: y = x_1^T A x_2 + b.

    Args:
        in1_features: size of each first input sample
        in2_features: size of each second input sample
        out_features: size of each output sample
        bias: if ``False``, the layer has no additive bias. Default: ``True``

    Shape:
        - Input1: (*, H_in1), Input2: (*, H_in2), the same batch shape
        - Output: (*, H_out)

    Attributes:
        weight: (out_features, in1_features, in2_features) and bias: (out_features,), both
            from U(-sqrt(k), sqrt(k)), k = 1 / in1_features
    """

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(tensorlib.empty((out_features, in1_features, in2_features),
                                                device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(tensorlib.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
