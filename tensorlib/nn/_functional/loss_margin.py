r"""nn.functional: the margin and embedding losses (cosine_embedding, margin_ranking, hinge,
soft/multi/multilabel margin, triplet) and ctc_loss, composed of tensorlib ops as loss.py's;
reduction and the legacy size_average/reduce flags are loss.py's helpers."""
import math

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.nn._functional.distance import pairwise_distance
from tensorlib.nn._functional.loss import (_check_reduction, _reduce, _reduction, _softplus_neg,
                                           legacy_get_string)
from tensorlib.ops._autocast import autocast_op

__all__ = ["cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
           "multilabel_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
           "ctc_loss"]


# ---- margin / embedding losses --------------------------------------------------------------
@autocast_op("cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None,
                          reduce=None, reduction="mean"):
    r"""1 - cos(x1, x2) where target = 1, max(0, cos(x1, x2) - margin) where target = -1.

    Shape: input1/input2 (N, D) with target (N,), or (D,) with a 0-dim target.
    """
    reduction = _reduction(size_average, reduce, reduction)
    targ_dim = target.dim()
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if targ_dim == 1:
        if input1.dim() != 2 or input2.dim() != 2:
            raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs "
                               f"with sizes {list(input1.shape)} and {list(input2.shape)}.")
    elif input1.dim() != 1 or input2.dim() != 1:
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    eps = 1e-12
    prod_sum = (input1 * input2).sum(targ_dim)
    mag1 = (input1 * input1).sum(targ_dim) + eps
    mag2 = (input2 * input2).sum(targ_dim) + eps
    cos = prod_sum / tensorlib.sqrt(mag1 * mag2)
    pos = tensorlib.where(target == 1, 1 - cos, 0.0)
    neg = tensorlib.where(target == -1, tensorlib.clamp_min(cos - margin, 0), 0.0)
    return _reduce(pos + neg, reduction)


@autocast_op("margin_ranking_loss")
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None,
                        reduce=None, reduction="mean"):
    r"""max(0, -target (input1 - input2) + margin); target is 1 or -1."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {input1.shape}, input2: "
                           f"{input2.shape}, target: {target.shape} ")
    loss = tensorlib.clamp_min(-target * (input1 - input2) + margin, 0)
    return _reduce(loss, reduction)


@autocast_op("hinge_embedding_loss")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None,  # noqa: A002
                         reduce=None, reduction="mean"):
    r"""x where target = 1, max(0, margin - x) where target = -1."""
    reduction = _reduction(size_average, reduce, reduction)
    margin_part = tensorlib.where(target != 1, tensorlib.clamp_min(margin - input, 0), 0.0)
    self_part = tensorlib.where(target != -1, input, 0.0)
    return _reduce(margin_part + self_part, reduction)


@autocast_op("soft_margin_loss")
def soft_margin_loss(input, target, size_average=None, reduce=None,  # noqa: A002
                     reduction="mean"):
    r"""log(1 + exp(-target * input)) (target 1 or -1), computed without overflow."""
    reduction = _reduction(size_average, reduce, reduction)
    return _reduce(_softplus_neg(input * target), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None,  # noqa
                                reduce=None, reduction="mean"):
    r"""-mean_c (t_c log sigmoid(x_c) + (1 - t_c) log sigmoid(-x_c)) (times weight_c) over the
    class (last) dim, one value per sample."""
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    loss = target * _softplus_neg(input) + (1 - target) * _softplus_neg(-input)
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


def _margin_inputs(name, input, target):  # noqa: A002
    if input.dim() > 2 or (input.dim() == 2 and input.shape[1] == 0):
        raise RuntimeError(f"{name}: Expected non-empty vector or matrix with optional "
                           f"0-dim batch size, but got: {list(input.shape)}")
    return input.dim() <= 1


@autocast_op("multi_margin_loss")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None,  # noqa: A002
                      size_average=None, reduce=None, reduction="mean"):
    r"""Multi-class hinge loss: sum_{j != y} max(0, margin - x[y] + x[j])^p * weight[y] / C
    per sample (y = target). p is 1 or 2."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    single = _margin_inputs("multi_margin_loss", input, target)
    x = input.reshape(1, -1) if single else input
    t = target.reshape(-1).to(tensorlib.int64)
    n, c = x.shape
    if t.numel() != n:
        raise RuntimeError(f"inconsistent target size, expected {n} but got "
                           f"{list(target.shape)}")
    if t.numel() and ((t < 0) | (t >= c)).any().item():
        raise RuntimeError("target out of range")
    xy = x.gather(1, t.unsqueeze(1))
    z = tensorlib.clamp_min(x - xy + margin, 0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.to(x.dtype).index_select(0, t).unsqueeze(1)
    not_y = 1 - tensorlib.ops.sorting.one_hot(t, c).to(x.dtype)
    loss = (z * not_y).sum(1) / c
    if single:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


@autocast_op("multilabel_margin_loss")
def multilabel_margin_loss(input, target, size_average=None, reduce=None,  # noqa: A002
                           reduction="mean"):
    r"""Multi-label hinge loss: sum over target classes j (target's entries up to the first
    -1) and non-target classes i of max(0, 1 - (x[j] - x[i])) / C, per sample."""
    reduction = _reduction(size_average, reduce, reduction)
    single = _margin_inputs("multilabel_margin_loss", input, target)
    x = input.reshape(1, -1) if single else input
    t = target.reshape(x.shape).to(tensorlib.int64)
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}")
    n, c = x.shape
    valid = tensorlib.cumprod((t >= 0).to(tensorlib.int64), 1)
    safe = tensorlib.where(valid > 0, t, 0)
    if safe.numel() and (safe >= c).any().item():
        raise RuntimeError("target out of range")
    counts = tensorlib.zeros((n, c), dtype=x.dtype, device=x.device).scatter_add(
        1, safe, valid.to(x.dtype))
    non_target = (counts == 0).to(x.dtype)
    # pair[n, j, i] = max(0, 1 - x[n, j] + x[n, i])
    pair = tensorlib.clamp_min(1 - x.unsqueeze(2) + x.unsqueeze(1), 0)
    loss = (pair * counts.unsqueeze(2) * non_target.unsqueeze(1)).sum((1, 2)) / c
    if single:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


