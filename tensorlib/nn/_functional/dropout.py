r"""nn.functional: dropout.

The keep mask is ``u >= p`` with ``u`` uniforms from tensorlib's counter-based generator
(``tensorlib.rand``), so ``tensorlib.manual_seed`` makes dropout reproducible, and the same on
every backend. In pytorch stream mode (``TENSORLIB_RNG=pytorch``, ops/random_torch_stream.py)
it makes PyTorch's CPU calls instead -- ``empty_like(input).bernoulli_(1 - p).div_(1 - p)`` --
so the masks equal PyTorch's after the same seed. Kept elements are scaled by 1 / (1 - p);
the mask is a constant for autograd, so the gradient is ``grad * mask / (1 - p)``. The
feature variants (dropout1d/2d/3d) draw one number per (sample, channel) and zero whole
channels.

``inplace=True`` writes the result into the input (see NOTE [ In-place activations ] in
nn/functional.py: with autograd recording, the result is computed from a clone).
"""
import warnings

import tensorlib
from tensorlib.ops.random import follows_pytorch_stream
from tensorlib.ops.random_torch_stream import empty_like as torch_empty_like

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
           "feature_alpha_dropout"]

_SELU_NEG_SAT = 1.7580993408473766     # -selu(-inf) = alpha * scale of SELU


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(shape, p, like):
    """A mask in like's dtype: 1 with probability 1 - p, else 0."""
    if follows_pytorch_stream(like.device):
        noise = (torch_empty_like(like) if tuple(shape) == tuple(like.shape)
                 else tensorlib.empty(tuple(shape), dtype=like.dtype, device=like.device))
        return noise.bernoulli_(1 - p)
    u = tensorlib.rand(tuple(shape), device=like.device)
    return (u >= p).to(like.dtype)


def _scaled_keep_mask(shape, p, like):
    """The keep mask divided by 1 - p (PyTorch's noise.div_(1 - p) in pytorch stream mode)."""
    mask = _keep_mask(shape, p, like)
    if follows_pytorch_stream(like.device):
        return mask.div_(1 - p)
    return mask * (1.0 / (1.0 - p))


def _write(input, result, inplace):  # noqa: A002
    if not inplace:
        return result
    return input.copy_(result)


def _source(input, inplace):  # noqa: A002
    """What to compute from: a clone when the input is to be overwritten under autograd."""
    if inplace and tensorlib.is_grad_enabled() and input.requires_grad:
        return input.clone()
    return input


def _mask_shape(input, feature, batched):  # noqa: A002
    if not feature:
        return tuple(input.shape)
    shape = tuple(input.shape)
    lead = 2 if batched else 1
    return shape[:lead] + (1,) * (len(shape) - lead)


def _dropout_impl(input, p, training, inplace, feature=False, batched=True):  # noqa: A002
    _check_p(p)
    if not training or p == 0:
        return input
    x = _source(input, inplace)
    if p == 1:
        return _write(input, x * 0, inplace)
    noise = _scaled_keep_mask(_mask_shape(input, feature, batched), p, input)
    return _write(input, x * noise, inplace)


def dropout(input, p=0.5, training=True, inplace=False):  # noqa: A002
    r"""Zeroes each element with probability p and scales the rest by 1 / (1 - p) (identity
    when not training)."""
    return _dropout_impl(input, p, training, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    r"""Zeroes whole channels of an (N, C, L) or (C, L) input with probability p."""
    _check_p(p)
    dim = input.dim()
    if dim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {dim}D input. "
                           f"Note that dropout1d exists to provide channel-wise dropout on "
                           f"inputs with 1 spatial dimension, a channel dimension, and an "
                           f"optional batch dimension (i.e. 2D or 3D inputs).")
    return _dropout_impl(input, p, training, inplace, feature=True, batched=dim == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    r"""Zeroes whole channels of an (N, C, H, W) or (C, H, W) input with probability p.
    A 3D input is treated as (N, C, L) (channel-wise 1D dropout), with a warning, as
    PyTorch."""
    _check_p(p)
    dim = input.dim()
    if dim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {dim}-D input to dropout2d, which is deprecated "
                      f"and will result in an error in a future release. To retain the "
                      f"behavior and silence this warning, please use dropout instead. Note "
                      f"that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      f"spatial dimensions, a channel dimension, and an optional batch "
                      f"dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if dim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change "
                      "in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
                      "dropout behavior, please switch to using dropout1d instead.",
                      stacklevel=2)
    if dim < 2:
        return _dropout_impl(input, p, training, inplace)
    return _dropout_impl(input, p, training, inplace, feature=True, batched=True)


def dropout3d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    r"""Zeroes whole channels of an (N, C, D, H, W) or (C, D, H, W) input with
    probability p."""
    _check_p(p)
    dim = input.dim()
    if dim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {dim}-D input to dropout3d, which is deprecated "
                      f"and will result in an error in a future release. To retain the "
                      f"behavior and silence this warning, please use dropout instead. Note "
                      f"that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      f"spatial dimensions, a channel dimension, and an optional batch "
                      f"dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    if dim < 2:
        return _dropout_impl(input, p, training, inplace)
    return _dropout_impl(input, p, training, inplace, feature=True, batched=dim != 4)


def _alpha_impl(input, p, training, inplace, feature):  # noqa: A002
    _check_p(p)
    if not training or p == 0:
        return input
    x = _source(input, inplace)
    if p == 1:
        return _write(input, x * 0, inplace)
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    keep = _keep_mask(_mask_shape(input, feature, True), p, input)
    # kept: a * x + alpha * a * p; dropped: the SELU saturation value, shifted and scaled so
    # that mean and variance are preserved (PyTorch's formula)
    a = 1.0 / ((_SELU_NEG_SAT ** 2 * p + 1) * (1 - p)) ** 0.5
    b = (keep - 1) * (_SELU_NEG_SAT * a) + _SELU_NEG_SAT * a * p
    return _write(input, x * (keep * a) + b, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):  # noqa: A002
    r"""Dropout for SELU networks: dropped elements take SELU's negative saturation value
    and an affine map keeps zero mean and unit variance."""
    return _alpha_impl(input, p, training, inplace, feature=False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):  # noqa: A002
    r"""alpha_dropout of whole channels (one draw per (sample, channel))."""
    return _alpha_impl(input, p, training, inplace, feature=True)
