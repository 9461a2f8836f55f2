r"""nn.functional: normalization (batch, instance, layer, group, RMS, local response, L_p).

Every function is a decomposition into tensorlib ops (mean, var, rsqrt, ...), so it runs on
every backend and autograd comes from the ops' formulas. Statistics are biased (divide by n)
for normalizing; the running variance is updated with the unbiased estimate (n / (n - 1)), as
in PyTorch. Running statistics are updated in place without recording.

NOTE [ Fused kernels ]
A backend may register a fused forward kernel for a hot function; it is used only when no
gradient is needed (inference), the decomposition stays the reference and carries autograd.
Contracts (outputs first, like every kernel; weight/bias may be None):

* ``layer_norm(out, x, weight, bias, normalized_ndim, eps)``: normalize over the last
  ``normalized_ndim`` dims of x, then ``* weight + bias``.
* Training, as a pair (used when a gradient is needed and the device has both):
  ``layer_norm_train(out, stats, x, weight, bias, normalized_ndim, eps)`` also writes each
  row's (mean, rstd) into ``stats`` (rows, 2) (float32 for 16-bit x); and
  ``layer_norm_backward(grad_x, grad_out, x, weight, stats, normalized_ndim)``. The weight and
  bias gradients are reductions in ops, or, where the device also has it,
  ``layer_norm_backward_affine(grad_weight, grad_bias, grad_out, x, stats, normalized_ndim)``
  (sums over the rows of grad_out * xhat and of grad_out; either output may be None). A
  backward that needs a graph runs in ops.
* ``rms_norm(out, x, weight, normalized_ndim, eps)``: ``x * rsqrt(mean(x^2) + eps) * weight``;
  for training, as layer_norm's pair: ``rms_norm_train(out, stats, x, weight,
  normalized_ndim, eps)`` writes each row's (0, rstd) into ``stats``, and
  ``rms_norm_backward(grad_x, grad_out, x, weight, stats, normalized_ndim)``; the weight's
  gradient is ``layer_norm_backward_affine``'s (the mean being 0) where the device has it.
* ``group_norm(out, stats, x, weight, bias, num_groups, eps)``: x is (N, C, *), weight/bias
  (C,); each (n, group) normalized, then its channels' ``* weight + bias``; stats (N * G, 2)
  gets (mean, rstd) (float32 for 16-bit x), or is None (inference). For training also
  ``group_norm_backward(grad_x, grad_weight, grad_bias, grad_out, x, weight, stats,
  num_groups)`` (the unwanted gradients None).
* ``batch_norm(out, x, mean, var, weight, bias, eps)``: x is (N, C, *), mean/var/weight/bias
  are (C,): ``(x - mean) * rsqrt(var + eps) * weight + bias`` (eval mode, running stats).
"""
import math
import numbers

import tensorlib
from tensorlib.autograd.function import Function
from tensorlib.ops._composites import optional_kernel
from tensorlib._C.factory import empty
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.ops._autocast import autocast_op

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm",
           "local_response_norm", "normalize"]


def _fused_kernel(name, *tensors):
    """The backend's fused kernel `name` on the first tensor's device, or None when it has
    none or when a gradient is needed (see NOTE [ Fused kernels ])."""
    dev = tensors[0]._device
    kernel = optional_kernel(dev, name)
    if kernel is None:
        return None
    if tensorlib.is_grad_enabled() and any(isinstance(t, TensorImpl) and t._requires_grad
                                           for t in tensors):
        return None
    return kernel


def _shape_arg(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(s) for s in normalized_shape)


def _channel_view(t, ndim):
    """A (C,) tensor viewed as (1, C, 1, ...) to broadcast against an ndim-dim input."""
    return t.reshape((1, -1) + (1,) * (ndim - 2))


def _affine(out, weight, bias, shape):
    if weight is not None:
        out = out * (weight.reshape(shape) if shape is not None else weight)
    if bias is not None:
        out = out + (bias.reshape(shape) if shape is not None else bias)
    return out


