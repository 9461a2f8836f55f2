"""GeneralizedPareto(loc, scale, concentration): the peaks-over-threshold law; concentration
0 is the exponential limit (taken where concentration is close to 0, as PyTorch does).
Sampled through its inverse CDF, so rsample is reparameterized."""
import math
import numbers

import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions.distribution import Distribution
from tensorlib.distributions.utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """GeneralizedPareto(loc, scale, concentration): excesses over a threshold."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, numbers.Number) for v in (loc, scale, concentration)):
            batch_shape = tensorlib.Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = tensorlib.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=tensorlib.Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(tensorlib.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def _safe_concentration(self):
        zero = tensorlib.isclose(self.concentration, tensorlib.zeros_like(self.concentration))
        return zero, tensorlib.where(zero, tensorlib.ones_like(self.concentration),
                                     self.concentration)

    def _z(self, x):
        return (x - self.loc) / self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, conc = self._safe_concentration()
        y = 1 / conc + tensorlib.ones_like(z)
        nonzero = tensorlib.where(y == 0, y, y * tensorlib.log1p(conc * z))
        return -self.scale.log() - tensorlib.where(zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, conc = self._safe_concentration()
        return tensorlib.where(zero, -z, -tensorlib.log1p(conc * z) / conc)

    def log_cdf(self, value):
        return tensorlib.log1p(-tensorlib.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return tensorlib.exp(self.log_cdf(value))

    def icdf(self, value):
        zero, conc = self._safe_concentration()
        logu = tensorlib.log1p(-value)
        nonzero = self.loc + self.scale / conc * tensorlib.expm1(-conc * logu)
        return tensorlib.where(zero, self.loc - self.scale * logu, nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        conc = tensorlib.where(valid, self.concentration, 0.5)
        return tensorlib.where(valid, self.loc + self.scale / (1 - conc), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        conc = tensorlib.where(valid, self.concentration, 0.25)
        result = self.scale ** 2 / ((1 - conc) ** 2 * (1 - 2 * conc))
        return tensorlib.where(valid, result, math.nan)

    def entropy(self):
        return tensorlib.broadcast_to(tensorlib.log(self.scale) + self.concentration + 1,
                                      tuple(self._batch_shape))

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = tensorlib.where(self.concentration < 0, lower - self.scale / self.concentration,
                                math.inf)
        return constraints.interval(lower, upper)
