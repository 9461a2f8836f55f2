"""Wishart(df, covariance_matrix | precision_matrix | scale_tril): positive-definite
matrices, sampled by Bartlett's decomposition (reparameterised through the Chi2 draws)."""
import math
import numbers
import warnings

import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions.chi2 import Chi2
from tensorlib.distributions.exp_family import ExponentialFamily
from tensorlib.distributions.multivariate_normal import _precision_to_scale_tril
from tensorlib.distributions.utils import finfo, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """sum_{i<p} digamma(x - i/2), the derivative of mvlgamma."""
    if not bool((x > (p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    shifts = tensorlib.arange(p, dtype=x.dtype, device=x.device) / 2
    return tensorlib.digamma(x.unsqueeze(-1) - shifts).sum(-1)


class Wishart(ExponentialFamily):
    """Wishart(df, covariance_matrix / precision_matrix / scale_tril): distributions of
    positive-definite matrices."""
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = tensorlib.Size(param.shape[:-2])
            self.df = tensorlib.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = tensorlib.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if bool((self.df <= event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{event_shape[-1] - 1}.")
        expanded = param.expand(tuple(batch_shape) + (-1, -1))
        if scale_tril is not None:
            self.scale_tril = expanded
        elif covariance_matrix is not None:
            self.covariance_matrix = expanded
        else:
            self.precision_matrix = expanded
        if bool((self.df < event_shape[-1]).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = tensorlib.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape):
        """Bartlett's diagonal: the i-th is sqrt(Chi2(df - i))."""
        tril = self._unbroadcasted_scale_tril
        shifts = tensorlib.arange(self._event_shape[-1], dtype=tril.dtype, device=tril.device)
        return Chi2(df=self.df.unsqueeze(-1) - shifts.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = tensorlib.Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        tril = self._unbroadcasted_scale_tril
        identity = tensorlib.eye(self._event_shape[-1], device=tril.device, dtype=tril.dtype)
        return tensorlib.cholesky_solve(identity, tril).expand(
            self._batch_shape + self._event_shape)

    def _df_matrix(self, df):
        return df.view(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = tensorlib.where(factor <= 0, math.nan, factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        cov = self.covariance_matrix
        diag = cov.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (cov * cov + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape):
        p = self._event_shape[-1]
        chi = self._dist_chi2.rsample(sample_shape).sqrt()
        diag = chi.clamp(min=finfo(chi.dtype).eps).diag_embed(dim1=-2, dim2=-1)
        lower = tensorlib.randn(tuple(sample_shape) + tuple(self._batch_shape) + (p, p),
                                dtype=diag.dtype, device=diag.device).tril(-1)
        chol = self._unbroadcasted_scale_tril @ (diag + lower)
        return chol @ chol.mT

    def rsample(self, sample_shape=tensorlib.Size(), max_try_correction=None):
        """Bartlett draws; a singular draw (possible when df < ndim) is redrawn up to
        max_try_correction (10) times, warning as PyTorch; one left singular gives -inf
        in log_prob."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample_shape = tensorlib.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = self._singular(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample = tensorlib.where(singular, self._bartlett_sampling(sample_shape),
                                         sample)
                singular = self._singular(sample)
                if not bool(singular.any()):
                    break
        return sample

    def _singular(self, sample):
        """Per draw (reduced over the batch, as PyTorch), shaped to broadcast on samples."""
        bad = ~self.support.check(sample)
        if self._batch_shape:
            bad = bad.amax(self._batch_dims)
            bad = bad.reshape(bad.shape + (1,) * len(self._batch_shape))
        return bad.unsqueeze(-1).unsqueeze(-1)

    def _log_scale_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        trace = tensorlib.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + self._log_scale_det()) - tensorlib.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * tensorlib.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * (p * _LOG_2 / 2 + self._log_scale_det())
                + tensorlib.mvlgamma(nu / 2, p=p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
                + nu * p / 2)

    @property
    def _natural_params(self):
        return -self.precision_matrix / 2, (self.df - self._event_shape[-1] - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-tensorlib.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + tensorlib.mvlgamma(y + (p + 1) / 2, p=p))
