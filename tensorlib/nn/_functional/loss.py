r"""nn.functional: loss functions (regression, class-index, binary, count and density;
margin, embedding and CTC losses: loss_margin.py).

Every loss is composed of tensorlib ops, so it runs on every backend and autograd comes from
the ops' formulas. ``reduction`` is 'none' | 'mean' | 'sum' everywhere (ValueError
otherwise); the deprecated ``size_average``/``reduce`` flags are accepted and mapped as in
PyTorch (with its deprecation warning).

Numerics follow PyTorch: cross_entropy goes through log_softmax; binary_cross_entropy clamps
the logs at -100; the logit forms (binary_cross_entropy_with_logits, soft margins) use a
log(1 + exp(-x)) that neither overflows nor loses the gradient at 0 (`_softplus_neg`).

Class-index losses (nll_loss, cross_entropy) read one ``.item()`` to check that the targets
are in range (IndexError, as PyTorch on the CPU).

NOTE [ Fused kernels ] (see normalization.py): a backend may register
``cross_entropy(out, x, target, ignore_index)``: x (N, C), target (N,) int64, out (N,) the
per-sample ``-log_softmax(x)[i, target[i]]`` (0 where target == ignore_index). It is used for
class-index targets without weight and label smoothing when no gradient is needed.
"""
import math
import warnings

import tensorlib
import tensorlib._C.dtypes as dt
from tensorlib.ops._composites import optional_kernel
from tensorlib.autograd import forward_ad as _forward_ad
from tensorlib.autograd.function import Function
from tensorlib.nn._functional.loss_fused import fused_cross_entropy, fused_regression_loss
from tensorlib.ops._autocast import autocast_op

__all__ = ["l1_loss", "mse_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
           "poisson_nll_loss", "gaussian_nll_loss"]


# ---- reductions -----------------------------------------------------------------------------
def legacy_get_string(size_average, reduce, emit_warning=True):
    """The reduction string of the deprecated (size_average, reduce) pair."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    return _check_reduction(reduction)


def _check_reduction(reduction):
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use "
                      "reduction='mean' instead.", stacklevel=3)
        return "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _warn_size(input, target):  # noqa: A002
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      f"to broadcasting. Please ensure they have the same size.",
                      stacklevel=3)


def _weighted(loss, weight, input, reduction, mean_by_weight=True):  # noqa: A002
    """PyTorch's elementwise-weight path of l1/mse/huber losses."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / weight.sum() if mean_by_weight else loss.mean()


def _softplus_neg(x):
    r"""log(1 + exp(-x)) = -logsigmoid(x), for every x without overflow: max(-x, 0) +
    log1p(exp(-|x|)), with -|x| written so that the derivative at 0 is the true one (-1/2)."""
    neg_abs = tensorlib.where(x >= 0, -x, x)
    return tensorlib.where(x < 0, -x, 0.0) + tensorlib.log1p(tensorlib.exp(neg_abs))


def _safe_log(x, cond):
    """log(x) where cond, else 0 -- finite on both sides (no 0 * inf in the gradient)."""
    return tensorlib.where(cond, tensorlib.log(tensorlib.where(cond, x, 1.0)), 0.0)


# ---- regression losses ----------------------------------------------------------------------
@autocast_op("l1_loss")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
            weight=None):
    r"""|input - target|, reduced. With ``weight`` (input's shape), 'mean' is the
    weighted mean: sum(w * |d|) / sum(w)."""
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    fused = None if weight is not None else fused_regression_loss("l1", input, target,
                                                                  reduction)
    if fused is not None:
        return fused
    x, y = tensorlib.broadcast_tensors(input, target)
    loss = tensorlib.abs(x - y)
    if weight is not None:
        return _weighted(loss, weight, input, reduction)
    return _reduce(loss, reduction)


