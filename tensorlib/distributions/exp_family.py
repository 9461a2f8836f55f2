"""ExponentialFamily: the base class PyTorch gives its exponential-family distributions."""
from tensorlib.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Distributions of the form p(x) = h(x) exp(<t(x), theta> - F(theta)); each subclass
    here writes its entropy in closed form."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError
