"""torch.nn.grad (also nn.functional.grad): the gradients of a convolution with respect to its
input or its weight, given the gradient of its output. A convolution is linear in each, so
each is the backward of the convolution taken at zeros of the requested size."""
import tensorlib
from tensorlib.nn import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _backward(conv, input, weight, wrt, grad_output, stride, padding, dilation, groups):  # noqa
    with tensorlib.enable_grad():
        out = conv(input, weight, None, stride, padding, dilation, groups)
        return tensorlib.autograd.grad(out, wrt, grad_output)[0]


def _input_grad(conv, input_size, weight, grad_output, stride, padding, dilation, groups):
    zeros = tensorlib.zeros(tuple(input_size), dtype=grad_output.dtype,
                            device=grad_output.device, requires_grad=True)
    return _backward(conv, zeros, weight.detach(), zeros, grad_output, stride, padding,
                     dilation, groups)


def _weight_grad(conv, input, weight_size, grad_output, stride, padding, dilation, groups):  # noqa
    zeros = tensorlib.zeros(tuple(weight_size), dtype=grad_output.dtype,
                            device=grad_output.device, requires_grad=True)
    return _backward(conv, input.detach(), zeros, zeros, grad_output, stride, padding,
                     dilation, groups)


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    r"""d(conv1d)/d(input) applied to grad_output, shaped input_size."""
    return _input_grad(F.conv1d, input_size, weight, grad_output, stride, padding, dilation,
                       groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0,  # noqa: A002
                  dilation=1, groups=1):
    r"""d(conv1d)/d(weight) applied to grad_output, shaped weight_size."""
    return _weight_grad(F.conv1d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _input_grad(F.conv2d, input_size, weight, grad_output, stride, padding, dilation,
                       groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0,  # noqa: A002
                  dilation=1, groups=1):
    return _weight_grad(F.conv2d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _input_grad(F.conv3d, input_size, weight, grad_output, stride, padding, dilation,
                       groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0,  # noqa: A002
                  dilation=1, groups=1):
    return _weight_grad(F.conv3d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)
