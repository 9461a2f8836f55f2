r"""tensorlib.nn.functional: the math behind the modules (linear layers and activations).

Everything here is written in tensorlib ops, so it runs on every backend and autograd comes
from the ops' own formulas. Where tensorlib has an op of the same name (sigmoid, relu, softmax,
...), it is used; otherwise the function is composed from primitives (exp, log1p, tanh, erf,
where, amax, sum), in forms that stay finite in both branches of every `where` so that the
gradient of the branch not taken is an exact zero, never 0 * inf.

NOTE [ In-place activations ]
`inplace=True` computes the result out of place and writes it into the input with `copy_`.
When autograd is recording, autograd's one in-place path (recording.apply_inplace) computes it
from a clone of the input, so that no tensor saved for backward is the one being overwritten,
and hands the input the op's history.
"""
import math
import warnings

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.ops import activations as _activations
from tensorlib.ops import exp_activations as _exp_activations
from tensorlib.ops import piecewise_activations as _piecewise
from tensorlib.ops._autocast import autocast_op

__all__ = ["linear", "bilinear", "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_",
           "rrelu", "rrelu_",
           "prelu", "elu", "elu_", "selu", "selu_", "celu", "celu_", "gelu", "silu", "mish",
           "sigmoid", "tanh", "softplus", "softsign", "hardtanh", "hardtanh_", "hardswish",
           "hardsigmoid", "softmax", "log_softmax", "softmin", "gumbel_softmax", "logsigmoid",
           "threshold", "threshold_", "tanhshrink", "hardshrink", "softshrink", "glu"]


def _native(name, caller):
    """tensorlib's own op `name`, unless it is missing or is this very function re-exported
    (the lead may alias tensorlib.relu to nn.functional.relu)."""
    fn = getattr(tensorlib, name, None)
    if fn is None or fn is caller or getattr(fn, "__module__", None) == __name__:
        return None
    return fn


def _recording(x):
    return tensorlib.is_grad_enabled() and x._requires_grad


def _inplace(input, fn):  # noqa: A002
    """Write fn(input) into input (see NOTE [ In-place activations ])."""
    if _recording(input):
        from tensorlib.autograd.recording import apply_inplace
        return apply_inplace(input, fn)
    return input.copy_(fn(input))


def _floating_kernel(input, kernel):  # noqa: A002
    """PyTorch's activations without an integer or bool kernel raise NotImplementedError
    naming it (instead of computing in a promoted float)."""
    if isinstance(input, TensorImpl) and not input._dtype.is_floating_point and \
            input._dtype.category != 3:
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{input._dtype.scalar_name}'")


def _number(op, name, value):
    """A Number argument of a native activation: PyTorch takes a 0-dim tensor as its value
    (softplus(x, beta=1 / tau) with tau a tensor) and refuses any other tensor."""
    if isinstance(value, TensorImpl):
        if value.dim() != 0:
            raise TypeError(f"{op}(): argument '{name}' must be Number, not Tensor")
        return value.item()
    return value


def _no_bool(input, name):  # noqa: A002
    if isinstance(input, TensorImpl) and input._dtype is tensorlib.bool:
        raise RuntimeError(f"Bool inputs not supported for {name}")


def _check_tensor(input, name):  # noqa: A002
    if not isinstance(input, TensorImpl):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


# ---- linear layers ------------------------------------------------------------------------
def linear(input, weight, bias=None):  # noqa: A002
    r"""y = x A^T + b.

    Shape:
        - input: (*, in_features), weight: (out_features, in_features) or (in_features,),
          bias: (out_features,) or ()
        - output: (*, out_features)
    """
    _check_tensor(input, "linear")
    sizes = input._sizes
    if len(weight._sizes) == 2 and sizes and (bias is None or len(bias._sizes) == 1):
        if len(sizes) > 2 and input.is_contiguous():
            # rows of a contiguous N-D input as one 2-D product (forward and backward), as
            # torch folds it: the N-D matmul would run a batch of small GEMMs instead
            lead = sizes[:-1]
            rows = tensorlib.ops.linalg.linear(input.reshape(math.prod(lead), sizes[-1]),
                                               weight, bias)
            return rows.reshape(lead + (rows._sizes[-1],))
        return tensorlib.ops.linalg.linear(input, weight, bias)
    out = tensorlib.matmul(input, weight.t() if weight.dim() == 2 else weight)
    if bias is not None:
        out = out + bias
    return out


