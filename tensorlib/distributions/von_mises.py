"""VonMises(loc, concentration): the circular normal distribution on angles (loc and values
are any reals, read modulo 2 pi). log I_0 / log I_1 use the Abramowitz-Stegun polynomials
PyTorch uses (~1e-7 relative), so log_prob and variance match PyTorch's values."""
import math

import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions.distribution import Distribution
from tensorlib.distributions.utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

_ROUNDS = 36

# Abramowitz & Stegun 9.8.1-9.8.4: I_n(x) in (x / 3.75)^2 below 3.75, e^x / sqrt(x) times a
# polynomial in 3.75 / x above
_SMALL = ([1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2],
          [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3])
_LARGE = ([0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1,
           0.2635537e-1, -0.1647633e-1, 0.392377e-2],
          [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
           0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2])


def _poly(y, coefficients):
    result = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        result = c + y * result
    return result


def _log_bessel_i(x, order):
    """log I_order(x) for x > 0, order 0 or 1."""
    y = x / 3.75
    small = _poly(y * y, _SMALL[order])
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _poly(3.75 / x, _LARGE[order]).log()
    return tensorlib.where(x < 3.75, small.log(), large)


class VonMises(Distribution):
    """VonMises(loc, concentration): a circular normal on [-pi, pi)."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, tensorlib.Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - _log_bessel_i(self.concentration, 0))

    @lazy_property
    def _proposal_r(self):
        """Best & Fisher's r, in float64 (small concentrations need it to accept at all)."""
        kappa = self.concentration.to(tensorlib.float64)
        tau = 1 + (1 + 4 * kappa * kappa).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        return tensorlib.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho * rho) / (2 * rho))

    def sample(self, sample_shape=tensorlib.Size()):
        """Best & Fisher (1979) rejection sampling in float64, a fixed 36 vectorised rounds
        (each accepts with probability >= 0.65, so an element is left unaccepted with
        probability < 1e-16; it keeps the last candidate)."""
        with tensorlib.no_grad():
            shape = tuple(self._extended_shape(sample_shape))
            loc = self.loc.to(tensorlib.float64)
            kappa = self.concentration.to(tensorlib.float64)
            r = self._proposal_r
            x = tensorlib.zeros(shape, dtype=tensorlib.float64, device=self.loc.device)
            done = tensorlib.zeros(shape, dtype=tensorlib.bool, device=self.loc.device)
            for last in [False] * (_ROUNDS - 1) + [True]:
                u1, u2, u3 = tensorlib.rand((3,) + shape, dtype=tensorlib.float64,
                                            device=self.loc.device).unbind()
                z = (math.pi * u1).cos()
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0) | last
                x = tensorlib.where(accept & ~done, (u3 - 0.5).sign() * f.acos(), x)
                done = done | accept
            return ((x + math.pi + loc) % (2 * math.pi) - math.pi).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        validate_args = self.__dict__.get("_validate_args")
        return type(self)(self.loc.expand(batch_shape), self.concentration.expand(batch_shape),
                          validate_args=validate_args)

    @property
    def mean(self):
        """The circular mean."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance, 1 - I_1(k) / I_0(k)."""
        return 1 - (_log_bessel_i(self.concentration, 1)
                    - _log_bessel_i(self.concentration, 0)).exp()