@autocast_op("mse_loss")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
             weight=None):
    r"""(input - target)^2, reduced (weighted as l1_loss)."""
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    fused = None if weight is not None else fused_regression_loss("mse", input, target,
                                                                  reduction)
    if fused is not None:
        return fused
    x, y = tensorlib.broadcast_tensors(input, target)
    d = x - y
    loss = d * d
    if weight is not None:
        return _weighted(loss, weight, input, reduction)
    return _reduce(loss, reduction)


@autocast_op("smooth_l1_loss")
def smooth_l1_loss(input, target, size_average=None, reduce=None,  # noqa: A002
                   reduction="mean", beta=1.0):
    r"""0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target); beta = 0
    is the L1 loss."""
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    fused = fused_regression_loss("smooth_l1" if beta else "l1", input, target, reduction,
                                  beta)
    if fused is not None:
        return fused
    x, y = tensorlib.broadcast_tensors(input, target)
    d = x - y
    ad = tensorlib.abs(d)
    if beta == 0:
        return _reduce(ad, reduction)
    loss = tensorlib.where(ad < beta, d * d * (0.5 / beta), ad - 0.5 * beta)
    return _reduce(loss, reduction)


@autocast_op("huber_loss")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):  # noqa: A002
    r"""0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta). With ``weight``, 'mean' is
    the plain mean of the weighted losses (as PyTorch)."""
    _warn_size(input, target)
    reduction = _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    fused = None if weight is not None else fused_regression_loss("huber", input, target,
                                                                  reduction, delta)
    if fused is not None:
        return fused
    x, y = tensorlib.broadcast_tensors(input, target)
    d = x - y
    ad = tensorlib.abs(d)
    loss = tensorlib.where(ad < delta, d * d * 0.5, (ad - 0.5 * delta) * delta)
    if weight is not None:
        return _weighted(loss, weight, input, reduction, mean_by_weight=False)
    return _reduce(loss, reduction)


# ---- classification: nll / cross entropy ----------------------------------------------------
def _check_class_target(input, target):  # noqa: A002
    if target.dtype not in (dt.int64, dt.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_dtype_name(target.dtype)}")
    sizes, target_sizes = input._sizes, target._sizes        # (read once: on every loss call)
    if not sizes:
        raise ValueError(f"Expected 1 or more dimensions (got {len(sizes)})")
    if len(sizes) == 1:
        if len(target_sizes) > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if len(target_sizes) == 1 and target_sizes[0] != 1:
            raise RuntimeError(f"size mismatch (got input: {list(sizes)}, target: "
                               f"{list(target_sizes)})")
        return
    if not target_sizes or sizes[0] != target_sizes[0]:
        got = target_sizes[0] if target_sizes else 0
        raise ValueError(f"Expected input batch_size ({sizes[0]}) to match target "
                         f"batch_size ({got}).")
    expected = (sizes[0],) + tuple(sizes[2:])
    if tuple(target_sizes) != expected:
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(target_sizes)}")


def _dtype_name(dtype):
    return {dt.float32: "Float", dt.float64: "Double", dt.float16: "Half",
            dt.int32: "Int", dt.int64: "Long", dt.int16: "Short", dt.int8: "Char",
            dt.uint8: "Byte", dt.bool_: "Bool"}.get(dtype, str(dtype))


def _check_weight(weight, n_classes):
    if weight is not None and weight.numel() != n_classes:
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")


def _class_targets(target, ignore_index, n_classes):
    """(safe target with ignored entries set to 0, int64; the ignore mask); IndexError for a
    target outside [0, n_classes) that is not ignored."""
    target = target.to(tensorlib.int64)
    ignored = target == ignore_index
    safe = tensorlib.where(ignored, 0, target)
    if safe.numel() and not safe.is_meta:              # meta targets have no values to check
        bad = (safe < 0) | (safe >= n_classes)
        if bad.any().item():
            value = tensorlib.masked_select(safe, bad)[0].item()
            raise IndexError(f"Target {value} is out of bounds.")
    return safe, ignored