@autocast_op("triplet_margin_loss")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    r"""max(0, margin + d(a, p) - d(a, n)) with d the pairwise p-norm distance (swap: d(a, n)
    replaced by min(d(a, n), d(p, n)))."""
    reduction = _reduction(size_average, reduce, reduction)
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {a_dim}D, "
                           f"positive {p_dim}D, and negative {n_dim}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = tensorlib.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(tensorlib.clamp_min(d_pos - d_neg + margin, 0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    r"""triplet_margin_loss with any distance_function(x1, x2) (default pairwise_distance)."""
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than "
                         f"0, got {margin} instead")
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {a_dim}D, "
                           f"positive {p_dim}D, and negative {n_dim}D inputs")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = tensorlib.minimum(d_neg, dist(positive, negative))
    return _reduce(tensorlib.clamp_min(d_pos - d_neg + margin, 0), reduction)


# ---- CTC ------------------------------------------------------------------------------------
_CTC_NEG = -1e30        # "log 0": finite, so that unreachable paths give zero gradients


def _lengths(v, device):
    if isinstance(v, TensorImpl):
        return v.to(tensorlib.int64).reshape(-1)
    return tensorlib.tensor(list(v), dtype=tensorlib.int64, device=device)


def _lse3(a, b, c):
    m = tensorlib.maximum(tensorlib.maximum(a, b), c).detach()
    return m + tensorlib.log(tensorlib.exp(a - m) + tensorlib.exp(b - m) + tensorlib.exp(c - m))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    r"""The Connectionist Temporal Classification loss: -log of the total probability of the
    alignments of each target, by the forward (alpha) recursion in log space.

    Args:
        log_probs: (T, N, C) or unbatched (T, C) log-probabilities (log_softmax output)
        targets: (N, S) padded, or 1-D concatenation of the targets (sum(target_lengths))
        input_lengths, target_lengths: (N,) tensors or sequences of ints
        blank: the blank label. Default: 0
        reduction: 'mean' divides each loss by its target length, then averages
        zero_infinity: impossible alignments give 0 instead of inf (and zero gradients)

    The gradient is the exact gradient of this loss with respect to log_probs (PyTorch's
    differs by a term that log_softmax's backward cancels).
    """
    reduction = _check_reduction(reduction)
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.dim() == 1 else targets
    if log_probs.dim() != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs to be 2-D or 3-D, got "
                           f"{log_probs.dim()}-D")
    steps, batch, n_classes = log_probs.shape
    dev = log_probs.device
    in_len = _lengths(input_lengths, dev)
    tg_len = _lengths(target_lengths, dev)
    if in_len.numel() != batch or tg_len.numel() != batch:
        raise RuntimeError(f"ctc_loss: expected input_lengths and target_lengths of size "
                           f"{batch}, got {in_len.numel()} and {tg_len.numel()}")
    tg_host = [int(v) for v in tg_len.tolist()]
    in_host = [int(v) for v in in_len.tolist()]
    if any(v > steps for v in in_host):
        raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got "
                           f"value {max(in_host)}")
    s_max = max(tg_host) if tg_host else 0
    targets = targets.to(tensorlib.int64)
    if targets.dim() == 1:      # concatenated: cut and pad into (N, s_max)
        rows, start = [], 0
        for n in range(batch):
            piece = targets.narrow(0, start, tg_host[n])
            start += tg_host[n]
            pad = tensorlib.full((s_max - tg_host[n],), blank, dtype=tensorlib.int64,
                                 device=dev)
            rows.append(tensorlib.cat([piece, pad]))
        targets = (tensorlib.stack(rows) if rows
                   else tensorlib.zeros((0, s_max), dtype=tensorlib.int64, device=dev))
    else:
        if targets.shape[1] < s_max:
            raise RuntimeError(f"Expected tensor to have size at least {s_max} at dimension "
                               f"1, but got size {targets.shape[1]}")
        targets = targets.narrow(1, 0, s_max)
        within = tensorlib.arange(s_max, device=dev).unsqueeze(0) < tg_len.unsqueeze(1)
        targets = tensorlib.where(within, targets, blank)
    width = 2 * s_max + 1
    ext = tensorlib.full((batch, width), blank, dtype=tensorlib.int64, device=dev)
    if s_max:
        odd = tensorlib.arange(1, width, 2, device=dev)
        ext = ext.index_copy(1, odd, targets)
    # skip s-2 -> s allowed where ext[s] is a label different from ext[s-2]
    can_skip = tensorlib.zeros((batch, width), dtype=tensorlib.bool, device=dev)
    if width > 2:
        diff = (ext.narrow(1, 2, width - 2) != blank) & \
               (ext.narrow(1, 2, width - 2) != ext.narrow(1, 0, width - 2))
        can_skip = tensorlib.cat([can_skip.narrow(1, 0, 2), diff], 1)
    lp = log_probs.gather(2, ext.unsqueeze(0).expand(steps, batch, width))
    neg_col = tensorlib.full((batch, 1), _CTC_NEG, dtype=log_probs.dtype, device=dev)
    neg_two = tensorlib.full((batch, 2), _CTC_NEG, dtype=log_probs.dtype, device=dev)
    pos = tensorlib.arange(width, device=dev).unsqueeze(0)
    start_ok = (pos < 2) & ((pos == 0) | (tg_len.unsqueeze(1) > 0))
    alpha = tensorlib.where(start_ok, lp[0], _CTC_NEG)
    for step in range(1, steps):
        a1 = tensorlib.cat([neg_col, alpha.narrow(1, 0, width - 1)], 1)
        if width > 2:
            a2 = tensorlib.cat([neg_two, alpha.narrow(1, 0, width - 2)], 1)
            a2 = tensorlib.where(can_skip, a2, _CTC_NEG)
        else:
            a2 = tensorlib.full(alpha.shape, _CTC_NEG, dtype=alpha.dtype, device=dev)
        nxt = _lse3(alpha, a1, a2) + lp[step]
        active = (in_len > step).unsqueeze(1)
        alpha = tensorlib.where(active, nxt, alpha)
    last = (2 * tg_len).unsqueeze(1)
    end1 = alpha.gather(1, last).squeeze(1)
    end2 = alpha.gather(1, (last - 1).clamp_min(0)).squeeze(1)
    end2 = tensorlib.where(tg_len > 0, end2, _CTC_NEG)
    m = tensorlib.maximum(end1, end2).detach()
    loss = -(m + tensorlib.log(tensorlib.exp(end1 - m) + tensorlib.exp(end2 - m)))
    impossible = loss > -_CTC_NEG / 10
    if zero_infinity:
        loss = tensorlib.where(impossible, 0.0, loss)
    else:
        loss = tensorlib.where(impossible, math.inf, loss)
    if unbatched:
        loss = loss.reshape(())
        tg_len = tg_len.reshape(())
    if reduction == "mean":
        return (loss / tg_len.clamp_min(1).to(loss.dtype)).mean()
    return _reduce(loss, reduction)