@autocast_op("bilinear")
def bilinear(input1, input2, weight, bias=None):
    r"""y = x_1^T A x_2 + b, for each of the out_features slices A of weight.

    Shape:
        - input1: (*, in1_features), input2: (*, in2_features) (same batch shape)
        - weight: (out_features, in1_features, in2_features), bias: (out_features,)
        - output: (*, out_features)
    """
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional: got "
                           f"{weight.dim()}")
    out_f, in1, in2 = weight.shape
    if input1.shape[-1] != in1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {in1}")
    if input2.shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {in2}")
    batch = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    # (B, in1) @ (in1, out*in2) -> (B, out, in2), then contract in2 with x2
    w = weight.permute(1, 0, 2).reshape(in1, out_f * in2)
    t = tensorlib.matmul(x1, w).reshape(-1, out_f, in2)
    out = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        out = out + bias
    return out.reshape(batch + (out_f,))


# ---- activations --------------------------------------------------------------------------
def relu(input, inplace=False):  # noqa: A002
    r"""max(0, x), elementwise (gradient 0 at 0, as in PyTorch)."""
    if inplace:
        return relu_(input)
    native = _native("relu", relu)
    if native is not None:
        return native(input)
    return tensorlib.where(input > 0, input, 0)


def relu_(input):  # noqa: A002
    return _inplace(input, relu)


def threshold(input, threshold, value, inplace=False):  # noqa: A002
    r"""x if x > threshold else value."""
    if input._dtype is tensorlib.bool:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    if inplace:
        return threshold_(input, threshold, value)
    return tensorlib.where(input > threshold, input, value).to(input.dtype)


def threshold_(input, threshold_value, value):  # noqa: A002
    return _inplace(input, lambda x: threshold(x, threshold_value, value))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):  # noqa: A002
    r"""x clamped to [min_val, max_val] (gradient 0 outside the open interval)."""
    _no_bool(input, "hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    min_val = _number("hardtanh", "min_val", min_val)
    max_val = _number("hardtanh", "max_val", max_val)
    if input._dtype is tensorlib.uint8 and min(min_val, max_val) < 0:
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if inplace:
        return hardtanh_(input, min_val, max_val)
    return _piecewise.hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):  # noqa: A002
    return _inplace(input, lambda x: hardtanh(x, min_val, max_val))


def relu6(input, inplace=False):  # noqa: A002
    r"""min(max(0, x), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):  # noqa: A002
    r"""x if x > 0 else negative_slope * x."""
    _floating_kernel(input, "leaky_relu_cpu")
    negative_slope = _number("leaky_relu", "negative_slope", negative_slope)
    if inplace:
        return leaky_relu_(input, negative_slope)
    return _piecewise.leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):  # noqa: A002
    return _inplace(input, lambda x: leaky_relu(x, negative_slope))


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):  # noqa: A002
    r"""Randomized leaky ReLU: in training each non-positive element gets its own slope drawn
    from U(lower, upper) (the slope is also its gradient); in eval the mean slope."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if inplace:
        return rrelu_(input, lower, upper, training)
    if not training:
        return leaky_relu(input, (lower + upper) / 2)
    _floating_kernel(input, "rrelu_with_noise_out_cpu")
    slope = tensorlib.empty_like(input).uniform_(lower, upper)
    return tensorlib.where(input > 0, input, input * slope)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):  # noqa: A002
    return _inplace(input, lambda x: rrelu(x, lower, upper, training))


@autocast_op("prelu")
def prelu(input, weight):  # noqa: A002
    r"""x if x > 0 else a * x, with a learned slope per channel (dim 1 of the input)."""
    _floating_kernel(input, "prelu_cpu")
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() >= 2 else 1
        if weight.numel() != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{channels}.")
        if input.dim() >= 2:
            weight = weight.reshape((channels,) + (1,) * (input.dim() - 2))
    elif weight.dim() > 0 and input.dim() < weight.dim():
        weight = weight.reshape(())
    return tensorlib.where(input > 0, input, weight * input)


