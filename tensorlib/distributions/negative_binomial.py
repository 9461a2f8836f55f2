"""NegativeBinomial(total_count, probs | logits): the number of successes before
total_count failures, each trial a success with probability probs; sampled as
Poisson(Gamma(total_count, exp(-logits)))."""
import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions._sampling import sample_poisson
from tensorlib.distributions.distribution import Distribution
from tensorlib.distributions.gamma import Gamma
from tensorlib.distributions.utils import (broadcast_all, lazy_property, logits_to_probs,
                                           probs_to_logits)
from tensorlib.nn import functional as F

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """The number of successes before `total_count` failures, each trial succeeding with
    `probs`."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = tensorlib.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        super(NegativeBinomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def mean(self):
        return self.total_count * tensorlib.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / tensorlib.sigmoid(-self.logits)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=tensorlib.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=tensorlib.Size()):
        with tensorlib.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return sample_poisson(rate, tuple(rate.shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = self.total_count * F.logsigmoid(-self.logits) + \
            value * F.logsigmoid(self.logits)
        log_normalization = -tensorlib.lgamma(self.total_count + value) + \
            tensorlib.lgamma(1.0 + value) + tensorlib.lgamma(self.total_count)
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