def _check_channels(name, t, channels, what):
    if t is not None and t.numel() != channels:
        raise RuntimeError(f"{what} should contain {channels} elements not {t.numel()}")


def _verify_batch_size(size):
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {size}")


def _verify_spatial_size(size):
    prod = 1
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input "
                         f"size {size}")


def _moments(x, dims):
    """Mean and biased variance of x over dims (kept as size-1 dims)."""
    mean = x.mean(dims, keepdim=True)
    var = tensorlib.var(x, dims, keepdim=True, correction=0)
    return mean, var


@tensorlib.no_grad()
def _update_running(running, value, momentum):
    """running = (1 - momentum) * running + momentum * value, in place (not recorded)."""
    value = value.detach().reshape(running.shape).to(running.dtype)
    running.copy_(running * (1 - momentum) + value * momentum)


# ---- batch norm -----------------------------------------------------------------------------
def batch_norm(input, running_mean, running_var, weight=None, bias=None,  # noqa: A002
               training=False, momentum=0.1, eps=1e-5):
    r"""Normalizes each channel (dim 1) of an (N, C, *) input over the batch and spatial dims.

    In training mode the batch statistics are used and, when running_mean/running_var are
    given, they are updated in place: ``running = (1 - momentum) * running + momentum *
    stat`` (the variance with Bessel's correction). Otherwise the running statistics are used.
    """
    if input.dim() < 2:
        raise ValueError(f"batch_norm: expected at least 2D input (got {input.dim()}D input)")
    if training:
        _verify_batch_size(input.shape)
    channels = input.shape[1]
    for t, what in ((running_mean, "running_mean"), (running_var, "running_var"),
                    (weight, "weight"), (bias, "bias")):
        _check_channels("batch_norm", t, channels, what)
    nd = input.dim()
    if training:
        dims = (0,) + tuple(range(2, nd))
        mean, var = _moments(input, dims)
        if running_mean is not None or running_var is not None:
            n = input.numel() // channels if channels else 0
            if running_mean is not None:
                _update_running(running_mean, mean, momentum)
            if running_var is not None:
                _update_running(running_var, var * (n / max(n - 1, 1)), momentum)
        out = (input - mean) * tensorlib.rsqrt(var + eps)
        return _affine(out, weight, bias, (1, channels) + (1,) * (nd - 2))
    if running_mean is None or running_var is None:
        raise RuntimeError("batch_norm: running_mean and running_var must be defined in "
                           "evaluation mode")
    kernel = _fused_kernel("batch_norm", input, weight, bias)
    if kernel is not None:
        out = empty(input._sizes, input._dtype, input._device)
        kernel(out, input, running_mean, running_var, weight, bias, eps)
        return out
    out = ((input - _channel_view(running_mean, nd))
           * _channel_view(tensorlib.rsqrt(running_var + eps), nd))
    return _affine(out, weight, bias, (1, channels) + (1,) * (nd - 2))


# ---- instance norm --------------------------------------------------------------------------
def instance_norm(input, running_mean=None, running_var=None, weight=None,  # noqa: A002
                  bias=None, use_input_stats=True, momentum=0.1, eps=1e-5):
    r"""Normalizes each (sample, channel) pair of an (N, C, *) input over its spatial dims.

    With use_input_stats and running statistics given, these are updated with the batch
    average of the per-instance statistics (as PyTorch, which runs batch norm on a (1, N*C, *)
    view). Without use_input_stats the running statistics are used.
    """
    if input.dim() < 3:
        raise ValueError(f"instance_norm: expected at least 3D input (got {input.dim()}D "
                         f"input)")
    if use_input_stats:
        _verify_spatial_size(input.shape)
    n_batch, channels = input.shape[0], input.shape[1]
    for t, what in ((running_mean, "running_mean"), (running_var, "running_var"),
                    (weight, "weight"), (bias, "bias")):
        _check_channels("instance_norm", t, channels, what)
    nd = input.dim()
    shape = (1, channels) + (1,) * (nd - 2)
    if use_input_stats:
        dims = tuple(range(2, nd))
        mean, var = _moments(input, dims)
        if running_mean is not None or running_var is not None:
            n = input.numel() // max(n_batch * channels, 1)
            if running_mean is not None:
                _update_running(running_mean, mean.detach().reshape(n_batch, channels).mean(0),
                                momentum)
            if running_var is not None:
                unbiased = var.detach().reshape(n_batch, channels) * (n / max(n - 1, 1))
                _update_running(running_var, unbiased.mean(0), momentum)
        out = (input - mean) * tensorlib.rsqrt(var + eps)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when "
                               "use_input_stats is false")
        out = ((input - _channel_view(running_mean, nd))
               * _channel_view(tensorlib.rsqrt(running_var + eps), nd))
    return _affine(out, weight, bias, shape)


