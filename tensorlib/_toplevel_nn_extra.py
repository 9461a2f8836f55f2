"""More of the nn natives PyTorch exposes at the top level, in their native signatures
(which differ from nn.functional's): losses take `reduction` as an int (0 none, 1 mean,
2 sum; none when left out), torch.embedding takes the weight first, grid_sampler takes
int modes, and the native_* norms and dropout return PyTorch's tuples (the statistics or
the mask beside the output). The cells are the single steps of nn.RNN/LSTM/GRU."""
import warnings

from tensorlib.nn import functional as F

__all__ = ["adaptive_max_pool1d", "affine_grid_generator", "batch_norm",
           "binary_cross_entropy_with_logits", "channel_shuffle", "conv_tbc", "convolution",
           "cosine_embedding_loss", "ctc_loss", "embedding", "feature_dropout",
           "feature_dropout_", "grid_sampler", "gru_cell", "hinge_embedding_loss",
           "instance_norm", "kl_div", "lstm_cell", "margin_ranking_loss",
           "max_pool1d_with_indices", "native_batch_norm", "native_channel_shuffle",
           "native_dropout", "native_group_norm", "native_layer_norm", "norm_except_dim",
           "poisson_nll_loss", "rnn_relu_cell", "rnn_tanh_cell", "rrelu", "rrelu_",
           "triplet_margin_loss"]

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}
# The natives' schemas default `reduction` to Mean, but PyTorch's Python binding reads that
# default as 0: torch.kl_div(a, b) and the other top-level losses below return the
# unreduced loss when `reduction` is left out (nn.functional's default to "mean").
NO_REDUCTION = 0


def _reduction(value):
    if value not in _REDUCTIONS:
        raise ValueError(f"{value} is not a valid value for reduction")
    return _REDUCTIONS[value]


# ---- losses: nn.functional's, with the int reduction ------------------------------------

def kl_div(input, target, reduction=NO_REDUCTION, *, log_target=False):  # noqa: A002
    """reduction=1 is the mean over every element (the native op does not warn about
    'batchmean' as nn.functional does)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,  # noqa: A002
                                     reduction=NO_REDUCTION):
    return F.binary_cross_entropy_with_logits(input, target, weight,
                                              reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=NO_REDUCTION):
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0,
             reduction=NO_REDUCTION, zero_infinity=False):
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction(reduction), zero_infinity)


def hinge_embedding_loss(input, target, margin=1.0, reduction=NO_REDUCTION):  # noqa: A002
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=NO_REDUCTION):
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):  # noqa: A002
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        reduction=NO_REDUCTION):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction))


# ---- embedding, norms ------------------------------------------------------------------------

def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """torch.embedding(weight, indices): a negative padding_idx means none."""
    return F.embedding(indices, weight, padding_idx if padding_idx >= 0 else None,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,  # noqa
               cudnn_enabled):
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                        eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,  # noqa
                  momentum, eps, cudnn_enabled):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def _mean_rstd(x, dims, eps):
    mean = x.mean(dim=dims, keepdim=True)
    rstd = (x.var(dim=dims, unbiased=False, keepdim=True) + eps).rsqrt()
    return mean, rstd


def native_layer_norm(input, normalized_shape, weight, bias, eps):  # noqa: A002
    """(output, mean, rstd); the statistics keep the normalized dims as size 1."""
    normalized_shape = tuple(normalized_shape)
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    out = F.layer_norm(input, normalized_shape, weight, bias, eps)
    mean, rstd = _mean_rstd(input, dims, eps)
    return out, mean, rstd


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,  # noqa
                      eps):
    """(output, save_mean, save_invstd): the batch statistics when training, empty
    tensors in evaluation (as PyTorch's CPU kernel)."""
    from tensorlib.ops.creation import empty
    from tensorlib.autograd.grad_mode import no_grad
    dims = (0,) + tuple(range(2, input.dim()))
    if training:
        mean, rstd = _mean_rstd(input, dims, eps)
        mean, rstd = mean.reshape(-1), rstd.reshape(-1)
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if training:
        return out, mean, rstd
    with no_grad():
        nothing = empty((0,), dtype=input.dtype, device=input.device)
    return out, nothing, nothing.clone()


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):  # noqa: A002,N803
    """(output, mean, rstd), the statistics of shape (N, group)."""
    out = F.group_norm(input, group, weight, bias, eps)
    grouped = input.reshape(N, group, -1)
    mean, rstd = _mean_rstd(grouped, (-1,), eps)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


