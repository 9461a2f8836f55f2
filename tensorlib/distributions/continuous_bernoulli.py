"""ContinuousBernoulli(probs | logits) on [0, 1] (Loaiza-Ganem & Cunningham, 2019). Its
normaliser and moments cancel catastrophically near probs = 1/2, so inside `lims` they use
PyTorch's Taylor expansions (the same values as PyTorch)."""
import math
import numbers

import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions.bernoulli import _bce_with_logits
from tensorlib.distributions.exp_family import ExponentialFamily
from tensorlib.distributions.utils import (broadcast_all, clamp_probs, lazy_property,
                                           logits_to_probs, probs_to_logits)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli on [0, 1] (Loaiza-Ganem & Cunningham 2019), for data in the unit
    interval."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
            # checked before clamping (which would hide an invalid value)
            if validate_args is not None and \
                    not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = tensorlib.Size() if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = tensorlib.Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        super(ContinuousBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def _stable(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return tensorlib.where(self._stable(), self.probs,
                               self._lims[0] * tensorlib.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """log C(probs), C the normalising constant."""
        p = self._cut_probs()
        below = tensorlib.where(p <= 0.5, p, tensorlib.zeros_like(p))
        above = tensorlib.where(p >= 0.5, p, tensorlib.ones_like(p))
        log_norm = (((-p).log1p() - p.log()).abs().log()
                    - tensorlib.where(p <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log()))
        x = (self.probs - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return tensorlib.where(self._stable(), log_norm, taylor)

    @property
    def mean(self):
        p = self._cut_probs()
        exact = p / (2.0 * p - 1.0) + 1.0 / ((-p).log1p() - p.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x * x) * x
        return tensorlib.where(self._stable(), exact, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        p = self._cut_probs()
        exact = p * (p - 1.0) / (1.0 - 2.0 * p) ** 2 + 1.0 / ((-p).log1p() - p.log()) ** 2
        x = (self.probs - 0.5) ** 2
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return tensorlib.where(self._stable(), exact, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=tensorlib.Size()):
        with tensorlib.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=tensorlib.Size()):
        shape = self._extended_shape(sample_shape)
        u = tensorlib.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value) + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        cdfs = (p ** value * (1.0 - p) ** (1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inside = tensorlib.where(self._stable(), cdfs, value)
        return tensorlib.where(value <= 0.0, tensorlib.zeros_like(value),
                               tensorlib.where(value >= 1.0, tensorlib.ones_like(value),
                                               inside))

    def icdf(self, value):
        p = self._cut_probs()
        exact = (((-p) + value * (2.0 * p - 1.0)).log1p() - (-p).log1p()) / \
            (p.log() - (-p).log1p())
        return tensorlib.where(self._stable(), exact, value)

    def entropy(self):
        log_q = (-self.probs).log1p()
        log_p = self.probs.log()
        return self.mean * (log_q - log_p) - self._cont_bern_log_norm() - log_q

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        stable = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = tensorlib.where(stable, x, (self._lims[0] - 0.5) * tensorlib.ones_like(x))
        log_norm = tensorlib.special.expm1(cut).abs().log() - cut.abs().log()
        taylor = 0.5 * x + x ** 2 / 24.0 - x ** 4 / 2880.0
        return tensorlib.where(stable, log_norm, taylor)
