"""Bernoulli(probs | logits)."""
import numbers

import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions.exp_family import ExponentialFamily
from tensorlib.distributions.utils import (broadcast_all, lazy_property, logits_to_probs,
                                           probs_to_logits)

__all__ = ["Bernoulli"]


def _bce_with_logits(logits, value):
    """binary cross-entropy of `value` under `logits`, without overflow."""
    return logits.clamp(min=0) - logits * value + (-logits.abs()).exp().log1p()


class Bernoulli(ExponentialFamily):
    """1 with probability `probs` (or sigmoid(`logits`)), else 0."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = tensorlib.Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = tensorlib.Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        super(Bernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return tensorlib.where(self.probs == 0.5, float("nan"), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

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
            u = tensorlib.rand(shape, dtype=self._param.dtype, device=self._param.device)
            return (u < self.probs.expand(shape)).to(self._param.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = tensorlib.broadcast_tensors(self.logits, value)
        return -_bce_with_logits(logits, value)

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        values = tensorlib.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (tensorlib.logit(self.probs),)

    def _log_normalizer(self, x):
        return x.exp().log1p()