def _target_weights(weight, safe, ignored, dtype):
    """The weight of each target (0 for ignored ones), in dtype."""
    keep = (~ignored).to(dtype)
    if weight is None:
        return keep
    w = weight.to(dtype).index_select(0, safe.reshape(-1)).reshape(safe.shape)
    return w * keep


def _nll(input, target, weight, ignore_index, reduction):  # noqa: A002
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.shape[class_dim]
    _check_weight(weight, n_classes)
    target = target.reshape(()) if input.dim() == 1 else target
    safe, ignored = _class_targets(target, ignore_index, n_classes)
    picked = input.gather(class_dim, safe.unsqueeze(class_dim)).squeeze(class_dim)
    w = _target_weights(weight, safe, ignored, input.dtype)
    loss = -picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()


@autocast_op("nll_loss")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100,  # noqa: A002
             reduce=None, reduction="mean"):
    r"""The negative log likelihood loss: -weight[t] * input[n, t] with t = target[n].

    Args:
        input: (N, C), (C,) or (N, C, d1, ...) log-probabilities
        target: (N,), () or (N, d1, ...) class indices in [0, C) (int64 or uint8)
        weight: (C,) per-class weights
        ignore_index: targets equal to it contribute nothing (nor to the mean's divisor)

    'mean' divides by the sum of the weights of the non-ignored targets.
    """
    reduction = _reduction(size_average, reduce, reduction)
    _check_class_target(input, target)
    return _nll(input, target, weight, ignore_index, reduction)


def _log_softmax(input, dim):  # noqa: A002
    from tensorlib.nn import functional as F
    return F.log_softmax(input, dim)


@autocast_op("cross_entropy")
def cross_entropy(input, target, weight=None, size_average=None,  # noqa: A002
                  ignore_index=-100, reduce=None, reduction="mean", label_smoothing=0.0):
    r"""nll_loss(log_softmax(input, class dim), target), or, when target has input's shape,
    the cross entropy with class probabilities: -sum_c weight_c * target_c * log_softmax_c.

    Args:
        input: (N, C), (C,) or (N, C, d1, ...) unnormalized logits
        target: class indices (as nll_loss) or probabilities (input's shape, floating)
        weight: (C,) per-class weights
        ignore_index: class-index targets equal to it are ignored
        label_smoothing: in [0, 1]; the target becomes (1 - s) * target + s / C
    """
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    sizes = input._sizes
    if not sizes:
        raise ValueError(f"Expected 1 or more dimensions (got {len(sizes)})")
    class_dim = 0 if len(sizes) == 1 else 1
    n_classes = sizes[class_dim]
    if tuple(sizes) == tuple(target._sizes):
        return _cross_entropy_probs(input, target, weight, ignore_index, reduction,
                                    label_smoothing, class_dim, n_classes)
    _check_class_target(input, target)
    _check_weight(weight, n_classes)
    if weight is None and label_smoothing == 0 and len(sizes) == 2 \
            and _has_fused_cross_entropy(input):
        if not getattr(optional_kernel(input._device, "cross_entropy"), "checks_targets", False):
            _class_targets(target, ignore_index, n_classes)
        if target._dtype is not dt.int64:
            target = target.to(tensorlib.int64)
        return fused_cross_entropy(input, target, ignore_index, reduction)
    logp = _log_softmax(input, class_dim)
    nll = _nll(logp, target, weight, ignore_index, reduction)
    if label_smoothing == 0:
        return nll
    # the uniform part of the smoothed target, as PyTorch's label-smoothing path
    target = target.reshape(()) if input.dim() == 1 else target
    safe, ignored = _class_targets(target, ignore_index, n_classes)
    if weight is not None:
        shape = [1] * input.dim()
        shape[class_dim] = n_classes
        smooth = -(logp * weight.to(logp.dtype).reshape(shape)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = tensorlib.where(ignored, 0.0, smooth)
    if reduction == "mean":
        smooth = smooth.sum() / _target_weights(weight, safe, ignored, input.dtype).sum()
    else:
        smooth = _reduce(smooth, reduction)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / n_classes)


