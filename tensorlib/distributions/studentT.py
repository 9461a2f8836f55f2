"""StudentT(df, loc, scale)."""
import math

import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions._sampling import standard_gamma
from tensorlib.distributions.distribution import Distribution
from tensorlib.distributions.utils import broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """rsample: loc + scale * Z / sqrt(G / df) with G ~ Chi2(df) (Gamma(df/2, 1/2), whose
    gradient in df is the implicit one)."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = tensorlib.Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        m = self.loc.clone()
        return tensorlib.where(self.df <= 1, math.nan, m)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        m = self.df.clone()
        var = self.scale.pow(2) * m / (m - 2)
        var = tensorlib.where((self.df <= 2) & (self.df > 1), math.inf, var)
        return tensorlib.where(self.df <= 1, math.nan, var)

    def rsample(self, sample_shape=tensorlib.Size()):
        shape = self._extended_shape(sample_shape)
        x = tensorlib.randn(shape, dtype=self.df.dtype, device=self.df.device)
        chi2 = 2.0 * standard_gamma(0.5 * self.df, shape)
        y = x * (self.df / chi2).sqrt()
        return self.loc + self.scale * y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + tensorlib.lgamma(0.5 * self.df) - tensorlib.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (y.pow(2) / self.df).log1p() - z

    def entropy(self):
        lbeta = (tensorlib.lgamma(0.5 * self.df) + math.lgamma(0.5)
                 - tensorlib.lgamma(0.5 * (self.df + 1)))
        return (self.scale.log() + 0.5 * (self.df + 1)
                * (tensorlib.digamma(0.5 * (self.df + 1)) - tensorlib.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