def elu(input, alpha=1.0, inplace=False):  # noqa: A002
    r"""x if x > 0 else alpha * (exp(x) - 1)."""
    _floating_kernel(input, "elu_cpu")
    alpha = _number("elu", "alpha", alpha)
    if inplace:
        return elu_(input, alpha)
    return _exp_activations.elu(input, alpha)


def elu_(input, alpha=1.0):  # noqa: A002
    return _inplace(input, lambda x: elu(x, alpha))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):  # noqa: A002
    r"""scale * elu(x, alpha) with PyTorch's constants."""
    _floating_kernel(input, "elu_cpu")
    if inplace:
        return selu_(input)
    return _exp_activations.elu(input, _SELU_ALPHA, _SELU_SCALE)


def selu_(input):  # noqa: A002
    return _inplace(input, selu)


def celu(input, alpha=1.0, inplace=False):  # noqa: A002
    r"""x if x > 0 else alpha * (exp(x / alpha) - 1)."""
    _floating_kernel(input, "elu_cpu")
    alpha = _number("celu", "alpha", alpha)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    if inplace:
        return celu_(input, alpha)
    return _exp_activations.celu(input, alpha)


def celu_(input, alpha=1.0):  # noqa: A002
    return _inplace(input, lambda x: celu(x, alpha))


def gelu(input, approximate="none"):  # noqa: A002
    r"""x * Phi(x) (approximate='none'), or PyTorch's tanh approximation."""
    _floating_kernel(input, "GeluKernelImpl")
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _activations.gelu(input, approximate)


def sigmoid(input):  # noqa: A002
    r"""1 / (1 + exp(-x)), evaluated without overflow on either side."""
    native = _native("sigmoid", sigmoid)
    if native is not None:
        return native(input)
    pos = input >= 0
    # z = exp(-|x|) <= 1, with the derivative of the branch each side actually uses
    z = tensorlib.exp(tensorlib.where(pos, -input, input))
    return tensorlib.where(pos, 1.0 / (z + 1.0), z / (z + 1.0))


def tanh(input):  # noqa: A002
    return tensorlib.tanh(input)


def silu(input, inplace=False):  # noqa: A002
    r"""x * sigmoid(x)."""
    _floating_kernel(input, "silu_cpu")
    if inplace:
        return _inplace(input, silu)
    return _activations.silu(input)


@autocast_op("softplus")
def softplus(input, beta=1.0, threshold=20.0):  # noqa: A002
    r"""log(1 + exp(beta * x)) / beta, linear where beta * x > threshold."""
    _floating_kernel(input, "softplus_cpu")
    beta = _number("softplus", "beta", beta)
    threshold = _number("softplus", "threshold", threshold)
    return _exp_activations.softplus(input, beta, threshold)


def mish(input, inplace=False):  # noqa: A002
    r"""x * tanh(softplus(x))."""
    _floating_kernel(input, "mish_cpu")
    if inplace:
        return _inplace(input, mish)
    return _exp_activations.mish(input)


def softsign(input):  # noqa: A002
    r"""x / (1 + |x|)."""
    return input / (tensorlib.abs(input) + 1.0)


def tanhshrink(input):  # noqa: A002
    r"""x - tanh(x)."""
    return input - tensorlib.tanh(input)


