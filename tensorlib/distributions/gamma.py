"""Gamma(concentration, rate)."""
import numbers

import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions._sampling import standard_gamma
from tensorlib.distributions.exp_family import ExponentialFamily
from tensorlib.distributions.utils import broadcast_all, finfo

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """rsample: Marsaglia-Tsang draws with the implicit reparameterisation gradient in
    concentration (see _sampling.standard_gamma_grad) and the plain one in rate."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch_shape = tensorlib.Size() if isinstance(concentration, numbers.Number) and \
            isinstance(rate, numbers.Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = tensorlib.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=tensorlib.Size()):
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration, shape) / self.rate.expand(shape)
        return value.clamp(min=float(finfo(value.dtype).tiny))

    def log_prob(self, value):
        value = tensorlib.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (tensorlib.xlogy(self.concentration, self.rate)
                + tensorlib.xlogy(self.concentration - 1, value)
                - self.rate * value - tensorlib.lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - self.rate.log() + tensorlib.lgamma(self.concentration)
                + (1.0 - self.concentration) * tensorlib.digamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return tensorlib.special.gammainc(self.concentration, self.rate * value)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return tensorlib.lgamma(x + 1) + (x + 1) * (-y.reciprocal()).log()