def norm_except_dim(v, pow=2, dim=0):  # noqa: A002 - PyTorch's name
    """The p-norm over every dim but `dim` (kept, the others size 1); dim=-1: of all."""
    if dim == -1:
        return v.norm(pow)
    d = dim + v.dim() if dim < 0 else dim
    others = tuple(i for i in range(v.dim()) if i != d)
    return v.norm(pow, dim=others, keepdim=True) if others else v.abs()


# ---- dropout, shuffles, activations --------------------------------------------------------

def native_dropout(input, p, train):  # noqa: A002
    """(output, keep mask): the mask is bool, the kept values scaled by 1 / (1 - p)."""
    from tensorlib.ops.creation import ones_like
    if train is False or input.numel() == 0:
        return input.clone(), ones_like(input, dtype=_bool())
    mask = input.new_empty(input.shape).bernoulli_(1 - p).to(_bool())
    scale = 0.0 if p == 1 else 1.0 / (1 - p)
    return input * mask * scale, mask


def _bool():
    import tensorlib
    return tensorlib.bool


def _feature_mask(input, p):  # noqa: A002
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    mask = input.new_empty(shape).bernoulli_(1 - p)
    return mask.div_(1 - p) if p < 1 else mask


def feature_dropout(input, p, train):  # noqa: A002
    """Drop whole channels (dim 1) with probability p."""
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0 or input.numel() == 0:
        return input
    return input * _feature_mask(input, p)


def feature_dropout_(input, p, train):  # noqa: A002
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0 or input.numel() == 0:
        return input
    return input.mul_(_feature_mask(input, p))


def channel_shuffle(input, groups):  # noqa: A002
    return F.channel_shuffle(input, groups)


native_channel_shuffle = channel_shuffle


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):  # noqa: A002
    if generator is not None:
        raise NotImplementedError("rrelu(): tensorlib draws the slopes from the global "
                                  "generator; generator= is not supported")
    return F.rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):  # noqa: A002
    if generator is not None:
        raise NotImplementedError("rrelu_(): tensorlib draws the slopes from the global "
                                  "generator; generator= is not supported")
    return F.rrelu(input, lower, upper, training, inplace=True)


# ---- convolution, sampling, pooling ---------------------------------------------------------

def convolution(input, weight, bias, stride, padding, dilation, transposed,  # noqa: A002
                output_padding, groups):
    """The convolution of weight's dimensionality (1-3 spatial dims), or its transpose."""
    n = weight.dim() - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"convolution(): expected a 3-D, 4-D or 5-D weight, got "
                           f"{weight.dim()}-D")
    if transposed:
        return getattr(F, f"conv_transpose{n}d")(input, weight, bias, stride, padding,
                                                 output_padding, groups, dilation)
    return getattr(F, f"conv{n}d")(input, weight, bias, stride, padding, dilation, groups)


def conv_tbc(input, weight, bias, pad=0):  # noqa: A002
    """1-D convolution of a (time, batch, channel) input with a (kernel, in, out) weight."""
    out = F.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


_MODES = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):  # noqa: A002
    return F.grid_sample(input, grid, _MODES[interpolation_mode], _PADDING[padding_mode],
                         align_corners)


def affine_grid_generator(theta, size, align_corners):
    return F.affine_grid(theta, list(size), align_corners)


def adaptive_max_pool1d(input, output_size):  # noqa: A002
    """(values, indices), as the native op returns."""
    return tuple(F.adaptive_max_pool1d(input, output_size, return_indices=True))


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,  # noqa: A002
                            ceil_mode=False):
    return tuple(F.max_pool1d(input, kernel_size, stride or None, padding, dilation,
                              ceil_mode=ceil_mode, return_indices=True))


# ---- recurrent cells -----------------------------------------------------------------------

def _gates(input, hx, w_ih, w_hh, b_ih, b_hh):  # noqa: A002
    return F.linear(input, w_ih, b_ih) + F.linear(hx, w_hh, b_hh)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    return _gates(input, hx, w_ih, w_hh, b_ih, b_hh).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    return _gates(input, hx, w_ih, w_hh, b_ih, b_hh).relu()


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    """(h', c') from hx = (h, c); the gates in PyTorch's order i, f, g, o."""
    h, c = hx
    i, f, g, o = _gates(input, h, w_ih, w_hh, b_ih, b_hh).chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    """h' = (1 - z) n + z h, the gates in PyTorch's order r, z, n."""
    gi = F.linear(input, w_ih, b_ih).chunk(3, 1)
    gh = F.linear(hx, w_hh, b_hh).chunk(3, 1)
    r = (gi[0] + gh[0]).sigmoid()
    z = (gi[1] + gh[1]).sigmoid()
    n = (gi[2] + r * gh[2]).tanh()
    return (1 - z) * n + z * hx