# ---- layer norm / rms norm ------------------------------------------------------------------
def _check_normalized(name, input, shape, weight, bias):  # noqa: A002
    k = len(shape)
    if k == 0:
        raise RuntimeError(f"Expected normalized_shape to be at least 1-dimensional, i.e., "
                           f"containing at least one element, but got normalized_shape = "
                           f"{list(shape)}")
    for t, what in ((weight, "weight"), (bias, "bias")):
        if t is not None and t._sizes != shape:
            raise RuntimeError(f"Expected {what} to be of same shape as normalized_shape, but "
                               f"got {what} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(shape)}")
    sizes = input._sizes
    if len(sizes) < k or sizes[len(sizes) - k:] != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in shape)}], but got input of size"
                           f"{list(input.shape)}")


@autocast_op("layer_norm")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    r"""Normalizes over the last len(normalized_shape) dims: (x - E[x]) / sqrt(Var[x] + eps),
    then ``* weight + bias`` (both of shape normalized_shape)."""
    shape = _shape_arg(normalized_shape)
    _check_normalized("layer_norm", input, shape, weight, bias)
    kernel = _fused_kernel("layer_norm", input, weight, bias)
    if kernel is not None:
        out = empty(input._sizes, input._dtype, input._device)
        kernel(out, input, weight, bias, len(shape), eps)
        return out
    dev = input._device
    if (input._dtype.is_floating_point and optional_kernel(dev, "layer_norm_train") is not None
            and optional_kernel(dev, "layer_norm_backward") is not None):
        return _LayerNormFused.apply(input, weight, bias, len(shape), eps)
    dims = tuple(range(-len(shape), 0))
    mean, var = _moments(input, dims)
    out = (input - mean) * tensorlib.rsqrt(var + eps)
    return _affine(out, weight, bias, None)


def _train_buffers(x, ndim):
    """The output and the (rows, 2) statistics of a fused training forward (float32 for
    16-bit x)."""
    out = empty(x._sizes, x._dtype, x._device)
    rows = x.numel() // max(1, math.prod(x.shape[x.dim() - ndim:]))
    stats_dtype = tensorlib.float64 if x.dtype == tensorlib.float64 else tensorlib.float32
    return out, empty((rows, 2), stats_dtype, x._device)


