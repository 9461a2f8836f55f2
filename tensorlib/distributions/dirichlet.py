"""Dirichlet(concentration)."""
import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions._sampling import sample_dirichlet, standard_gamma
from tensorlib.distributions.exp_family import ExponentialFamily
from tensorlib.distributions.utils import finfo

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """rsample: normalised Gamma draws; its gradient flows through the Gammas' implicit
    gradients and the normalisation (an exact reparameterisation gradient; PyTorch computes
    the Dirichlet's own implicit gradient, so per-sample gradients differ while their
    expectation is the same)."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = tensorlib.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        drawn = sample_dirichlet(self.concentration, shape)      # pytorch stream mode
        if drawn is not None:
            return drawn
        gammas = standard_gamma(self.concentration, shape)
        out = gammas / gammas.sum(-1, keepdim=True)
        info = finfo(out.dtype)
        return out.clamp(min=float(info.tiny), max=1 - float(info.eps))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (tensorlib.xlogy(self.concentration - 1.0, value).sum(-1)
                + tensorlib.lgamma(self.concentration.sum(-1))
                - tensorlib.lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        mask = (self.concentration < 1).all(-1)
        one_hot = tensorlib.nn.functional.one_hot(self.concentration.argmax(-1),
                                                  self.concentration.shape[-1])
        return tensorlib.where(mask.unsqueeze(-1), one_hot.to(mode.dtype), mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (tensorlib.lgamma(self.concentration).sum(-1) - tensorlib.lgamma(a0)
                - (k - a0) * tensorlib.digamma(a0)
                - ((self.concentration - 1.0) * tensorlib.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return tensorlib.lgamma(x).sum(-1) - tensorlib.lgamma(x.sum(-1))