def logsigmoid(input):  # noqa: A002
    r"""log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    _floating_kernel(input, "log_sigmoid_cpu")
    return _exp_activations.logsigmoid(input)


def hardswish(input, inplace=False):  # noqa: A002
    r"""0 if x <= -3, x if x >= 3, x * (x + 3) / 6 otherwise."""
    _floating_kernel(input, "hardswish_cpu")
    if inplace:
        return _inplace(input, hardswish)
    return _piecewise.hardswish(input)


def hardsigmoid(input, inplace=False):  # noqa: A002
    r"""0 if x <= -3, 1 if x >= 3, x / 6 + 1 / 2 otherwise."""
    _floating_kernel(input, "hardsigmoid_cpu")
    if inplace:
        return _inplace(input, hardsigmoid)
    return _piecewise.hardsigmoid(input)


def _get_softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  f"to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_input(input, dtype):  # noqa: A002
    if dtype is not None and input.dtype != dtype:
        input = input.to(dtype)
    return input


def softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    r"""exp(x_i) / sum_j exp(x_j) along `dim`, computed from x - max(x)."""
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return tensorlib.softmax(_softmax_input(input, dtype), dim)


def softmin(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    r"""softmax(-x)."""
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return softmax(-_softmax_input(input, dtype), dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    r"""x_i - log(sum_j exp(x_j)) along `dim`, as (x - m) - log(sum exp(x - m)), m = max x."""
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return tensorlib.log_softmax(_softmax_input(input, dtype), dim)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    r"""softmax((logits + g) / tau) with g ~ Gumbel(0, 1), a differentiable sample of a
    categorical; hard=True returns the one-hot of its argmax with the soft sample's gradient
    (straight-through). `eps` is unused, as in PyTorch."""
    gumbels = -tensorlib.empty_like(logits, memory_format=tensorlib.legacy_contiguous_format) \
        .exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = tensorlib.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def hardshrink(input, lambd=0.5):  # noqa: A002
    r"""x if |x| > lambd else 0."""
    _floating_kernel(input, "hardshrink_cpu")
    lambd = _number("hardshrink", "lambd", lambd)
    return tensorlib.where((input > lambd) | (input < -lambd), input, 0)


def softshrink(input, lambd=0.5):  # noqa: A002
    r"""x - lambd if x > lambd, x + lambd if x < -lambd, else 0."""
    _floating_kernel(input, "softshrink_check")
    lambd = _number("softshrink", "lambd", lambd)
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return tensorlib.where(input > lambd, input - lambd,
                           tensorlib.where(input < -lambd, input + lambd, 0))


def glu(input, dim=-1):  # noqa: A002
    r"""a * sigmoid(b), where a and b are the two halves of the input along `dim`."""
    _floating_kernel(input, "glu_cpu")
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension "
                           f"{dim % input.dim()} is size {size}")
    half = size // 2
    return input.narrow(dim, 0, half) * sigmoid(input.narrow(dim, half, half))


# The other families live in tensorlib/nn/_functional/, one file each. (Module objects are
# not kept under their own names: F.dropout, F.normalize... are functions.)
from tensorlib.nn._functional.attention import *  # noqa: E402,F401,F403
from tensorlib.nn._functional.conv import *  # noqa: E402,F401,F403
from tensorlib.nn._functional.distance import *  # noqa: E402,F401,F403
from tensorlib.nn._functional.dropout import *  # noqa: E402,F401,F403
from tensorlib.nn._functional.fractional_pooling import *  # noqa: E402,F401,F403
from tensorlib.nn._functional.loss import *  # noqa: E402,F401,F403
from tensorlib.nn._functional.loss_margin import *  # noqa: E402,F401,F403
from tensorlib.nn._functional.normalization import *  # noqa: E402,F401,F403
from tensorlib.nn._functional.padding import *  # noqa: E402,F401,F403
from tensorlib.nn._functional.pooling import *  # noqa: E402,F401,F403
from tensorlib.nn._functional.sparse import *  # noqa: E402,F401,F403
from tensorlib.nn._functional.upsampling import *  # noqa: E402,F401,F403
from tensorlib.nn._functional.vision import *  # noqa: E402,F401,F403
from tensorlib.ops import _out  # noqa: E402 - out= where PyTorch's functional takes it
_out.install(globals(), _out.FUNCTIONAL_RULE, "nn.functional.")


def _family_names():
    import importlib
    families = ("attention", "conv", "distance", "dropout", "fractional_pooling", "loss",
                "loss_margin", "normalization", "padding", "pooling", "sparse", "upsampling",
                "vision")
    return [name for family in families
            for name in importlib.import_module(f"tensorlib.nn._functional.{family}").__all__]


__all__ += _family_names()

# torch.nn.functional also exposes the __torch_function__ helpers and the nn.grad module.
from tensorlib.overrides import (handle_torch_function, has_torch_function,  # noqa: E402,F401
                                 has_torch_function_unary, has_torch_function_variadic)
from tensorlib.nn import grad  # noqa: E402,F401
