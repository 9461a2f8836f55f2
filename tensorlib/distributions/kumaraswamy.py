"""Kumaraswamy(concentration1, concentration0) on (0, 1): (1 - U^(1/c0))^(1/c1) for
U ~ Uniform(0, 1), a Beta look-alike with a closed-form CDF."""
import math

import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions.transformed_distribution import TransformedDistribution
from tensorlib.distributions.transforms import AffineTransform, PowerTransform
from tensorlib.distributions.uniform import Uniform
from tensorlib.distributions.utils import broadcast_all

__all__ = ["Kumaraswamy"]

_EULER = 0.57721566490153286060


def _moments(a, b, n):
    """The n-th moment, b B(1 + n / a, b), through lgamma."""
    arg1 = 1 + n / a
    log_value = tensorlib.lgamma(arg1) + tensorlib.lgamma(b) - tensorlib.lgamma(arg1 + b)
    return b * tensorlib.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(concentration1, concentration0) on (0, 1): Beta-like with a closed-form CDF."""
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(tensorlib.full_like(self.concentration0, 0),
                            tensorlib.full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        log_mode = self.concentration0.reciprocal() * (-self.concentration0).log1p() - \
            (-self.concentration0 * self.concentration1).log1p()
        undefined = (self.concentration0 < 1) | (self.concentration1 < 1)
        return tensorlib.where(undefined, math.nan, log_mode).exp()

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = tensorlib.digamma(self.concentration0 + 1) + _EULER
        return t0 + t1 * h0 - tensorlib.log(self.concentration1) - \
            tensorlib.log(self.concentration0)
