"""Exponential(rate)."""
import numbers

import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions.exp_family import ExponentialFamily
from tensorlib.distributions.utils import broadcast_all
from tensorlib.ops.random import follows_pytorch_stream

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """Exponential(rate): waiting times, mean 1 / rate."""
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = tensorlib.Size() if isinstance(rate, numbers.Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Exponential, _instance)
        batch_shape = tensorlib.Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Exponential, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return tensorlib.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=tensorlib.Size()):
        shape = self._extended_shape(sample_shape)
        if follows_pytorch_stream(self.rate.device):        # PyTorch's call, its draws
            return tensorlib.empty(shape, dtype=self.rate.dtype,
                                   device=self.rate.device).exponential_() / self.rate
        u = tensorlib.rand(shape, dtype=self.rate.dtype, device=self.rate.device)
        return -(-u).log1p() / self.rate          # -log(1 - u), u in [0, 1): finite

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()
