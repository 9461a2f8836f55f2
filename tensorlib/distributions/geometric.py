"""Geometric(probs | logits): the number of failures before the first success."""
import numbers

import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions.distribution import Distribution
from tensorlib.distributions.utils import (broadcast_all, finfo, lazy_property,
                                           logits_to_probs, probs_to_logits)

__all__ = ["Geometric"]


def _bce_with_logits(logits, value):
    return logits.clamp(min=0) - logits * value + (-logits.abs()).exp().log1p()


class Geometric(Distribution):
    """The number of failures before the first success, each trial succeeding with `probs`."""
    arg_constraints = {"probs": constraints.interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        probs_or_logits = probs if probs is not None else logits
        batch_shape = tensorlib.Size() if isinstance(probs_or_logits, numbers.Number) \
            else (self.probs if probs is not None else self.logits).size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            if not bool((self.probs > 0).all()):
                raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of "
                                 f"shape {tuple(self.probs.shape)}) of distribution "
                                 f"{repr(self)} to be positive but found invalid values:\n"
                                 f"{self.probs}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = tensorlib.Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
        super(Geometric, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return tensorlib.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=tensorlib.Size()):
        shape = self._extended_shape(sample_shape)
        tiny = float(finfo(self.probs.dtype).tiny)
        with tensorlib.no_grad():
            u = tensorlib.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
            u = u.clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs = tensorlib.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs) / self.probs
