"""The structured transforms of torch.distributions.transforms: CatTransform and
StackTransform (a transform per slice of one dimension), CorrCholeskyTransform (R^(D(D-1)/2)
onto Cholesky factors of correlation matrices) and CumulativeDistributionTransform (a
distribution's CDF). transforms.py re-exports them."""
import math

import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions.transforms import Transform
from tensorlib.distributions.utils import (_sum_rightmost, finfo, lazy_property,
                                           tril_matrix_to_vec, vec_to_tril_matrix)

__all__ = ["CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform",
           "StackTransform"]


def _check_transforms(tseq):
    """PyTorch asserts these (AssertionError); raised explicitly so python -O keeps them."""
    if not all(isinstance(t, Transform) for t in tseq):
        raise AssertionError("every element of tseq must be a Transform")


class CatTransform(Transform):
    """Applies tseq[i] to the i-th run of `lengths[i]` entries along `dim`, concatenating the
    results (torch.cat's counterpart)."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        _check_transforms(tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError("lengths must have one entry per transform")
        self.dim = dim

    @lazy_property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _check(self, x):
        if not -x.dim() <= self.dim < x.dim():
            raise AssertionError(f"dim {self.dim} is out of range for a {x.dim()}-d input")
        if x.size(self.dim) != self.length:
            raise AssertionError(f"expected size {self.length} along dim {self.dim}, got "
                             f"{x.size(self.dim)}")

    def _map(self, z, fn):
        self._check(z)
        out, start = [], 0
        for trans, length in zip(self.transforms, self.lengths):
            out.append(fn(trans, z.narrow(self.dim, start, length)))
            start += length
        return tensorlib.cat(out, dim=self.dim)

    def _call(self, x):
        return self._map(x, lambda t, part: t(part))

    def _inverse(self, y):
        return self._map(y, lambda t, part: t.inv(part))

    def log_abs_det_jacobian(self, x, y):
        self._check(x)
        self._check(y)
        parts, start = [], 0
        for trans, length in zip(self.transforms, self.lengths):
            part = trans.log_abs_det_jacobian(x.narrow(self.dim, start, length),
                                              y.narrow(self.dim, start, length))
            if trans.event_dim < self.event_dim:
                part = _sum_rightmost(part, self.event_dim - trans.event_dim)
            parts.append(part)
            start += length
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        # a dim inside the event is summed over by the Jacobian; one outside stays batched
        return tensorlib.cat(parts, dim=dim) if dim < 0 else sum(parts)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Applies tseq[i] to the i-th slice along `dim`, stacking the results."""

    def __init__(self, tseq, dim=0, cache_size=0):
        _check_transforms(tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z):
        if not -z.dim() <= self.dim < z.dim():
            raise AssertionError(f"dim {self.dim} is out of range for a {z.dim()}-d input")
        if z.size(self.dim) != len(self.transforms):
            raise AssertionError(f"expected size {len(self.transforms)} along dim {self.dim}, "
                             f"got {z.size(self.dim)}")
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x):
        return tensorlib.stack([t(part) for part, t in zip(self._slices(x), self.transforms)],
                               dim=self.dim)

    def _inverse(self, y):
        return tensorlib.stack([t.inv(part) for part, t in zip(self._slices(y),
                                                               self.transforms)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        parts = [t.log_abs_det_jacobian(xs, ys)
                 for xs, ys, t in zip(self._slices(x), self._slices(y), self.transforms)]
        return tensorlib.stack(parts, dim=self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CorrCholeskyTransform(Transform):
    """A vector of D(D-1)/2 reals to the Cholesky factor of a D x D correlation matrix:
    tanh maps each to (-1, 1), placed row by row in the strict lower triangle, and stick
    breaking on the squares scales each row to unit norm (the LKJ parametrisation)."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    def _call(self, x):
        eps = finfo(x.dtype).eps
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        remaining = (1 - r * r).sqrt().cumprod(-1)
        eye = tensorlib.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return (r + eye) * tensorlib.constant_pad_nd(remaining[..., :-1], (1, 0), 1.0)

    def _inverse(self, y):
        left = 1 - (y * y).cumsum(-1)
        left = tensorlib.constant_pad_nd(left[..., :-1], (1, 0), 1.0)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left, diag=-1).sqrt()
        return 0.5 * (t.log1p() - (-t).log1p())

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        left = tril_matrix_to_vec(1 - (y * y).cumsum(-1), diag=-2)
        stick_breaking = 0.5 * left.log().sum(-1)
        tanh = -2 * (x + tensorlib.nn.functional.softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking + tanh

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)


class CumulativeDistributionTransform(Transform):
    """x -> distribution.cdf(x), onto the unit interval; its log|det J| is log_prob."""
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return type(self)(self.distribution, cache_size=cache_size)
