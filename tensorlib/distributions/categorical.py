"""Categorical(probs | logits) over {0, ..., K-1}."""
import math

import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions.distribution import Distribution
from tensorlib.distributions.utils import finfo, lazy_property, logits_to_probs, probs_to_logits
from tensorlib.ops.random import follows_pytorch_stream

__all__ = ["Categorical"]


def sample_categories(probs, sample_shape, batch_shape):
    """Indices drawn by inverting the CDF with one uniform per draw (the same on every
    device for one seed); in pytorch stream mode PyTorch's call, multinomial with
    replacement, so the draws equal PyTorch's."""
    k = probs.shape[-1]
    shape = tuple(sample_shape) + tuple(batch_shape)
    if follows_pytorch_stream(probs.device):
        n = math.prod(tuple(sample_shape))
        return tensorlib.multinomial(probs.reshape(-1, k), n, True).T.reshape(shape)
    cdf = tensorlib.cumsum(probs, -1)
    cdf = cdf / cdf[..., -1:]
    u = tensorlib.rand(shape, dtype=probs.dtype, device=probs.device)
    index = (cdf.expand(shape + (k,)) <= u.unsqueeze(-1)).sum(-1)
    return index.clamp(max=k - 1)


class Categorical(Distribution):
    """An index in [0, K) drawn with `probs` (or softmax(`logits`)) over the last dim."""
    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else tensorlib.Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = tensorlib.Size(batch_shape)
        param_shape = batch_shape + tensorlib.Size((self._num_events,))
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        super(Categorical, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return tensorlib.full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                              device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return tensorlib.full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                              device=self.probs.device)

    def sample(self, sample_shape=tensorlib.Size()):
        with tensorlib.no_grad():
            return sample_categories(self.probs.detach(), sample_shape, self._batch_shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = tensorlib.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        min_real = float(finfo(self.logits.dtype).min)
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = tensorlib.arange(self._num_events, dtype=tensorlib.int64,
                                  device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
