"""Multinomial(total_count, probs | logits): counts of total_count categorical draws."""
import math

import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions.binomial import Binomial
from tensorlib.distributions.categorical import Categorical
from tensorlib.distributions.distribution import Distribution
from tensorlib.distributions.utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Counts of `total_count` categorical draws with `probs` (or softmax(`logits`))."""
    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    total_count: int

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = tensorlib.Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = self._binomial.expand(batch_shape + self.event_shape)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=tensorlib.Size()):
        """total_count categorical draws per sample, counted by a one-hot sum."""
        sample_shape = tensorlib.Size(sample_shape)
        with tensorlib.no_grad():
            draws = self._categorical.sample(tensorlib.Size((self.total_count,)) + sample_shape)
            counts = tensorlib.nn.functional.one_hot(draws, self._categorical._num_events)
            return counts.sum(0).to(self.probs.dtype)

    def entropy(self):
        """n H(categorical) - log n! + sum_k E[log x_k!], the expectations over each count's
        Binomial(n, p_k) marginal (as PyTorch)."""
        n = self.total_count
        support = self._binomial.enumerate_support()
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = tensorlib.lgamma(support + 1)
        return (n * self._categorical.entropy() - math.lgamma(n + 1.0)
                + (binomial_probs * weights).sum(0).sum(-1))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone()
        log_factorial_n = tensorlib.lgamma(value.sum(-1) + 1)
        log_factorial_xs = tensorlib.lgamma(value + 1).sum(-1)
        logits = tensorlib.where((value == 0) & (logits == -float("inf")), 0.0, logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
