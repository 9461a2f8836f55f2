"""Losses in one node on a device with fused kernels for them. The regression losses (l1, mse,
smooth_l1, huber) by the backend's `regression_loss` kernels: one pass forward and one
backward, where the composed ops took 3-9 passes each way (mse on 1M floats: 0.42x PyTorch's
forward and backward). Cross entropy of logits and class targets by `cross_entropy` and
`cross_entropy_backward`. The composition in loss.py stays the reference and carries every
other case: reduction='none' (regression), a weight, broadcasting, other dtypes, label
smoothing, forward-mode AD."""
import tensorlib
from tensorlib.autograd import forward_ad as _forward_ad
from tensorlib.autograd.function import Function
from tensorlib._C.factory import empty
from tensorlib.autograd.recording import formula
from tensorlib.ops._composites import optional_kernel
from tensorlib.ops._opdef import differentiable

__all__ = ["fused_cross_entropy", "fused_regression_loss"]


def fused_regression_loss(loss, input, target, reduction, param=0.0):  # noqa: A002
    """The reduced loss from the device's kernels, or None where they do not apply (the
    caller then composes it): same shape and float dtype, contiguous, reduction 'mean' or
    'sum'."""
    if reduction == "none" or _forward_ad._level is not None:
        return None
    if not isinstance(input, tensorlib.Tensor) or not isinstance(target, tensorlib.Tensor):
        return None
    if input.shape != target.shape or input.dtype != target.dtype or input.numel() == 0 \
            or input.dtype not in (tensorlib.float32, tensorlib.float64) \
            or not input.is_contiguous() or not target.is_contiguous():
        return None
    dev = input._device
    if optional_kernel(dev, "regression_loss") is None:
        return None
    if tensorlib.is_grad_enabled() and (input.requires_grad or target.requires_grad) and \
            optional_kernel(dev, "regression_loss_backward") is None:
        return None
    scale = 1.0 / input.numel() if reduction == "mean" else 1.0
    # the grad_fn name PyTorch's graph shows: l1 is abs then the reduction there
    name = _NODE_NAMES.get(loss) or ("MeanBackward0" if reduction == "mean" else "SumBackward0")
    return _RegressionLoss.apply(input, target, loss, float(param), scale, name)


def _derivative(loss, d, param):
    """dloss/dd in ops (the double backward's graph), PyTorch's conventions at the kinks."""
    if loss == "l1":
        return tensorlib.sign(d)
    if loss == "mse":
        return 2 * d
    edge = 1.0 if loss == "smooth_l1" else param
    inside = d / param if loss == "smooth_l1" else d
    return tensorlib.where(d < -param, -edge, tensorlib.where(d > param, edge, inside))


# the grad_fn names PyTorch's graphs show (printed by tutorials, read by graph walkers)
_NODE_NAMES = {"mse": "MseLossBackward0", "smooth_l1": "SmoothL1LossBackward0",
               "huber": "HuberLossBackward0"}


class _RegressionLoss(Function):
    """scale * sum(loss(input - target)) by `regression_loss(out, x, y, loss, param, scale)`;
    its gradient by `regression_loss_backward(grad_x, grad, x, y, loss, param, scale)`, the
    target's the negated input's. `name` is the node's grad_fn name."""

    @staticmethod
    def forward(ctx, x, y, loss, param, scale, name):
        out = empty((), x._dtype, x._device)
        # None: a compiled graph's capture recorded the call, to run when it replays
        if optional_kernel(x._device, "regression_loss")(out, x, y, loss, param, scale) \
                is False:
            raise RuntimeError(f"{loss}_loss: the device's regression_loss kernel declined "
                               f"{x.dtype} tensors of shape {list(x.shape)}")
        ctx.save_for_backward(x, y)
        ctx.loss, ctx.param, ctx.scale = loss, param, scale
        ctx._name = name
        return out

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        if tensorlib.is_grad_enabled():           # a graph of the backward: written in ops
            grad_x = grad * ctx.scale * _derivative(ctx.loss, x - y, ctx.param)
        else:
            grad_x = empty(x._sizes, x._dtype, x._device)
            kernel = optional_kernel(x._device, "regression_loss_backward")
            if kernel(grad_x, grad.contiguous(), x, y, ctx.loss, ctx.param, ctx.scale) is False:
                raise RuntimeError(f"{ctx.loss}_loss: the device's regression_loss_backward "
                                   f"kernel declined {x.dtype} tensors of shape "
                                   f"{list(x.shape)}")
        grad_y = -grad_x if ctx.needs_input_grad[1] else None
        return (grad_x if ctx.needs_input_grad[0] else None), grad_y, None, None, None, None


def fused_cross_entropy(x, target, ignore_index, reduction):
    """Cross entropy of (N, C) logits and int64 class targets, reduced, in one node: the
    kernels below instead of log_softmax, gather and the reduction. The caller checked the
    shapes and that the device has the kernels (the backward one where a gradient is
    needed)."""
    return _cross_entropy(x, target, ignore_index, reduction)[0]


@differentiable("cross_entropy_loss")
def _cross_entropy(x, target, ignore_index, reduction):
    """``cross_entropy(out, x, target, ignore_index)`` writes the per-row losses, and may
    return the number of rows not ignored (the mean's divisor) and check the targets itself
    (saying so with a ``checks_targets`` attribute). Returns (loss, divisor): the divisor, a
    0-dim tensor, is kept for the backward. (An op node, not an autograd.Function: the
    Function's bookkeeping was a third of this loss's time in an MLP training step.)"""
    rows = empty(target._sizes, x._dtype, x._device)
    kept = optional_kernel(x._device, "cross_entropy")(rows, x, target, ignore_index)
    if reduction != "mean":
        one = tensorlib.ones((), dtype=x._dtype, device=x._device)
        return (rows if reduction == "none" else rows.sum()), one
    if kept is None:          # the kernel does not count, or a compile capture records it
        divisor = (target != ignore_index).sum().to(x._dtype)
    else:
        divisor = tensorlib.full((), kept, dtype=x._dtype, device=x._device)
    return rows.sum() / divisor, divisor


@formula("cross_entropy_loss", save=(0, 1), save_output=True)
def _cross_entropy_grad(ctx, grad, grad_aux=None):
    """grad_x = grad_rows * (softmax(x) - onehot(target)), 0 on ignored rows, by
    ``cross_entropy_backward(grad_x, grad_rows, x, target, ignore_index)``; in tensorlib ops
    when the backward itself needs a graph (double backward)."""
    x, target, ignore_index, reduction = ctx.args
    if grad is None:          # only the divisor's gradient: it is a count, a constant
        return None, None, None, None
    if reduction == "none":
        grad_rows = grad
    else:
        divisor = ctx.out[1].detach()
        grad_rows = (grad if reduction == "sum" else grad / divisor).expand(target.shape)
    if tensorlib.is_grad_enabled():
        keep = (target != ignore_index).to(x.dtype)
        onehot = tensorlib.nn.functional.one_hot(
            tensorlib.where(target == ignore_index, 0, target), x.shape[1])
        rows = (grad_rows * keep).unsqueeze(1)
        return rows * (x.softmax(1) - onehot.to(x.dtype)), None, None, None
    grad_x = empty(x._sizes, x._dtype, x._device)
    optional_kernel(x._device, "cross_entropy_backward")(grad_x, grad_rows, x, target,
                                                         ignore_index)
    return grad_x, None, None, None