class _LayerNormFused(Function):
    """layer_norm for training on a device with the fused pair (NOTE [ Fused kernels ])."""

    @staticmethod
    def forward(ctx, x, weight, bias, ndim, eps):
        out, stats = _train_buffers(x, ndim)
        optional_kernel(x._device, "layer_norm_train")(out, stats, x, weight, bias, ndim,
                                                       eps)
        ctx.save_for_backward(x, weight, stats)
        ctx.ndim, ctx.eps, ctx.has_bias = ndim, eps, bias is not None
        return out

    @staticmethod
    def backward(ctx, grad_out):
        x, weight, stats = ctx.saved_tensors
        dims = tuple(range(-ctx.ndim, 0))
        if tensorlib.is_grad_enabled():           # a graph of the backward: written in ops
            mean, var = _moments(x, dims)
            rstd = tensorlib.rsqrt(var + ctx.eps)
            xhat = (x - mean) * rstd
            gw = grad_out * weight if weight is not None else grad_out
            grad_x = rstd * (gw - gw.mean(dims, keepdim=True)
                             - xhat * (gw * xhat).mean(dims, keepdim=True))
        else:
            grad_x = None
            if ctx.needs_input_grad[0]:
                grad_x = empty(x._sizes, x._dtype, x._device)
                optional_kernel(x._device, "layer_norm_backward")(grad_x, grad_out, x,
                                                                  weight, stats, ctx.ndim)
            if optional_kernel(x._device, "layer_norm_backward_affine") is not None:
                need_w = weight is not None and ctx.needs_input_grad[1]
                need_b = ctx.has_bias and ctx.needs_input_grad[2]
                return (grad_x, *_affine_grads_fused(grad_out, x, stats, ctx.ndim, need_w,
                                                     need_b), None, None)
            shape = tuple(x.shape[:x.dim() - ctx.ndim]) + (1,) * ctx.ndim
            mean = stats[:, 0].reshape(shape).to(x.dtype)
            rstd = stats[:, 1].reshape(shape).to(x.dtype)
            xhat = (x - mean) * rstd
        lead = tuple(range(x.dim() - ctx.ndim))

        def over_rows(t):
            return t.sum(lead) if lead else t
        grad_w = over_rows(grad_out * xhat) if weight is not None and \
            ctx.needs_input_grad[1] else None
        grad_b = over_rows(grad_out) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_x, grad_w, grad_b, None, None


def _affine_grads_fused(grad_out, x, stats, ndim, need_w, need_b):
    """(grad_weight, grad_bias) of layer_norm by the device's `layer_norm_backward_affine`."""
    shape = tuple(x.shape[x.dim() - ndim:])
    grad_w = empty(shape, x._dtype, x._device) if need_w else None
    grad_b = empty(shape, x._dtype, x._device) if need_b else None
    if need_w or need_b:
        optional_kernel(x._device, "layer_norm_backward_affine")(grad_w, grad_b, grad_out,
                                                                 x, stats, ndim)
    return grad_w, grad_b


def _eps_of(dtype):
    from tensorlib.ops.pointwise import _finfo
    return float(_finfo(dtype).eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):  # noqa: A002
    r"""x / sqrt(mean(x^2) + eps) over the last len(normalized_shape) dims, times weight.
    eps=None uses the machine epsilon of the input's dtype (torch.finfo(dtype).eps)."""
    shape = _shape_arg(normalized_shape)
    _check_normalized("rms_norm", input, shape, weight, None)
    if eps is None:
        eps = _eps_of(input.dtype)
    kernel = _fused_kernel("rms_norm", input, weight)
    if kernel is not None:
        out = empty(input._sizes, input._dtype, input._device)
        kernel(out, input, weight, len(shape), eps)
        return out
    dev = input._device
    if (input._dtype.is_floating_point and optional_kernel(dev, "rms_norm_train") is not None
            and optional_kernel(dev, "rms_norm_backward") is not None):
        return _RMSNormFused.apply(input, weight, len(shape), eps)
    dims = tuple(range(-len(shape), 0))
    out = input * tensorlib.rsqrt((input * input).mean(dims, keepdim=True) + eps)
    return _affine(out, weight, None, None)