def _has_fused_cross_entropy(input):  # noqa: A002
    """Whether the device has the fused kernels this call needs: "cross_entropy" (per-row
    losses of (N, C) logits), and "cross_entropy_backward" when a gradient is needed. Not
    under forward AD: the decomposition's ops carry the tangents."""
    if _forward_ad._level is not None:
        return False
    dev = input._device
    if optional_kernel(dev, "cross_entropy") is None:
        return False
    return not (tensorlib.is_grad_enabled() and input.requires_grad) \
        or optional_kernel(dev, "cross_entropy_backward") is not None


def _cross_entropy_probs(input, target, weight, ignore_index, reduction,  # noqa: A002
                         label_smoothing, class_dim, n_classes):
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"Expected floating point type for target with class "
                           f"probabilities, got {_dtype_name(target.dtype)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    _check_weight(weight, n_classes)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    logp = _log_softmax(input, class_dim)
    prod = logp * target
    if weight is not None:
        shape = [1] * input.dim()
        shape[class_dim] = n_classes
        prod = prod * weight.to(logp.dtype).reshape(shape)
    if reduction == "none":
        return -prod.sum(class_dim)
    if reduction == "sum":
        return -prod.sum()
    if input.numel() == 0:
        return -prod.sum() * math.nan
    return -prod.sum() / (input.numel() // n_classes)


# ---- binary ---------------------------------------------------------------------------------
@autocast_op("binary_cross_entropy")
def binary_cross_entropy(input, target, weight=None, size_average=None,  # noqa: A002
                         reduce=None, reduction="mean"):
    r"""-w (t log(x) + (1 - t) log(1 - x)), the logs clamped at -100 as PyTorch (so the loss
    stays finite at x = 0 or 1). input must be in [0, 1] and target of input's shape."""
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the "
                         f"input size ({input.shape}) is deprecated. Please ensure they have "
                         f"the same size.")
    if input.numel() and ((input < 0) | (input > 1)).any().item():
        raise RuntimeError("all elements of input should be between 0 and 1")
    if _forward_ad._level is not None:
        loss = _binary_cross_entropy_terms(input, target)
    else:
        loss = _BinaryCrossEntropy.apply(input, target)
    if weight is not None:
        loss = loss * weight.expand(tensorlib.broadcast_shapes(target.shape, weight.shape))
    return _reduce(loss, reduction)


def _binary_cross_entropy_terms(x, t):
    log_x = tensorlib.clamp_min(tensorlib.log(x), -100)
    log_1mx = tensorlib.clamp_min(tensorlib.log1p(-x), -100)
    return -(t * log_x + (1 - t) * log_1mx)


# PyTorch's floor of x (1 - x) in the input's gradient
_BCE_EPSILON = 1e-12


class _BinaryCrossEntropy(Function):
    """The elementwise loss with PyTorch's input gradient (x - t) / max(x (1 - x), 1e-12):
    finite where x is 0 or 1 (the chain rule through the clamped logs gives 0 * inf = NaN
    there). The target's gradient is log(1 - x) - log(x), unclamped as PyTorch's. Under
    forward AD the composite's ops carry the tangents."""

    @staticmethod
    def forward(ctx, x, t):
        ctx.save_for_backward(x, t)
        return _binary_cross_entropy_terms(x, t)

    @staticmethod
    def backward(ctx, grad):
        x, t = ctx.saved_tensors
        grad_x = grad_t = None
        if ctx.needs_input_grad[0]:
            grad_x = _BinaryCrossEntropyInputGrad.apply(grad, x, t)
        if ctx.needs_input_grad[1]:
            grad_t = grad * (tensorlib.log1p(-x) - tensorlib.log(x))
        return grad_x, grad_t


