"""LKJCholesky(dim, concentration): Cholesky factors of correlation matrices whose
correlation matrix has density proportional to det(C)^(concentration - 1) (Lewandowski,
Kurowicka & Joe, 2009), sampled by the onion method as PyTorch does."""
import math

import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions.beta import Beta
from tensorlib.distributions.distribution import Distribution
from tensorlib.distributions.utils import broadcast_all, finfo

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The Cholesky factor of an LKJ-distributed correlation matrix (dim, concentration)."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # row i's squared norm off the diagonal is Beta(i / 2, marginal - i / 2)
        marginal = self.concentration + 0.5 * (dim - 2)
        offset = tensorlib.arange(dim - 1, dtype=self.concentration.dtype,
                                  device=self.concentration.device)
        offset = tensorlib.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), tensorlib.Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = tensorlib.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=tensorlib.Size()):
        """Row i: a uniform direction in its first i coordinates scaled by sqrt(Beta draw),
        the diagonal completing the unit norm."""
        with tensorlib.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            normal = tensorlib.randn(self._extended_shape(sample_shape), dtype=y.dtype,
                                     device=y.device).tril(-1)
            norm = normal.norm(dim=-1, keepdim=True)
            first_row = tensorlib.arange(self.dim, device=y.device).unsqueeze(-1) == 0
            direction = tensorlib.where(first_row, tensorlib.zeros_like(normal),
                                        normal / tensorlib.where(first_row, 1.0, norm))
            w = y.sqrt() * direction
            diag = (1 - (w * w).sum(-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
            return w + tensorlib.diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = tensorlib.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = (0.5 * dm1 * math.log(math.pi) + tensorlib.mvlgamma(alpha - 0.5, dm1)
                      - tensorlib.lgamma(alpha) * dm1)
        return unnormalized - normalizer