class _RMSNormFused(Function):
    """rms_norm for training on a device with the fused pair (NOTE [ Fused kernels ])."""

    @staticmethod
    def forward(ctx, x, weight, ndim, eps):
        out, stats = _train_buffers(x, ndim)
        optional_kernel(x._device, "rms_norm_train")(out, stats, x, weight, ndim, eps)
        ctx.save_for_backward(x, weight, stats)
        ctx.ndim, ctx.eps = ndim, eps
        return out

    @staticmethod
    def backward(ctx, grad_out):
        x, weight, stats = ctx.saved_tensors
        dims = tuple(range(-ctx.ndim, 0))
        if tensorlib.is_grad_enabled():           # a graph of the backward: written in ops
            rstd = tensorlib.rsqrt((x * x).mean(dims, keepdim=True) + ctx.eps)
            xhat = x * rstd
            gw = grad_out * weight if weight is not None else grad_out
            grad_x = rstd * (gw - xhat * (gw * xhat).mean(dims, keepdim=True))
        else:
            grad_x = None
            if ctx.needs_input_grad[0]:
                grad_x = empty(x._sizes, x._dtype, x._device)
                optional_kernel(x._device, "rms_norm_backward")(grad_x, grad_out, x, weight,
                                                                stats, ctx.ndim)
            need_w = weight is not None and ctx.needs_input_grad[1]
            if optional_kernel(x._device, "layer_norm_backward_affine") is not None:
                return (grad_x, _affine_grads_fused(grad_out, x, stats, ctx.ndim, need_w,
                                                    False)[0], None, None)
            shape = tuple(x.shape[:x.dim() - ctx.ndim]) + (1,) * ctx.ndim
            xhat = x * stats[:, 1].reshape(shape).to(x.dtype)
        lead = tuple(range(x.dim() - ctx.ndim))
        grad_w = None
        if weight is not None and ctx.needs_input_grad[1]:
            grad_w = (grad_out * xhat).sum(lead) if lead else grad_out * xhat
        return grad_x, grad_w, None, None


# ---- group norm -----------------------------------------------------------------------------
@autocast_op("group_norm")
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):  # noqa: A002
    r"""Splits the C channels of an (N, C, *) input into num_groups groups and normalizes
    each (sample, group) over its channels and spatial dims; weight/bias are per channel."""
    return group_norm_op(input, num_groups, weight, bias, eps, verify_batch=True)