class _BinaryCrossEntropyInputGrad(Function):
    """grad (x - t) / max(x (1 - x), 1e-12), differentiated as PyTorch's double backward:
    in x by (x^2 - 2 x t + t) / ((x + eps)^2 (1 - x + eps)^2) (finite at 0 and 1), in grad
    by (x - t) / ((x + eps) (1 - x + eps))."""

    @staticmethod
    def forward(ctx, grad, x, t):
        ctx.save_for_backward(grad, x, t)
        return grad * (x - t) / tensorlib.clamp_min((1 - x) * x, _BCE_EPSILON)

    @staticmethod
    def backward(ctx, gg):
        grad, x, t = ctx.saved_tensors
        shifted = (x + _BCE_EPSILON) * (1 - x + _BCE_EPSILON)
        d_grad = gg * (x - t) / shifted if ctx.needs_input_grad[0] else None
        d_x = d_t = None
        if ctx.needs_input_grad[1]:
            d_x = gg * grad * (x * x - 2 * x * t + t) / shifted ** 2
        if ctx.needs_input_grad[2]:
            d_t = -gg * grad / tensorlib.clamp_min((1 - x) * x, _BCE_EPSILON)
        return d_grad, d_x, d_t


@autocast_op("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input, target, weight=None,  # noqa: A002
                                     size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    r"""binary_cross_entropy(sigmoid(x), t) in the stable form
    (1 - t) x + (1 + (pos_weight - 1) t) log(1 + exp(-x)).

    Args:
        pos_weight: weight of the positive examples, broadcast over the last (class) dim
    """
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    sp = _softplus_neg(input)
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        loss = (1 - target) * input + log_weight * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@autocast_op("kl_div")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
           log_target=False):
    r"""KL(target || exp(input)) pointwise: target (log target - input), 0 where target = 0.

    input is log-probabilities; target probabilities (log-probabilities with log_target).
    reduction 'batchmean' divides the sum by the batch size (the KL divergence); 'mean'
    divides by the number of elements (with PyTorch's warning).
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                          "the support size.'batchmean' divides only by the batch size, and "
                          "aligns with the KL div math definition.'mean' will be changed to "
                          "behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        if reduction != "batchmean":
            _check_reduction(reduction)
    if log_target:
        loss = tensorlib.exp(target) * (target - input)
    else:
        # xlogy(t, t) - t * x; t < 0 gives nan like PyTorch's xlogy
        zero = target == 0
        xlogy = tensorlib.where(zero, 0.0, target * tensorlib.log(
            tensorlib.where(zero, 1.0, target)))
        loss = xlogy - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.dim() != 0 else total
    return _reduce(loss, reduction)


# ---- count / density losses -----------------------------------------------------------------
@autocast_op("poisson_nll_loss")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None,  # noqa
                     eps=1e-8, reduce=None, reduction="mean"):
    r"""Poisson negative log likelihood: exp(x) - t x (log_input), or x - t log(x + eps);
    full adds the Stirling term t log t - t + 0.5 log(2 pi t) where t > 1."""
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_input:
        loss = tensorlib.exp(input) - target * input
    else:
        loss = input - target * tensorlib.log(input + eps)
    if full:
        big = target > 1
        safe_t = tensorlib.where(big, target, 1.0)
        stirling = (safe_t * tensorlib.log(safe_t) - safe_t
                    + tensorlib.log(safe_t * (2 * math.pi)) * 0.5)
        loss = loss + tensorlib.where(big, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):  # noqa
    r"""Gaussian negative log likelihood: 0.5 (log(max(var, eps)) + (input - target)^2 /
    max(var, eps)) (+ 0.5 log(2 pi) with full). var has input's shape, or one dim fewer, or
    size 1 in one dim (homoscedastic). The clamp is not differentiated (as PyTorch)."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = tensorlib.ones_like(input) * var
    elif (var < 0).any().item():
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(
                y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var + (var.clamp_min(eps) - var).detach()
    d = input - target
    loss = (tensorlib.log(var) + d * d / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)
