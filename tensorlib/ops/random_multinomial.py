"""multinomial: category indices drawn from each row of (unnormalised) probabilities, from
the generators of ops/random.py. With replacement by inverse CDF (the cumsum primitive and
comparisons); without replacement by the exponential race (the k smallest Exp(1) / p, which
is Gumbel-top-k sampling). In pytorch stream mode PyTorch's own CPU sampler
(ops/random_torch_stream.py)."""
import operator

import tensorlib._C.dtypes as dt
from tensorlib._C.dispatch import lookup
from tensorlib._C.factory import empty as _empty
from tensorlib.ops import pointwise as _p
from tensorlib.ops import random_torch_stream as _ts
from tensorlib.ops.random import _draw, _mersenne, _no_grad, _wide, follows_pytorch_stream

__all__ = ["multinomial"]


def _check_multinomial(input, num_samples, replacement):
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{input._dtype.scalar_name}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    cats = input._sizes[-1]
    if not replacement and num_samples > cats:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if cats > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")


def _check_distribution(probs):
    """PyTorch's data checks: finite, non-negative, positive row sums."""
    finite = _p.logical_and(_p.ge(probs, 0), _p.lt(probs, float("inf")))
    if not finite.all().item():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if not _p.gt(probs.sum(-1), 0).all().item():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


_CHUNK = 1 << 22         # comparison elements per chunk of the inverse-CDF search


def _with_replacement(probs, num_samples, generator):
    """Inverse CDF: sample = #{c : cdf[c] <= u}. The cdf is divided by its last entry, which
    makes that entry exactly 1 > u, so trailing zero-probability categories are never hit."""
    rows, cats = probs._sizes
    dev = probs._device
    cdf = _empty(probs._sizes, probs._dtype, dev)
    lookup("cumsum", dev)(cdf, probs, 1)
    cdf = _p.div(cdf, cdf.narrow(1, cats - 1, 1)).unsqueeze(1)           # (rows, 1, cats)
    u = _draw("random_uniform", (rows, num_samples), probs._dtype, dev, generator)
    out = _empty((rows, num_samples), dt.int64, dev)
    step = max(1, _CHUNK // max(1, rows * cats))
    for s in range(0, num_samples, step):
        n = min(step, num_samples - s)
        below = _p.le(cdf, u.narrow(1, s, n).unsqueeze(2))                # (rows, n, cats)
        lookup("copy", dev)(out.narrow(1, s, n), below.sum(-1))
    return out


def _without_replacement(probs, num_samples, generator):
    """Exponential race: the categories with the num_samples smallest Exp(1) / p, in order.
    Zero-probability categories get +inf: drawn only after all others, in index order (as in
    PyTorch, asking for more samples than non-zero categories is allowed)."""
    dev = probs._device
    u = _draw("random_uniform", probs._sizes, probs._dtype, dev, generator)
    e = _p.neg(_p.log(_p.sub(1.0, u)))                                    # Exp(1) >= 0
    positive = _p.gt(probs, 0)
    keys = _p.where(positive, _p.div(e, _p.where(positive, probs, 1.0)), float("inf"))
    values, order = _empty(keys._sizes, keys._dtype, dev), _empty(keys._sizes, dt.int64, dev)
    lookup("sort", dev)(values, order, keys, 1, False, True)
    return order.narrow(1, 0, num_samples).contiguous()


@_no_grad
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Category indices drawn from each row of the (unnormalised) probabilities `input`."""
    num_samples = operator.index(num_samples)
    _check_multinomial(input, num_samples, replacement)
    probs = input if input.dim() == 2 else input.unsqueeze(0)
    if follows_pytorch_stream(input._device, generator):
        _check_distribution(probs.to(_wide(input._dtype)))
        out = _ts.multinomial(probs, num_samples, replacement, generator,
                              _mersenne(generator, input._device))
        return out if input.dim() == 2 else out.squeeze(0)
    probs = probs.to(_wide(input._dtype))
    _check_distribution(probs)
    draw = _with_replacement if replacement else _without_replacement
    out = draw(probs, num_samples, generator)
    return out if input.dim() == 2 else out.squeeze(0)


TENSOR_METHODS = {"multinomial": multinomial}