def group_norm_op(input, num_groups, weight=None, bias=None, eps=1e-5,  # noqa: A002
                  verify_batch=False):
    """torch.group_norm: nn.functional's without its one-value-per-group check."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    sizes = input._sizes
    n_batch, channels = sizes[0], sizes[1]
    if num_groups <= 0 or channels % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    if verify_batch and math.prod(sizes) // num_groups == 1:
        _verify_batch_size(tensorlib.Size([n_batch * channels // num_groups, num_groups]
                                          + list(sizes[2:])))
    for t, what in ((weight, "weight"), (bias, "bias")):
        if t is not None and (t.dim() != 1 or t.numel() != channels):
            raise RuntimeError(f"Expected {what} to be a vector of size equal to the number of "
                               f"channels in input, but got {what} of shape {list(t.shape)} "
                               f"and input of shape {list(input.shape)}")
    kernel = optional_kernel(input._device, "group_norm")
    if (kernel is not None and input._dtype.is_floating_point
            and optional_kernel(input._device, "group_norm_backward") is not None):
        if not (tensorlib.is_grad_enabled() and any(
                t is not None and t._requires_grad for t in (input, weight, bias))):
            out = empty(sizes, input._dtype, input._device)               # inference
            kernel(out, None, input, weight, bias, num_groups, eps)
            return out
        return _GroupNormFused.apply(input, weight, bias, num_groups, eps)
    x = input.reshape(_group_rows(input, num_groups))
    mean, var = _moments(x, (2,))
    out = ((x - mean) * tensorlib.rsqrt(var + eps)).reshape(input.shape)
    return _affine(out, weight, bias, (1, channels) + (1,) * (input.dim() - 2))


def _group_rows(x, groups):
    """The (N, groups, elements per group) shape group_norm normalizes the rows of (sized
    explicitly: -1 is ambiguous for an empty batch)."""
    return (x.shape[0], groups, x.numel() // max(1, x.shape[0] * groups))


class _GroupNormFused(Function):
    """group_norm on a device with the fused pair (NOTE [ Fused kernels ])."""

    @staticmethod
    def forward(ctx, x, weight, bias, num_groups, eps):
        out = empty(x._sizes, x._dtype, x._device)
        stats_dtype = tensorlib.float64 if x.dtype == tensorlib.float64 else tensorlib.float32
        stats = empty((x._sizes[0] * num_groups, 2), stats_dtype, x._device)
        optional_kernel(x._device, "group_norm")(out, stats, x, weight, bias, num_groups, eps)
        ctx.save_for_backward(x, weight, stats)
        ctx.groups, ctx.eps, ctx.has_bias = num_groups, eps, bias is not None
        return out

    @staticmethod
    def backward(ctx, grad_out):
        x, weight, stats = ctx.saved_tensors
        need_w = weight is not None and ctx.needs_input_grad[1]
        need_b = ctx.has_bias and ctx.needs_input_grad[2]
        if tensorlib.is_grad_enabled():           # a graph of the backward: written in ops
            return _group_norm_grads(grad_out, x, weight, ctx.groups, ctx.eps,
                                     ctx.needs_input_grad[0], need_w, need_b)
        grads = [empty(sizes, x._dtype, x._device) if need else None
                 for sizes, need in ((x._sizes, ctx.needs_input_grad[0]),
                                     (x._sizes[1:2], need_w), (x._sizes[1:2], need_b))]
        optional_kernel(x._device, "group_norm_backward")(*grads, grad_out, x, weight, stats,
                                                          ctx.groups)
        return (*grads, None, None)


def _group_norm_grads(grad_out, x, weight, groups, eps, need_x, need_w, need_b):
    """group_norm's gradients in ops (differentiable): layer_norm's per (n, g) row with the
    per-channel weight folded into the gradient first."""
    shape = (1, x.shape[1]) + (1,) * (x.dim() - 2)
    rows = _group_rows(x, groups)
    xr = x.reshape(rows)
    mean, var = _moments(xr, (2,))
    rstd = tensorlib.rsqrt(var + eps)
    xhat = (xr - mean) * rstd
    lead = (0,) + tuple(range(2, x.dim()))
    grad_x = grad_w = grad_b = None
    if need_x:
        gw = (grad_out * weight.reshape(shape) if weight is not None else grad_out).reshape(rows)
        grad_x = (rstd * (gw - gw.mean(2, keepdim=True)
                          - xhat * (gw * xhat).mean(2, keepdim=True))).reshape(x.shape)
    if need_w:
        grad_w = (grad_out * xhat.reshape(x.shape)).sum(lead)
    if need_b:
        grad_b = grad_out.sum(lead)
    return grad_x, grad_w, grad_b, None, None


# ---- local response norm --------------------------------------------------------------------
def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):  # noqa: A002
    r"""x / (k + alpha / size * sum of x^2 over `size` neighbouring channels) ** beta; the
    window is zero-padded (size // 2 before, (size - 1) // 2 after), as PyTorch's avg-pool."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    channels = input.shape[1]
    sq = input * input
    before, after = size // 2, (size - 1) // 2
    parts = []
    if before:
        parts.append(tensorlib.zeros((input.shape[0], before) + tuple(input.shape[2:]),
                                     dtype=input.dtype, device=input.device))
    parts.append(sq)
    if after:
        parts.append(tensorlib.zeros((input.shape[0], after) + tuple(input.shape[2:]),
                                     dtype=input.dtype, device=input.device))
    padded = tensorlib.cat(parts, 1) if len(parts) > 1 else sq
    window = padded.narrow(1, 0, channels)
    for i in range(1, size):
        window = window + padded.narrow(1, i, channels)
    div = (window * (alpha / size) + k) ** beta
    return input / div


# ---- L_p normalize --------------------------------------------------------------------------
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):  # noqa: A002
    r"""x / max(||x||_p, eps) along dim."""
    denom = tensorlib.linalg.vector_norm(input, p, dim, keepdim=True).clamp_min(eps)
    result = input / denom
    if out is not None:
        return out.copy_(result)
    return result

