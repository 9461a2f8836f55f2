"""Binomial(total_count, probs | logits)."""
import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions.distribution import Distribution
from tensorlib.distributions.utils import (broadcast_all, lazy_property, logits_to_probs,
                                           probs_to_logits)
from tensorlib.ops.random import follows_pytorch_stream

__all__ = ["Binomial"]

_CHUNK = 256


def _clamp_by_zero(x):
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    """sample: the sum of total_count Bernoulli draws, in chunks of 256 trials (work and
    random numbers grow with the largest total_count)."""
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = tensorlib.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        super(Binomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=tensorlib.Size()):
        shape = self._extended_shape(sample_shape)
        with tensorlib.no_grad():
            n = self.total_count.expand(shape)
            p = self.probs.expand(shape)
            if follows_pytorch_stream(p.device):          # PyTorch's call, its draws
                return tensorlib.binomial(n, p)
            top = int(n.max()) if n.numel() else 0
            counts = tensorlib.zeros(shape, dtype=p.dtype, device=p.device)
            for start in range(0, top, _CHUNK):
                width = min(_CHUNK, top - start)
                u = tensorlib.rand((width,) + tuple(shape), dtype=p.dtype, device=p.device)
                trial = tensorlib.arange(start, start + width, dtype=p.dtype, device=p.device)
                trial = trial.view((width,) + (1,) * len(shape))
                counts = counts + ((u < p) & (trial < n)).to(p.dtype).sum(0)
            return counts

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = tensorlib.lgamma(self.total_count + 1)
        log_factorial_k = tensorlib.lgamma(value + 1)
        log_factorial_nmk = tensorlib.lgamma(self.total_count - value + 1)
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * (-self.logits.abs()).exp().log1p()
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(self.total_count.max())
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by "
                                      "`entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max())
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by "
                                      "`enumerate_support`.")
        values = tensorlib.arange(1 + total_count, dtype=self._param.dtype,
                                  device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
