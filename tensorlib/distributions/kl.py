"""kl_divergence(p, q) and register_kl (torch.distributions.kl): closed forms looked up by
the most specific registered pair of types."""
import math
import warnings

import tensorlib
from tensorlib.distributions.bernoulli import Bernoulli
from tensorlib.distributions.beta import Beta
from tensorlib.distributions.binomial import Binomial
from tensorlib.distributions.categorical import Categorical
from tensorlib.distributions.cauchy import Cauchy
from tensorlib.distributions.dirichlet import Dirichlet
from tensorlib.distributions.exponential import Exponential
from tensorlib.distributions.gamma import Gamma
from tensorlib.distributions.geometric import Geometric
from tensorlib.distributions.gumbel import Gumbel
from tensorlib.distributions.independent import Independent
from tensorlib.distributions.laplace import Laplace
from tensorlib.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from tensorlib.distributions.multivariate_normal import MultivariateNormal, _batch_mahalanobis
from tensorlib.distributions.normal import Normal
from tensorlib.distributions.one_hot_categorical import OneHotCategorical
from tensorlib.distributions.poisson import Poisson
from tensorlib.distributions.transformed_distribution import TransformedDistribution
from tensorlib.distributions.uniform import Uniform
from tensorlib.distributions.utils import _sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY = {}
_KL_MEMOIZE = {}


def register_kl(type_p, type_q):
    """Decorator registering fn(p, q) as KL(p || q) for p of type_p and q of type_q. Any
    classes are taken, as PyTorch's check lets them through: a library's own distribution
    base (Pyro's) registers KLs against it."""
    if not isinstance(type_p, type):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun
    return decorator


def _dispatch_kl(type_p, type_q):
    matches = [(super_p, super_q) for super_p, super_q in _KL_REGISTRY
               if issubclass(type_p, super_p) and issubclass(type_q, super_q)]
    if not matches:
        return NotImplemented

    def rank(pair):
        return type_p.__mro__.index(pair[0]), type_q.__mro__.index(pair[1])
    left = min(matches, key=rank)
    right = min(matches, key=lambda pair: rank(pair)[::-1])
    if left != right:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please "
                      f"register_kl({left[0].__name__}, {right[1].__name__})", RuntimeWarning)
    return _KL_REGISTRY[left]


def kl_divergence(p, q):
    """KL(p || q), batched over the distributions' batch shape."""
    key = type(p), type(q)
    fun = _KL_MEMOIZE.get(key)
    if fun is None:
        fun = _dispatch_kl(*key)
        _KL_MEMOIZE[key] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


def _infinite_like(t):
    return tensorlib.full_like(t, math.inf)


def _x_log_x(t):
    return t * t.log()


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    sp = tensorlib.nn.functional.softplus
    t1 = p.probs * (sp(-q.logits) - sp(-p.logits))
    t1 = tensorlib.where(q.probs == 0, math.inf, t1)
    t1 = tensorlib.where(p.probs == 0, 0.0, t1)
    t2 = (1 - p.probs) * (sp(q.logits) - sp(p.logits))
    t2 = tensorlib.where(q.probs == 1, math.inf, t2)
    t2 = tensorlib.where(p.probs == 1, 0.0, t2)
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    lg, dg = tensorlib.lgamma, tensorlib.digamma
    sum_params_p = p.concentration1 + p.concentration0
    sum_params_q = q.concentration1 + q.concentration0
    t1 = lg(q.concentration1) + lg(q.concentration0) + lg(sum_params_p)
    t2 = lg(p.concentration1) + lg(p.concentration0) + lg(sum_params_q)
    t3 = (p.concentration1 - q.concentration1) * dg(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * dg(p.concentration0)
    t5 = (sum_params_q - sum_params_p) * dg(sum_params_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > "
                                  "p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits)
                          + (-p.probs).log1p() - (-q.probs).log1p())
    inf_idxs = p.total_count > q.total_count
    return tensorlib.where(inf_idxs, math.inf, kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = tensorlib.where(q.probs == 0, math.inf, t)
    t = tensorlib.where(p.probs == 0, 0.0, t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    lg, dg = tensorlib.lgamma, tensorlib.digamma
    sum_p_concentration = p.concentration.sum(-1)
    sum_q_concentration = q.concentration.sum(-1)
    t1 = lg(sum_p_concentration) - lg(sum_q_concentration)
    t2 = (lg(p.concentration) - lg(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = dg(p.concentration) - dg(sum_p_concentration).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    t1 = -rate_ratio.log()
    return t1 + rate_ratio - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    lg, dg = tensorlib.lgamma, tensorlib.digamma
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = lg(q.concentration) - lg(p.concentration)
    t3 = (p.concentration - q.concentration) * dg(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * 0.57721566490153286060
    t3 = (ct2 + tensorlib.lgamma(1 + ct1) - ct3).exp()
    return t1 + t2 + t3 - (1 + 0.57721566490153286060)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    outside = (q.low > p.low) | (q.high < p.high)
    return tensorlib.where(outside, math.inf, result)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * (ratio).log()
    return (t1 + ratio + tensorlib.lgamma(q.concentration)
            + q.concentration * 0.57721566490153286060 - (1 + 0.57721566490153286060))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = scale_ratio.log()
    t2 = math.sqrt(2 / math.pi) * p.scale * (-0.5 * loc_diff_scale_ratio.pow(2)).exp()
    t3 = loc_diff * tensorlib.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different "
                         "event shapes cannot be computed")
    half_term1 = (q._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)
                  - p._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1))
    combined_batch_shape = tensorlib.broadcast_shapes(q._unbroadcasted_scale_tril.shape[:-2],
                                                      p._unbroadcasted_scale_tril.shape[:-2])
    n = p.event_shape[0]
    q_scale_tril = q._unbroadcasted_scale_tril.expand(tuple(combined_batch_shape) + (n, n))
    p_scale_tril = p._unbroadcasted_scale_tril.expand(tuple(combined_batch_shape) + (n, n))
    term2 = tensorlib.linalg.solve_triangular(q_scale_tril, p_scale_tril, upper=False) \
        .pow(2).sum((-2, -1))
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmvn_lowrankmvn(p, q):
    return _kl_multivariatenormal_multivariatenormal(
        MultivariateNormal(p.loc, scale_tril=p.scale_tril),
        MultivariateNormal(q.loc, scale_tril=q.scale_tril))


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independents with different "
                                  "reinterpreted_batch_ndims is not implemented")
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError("KL between TransformedDistributions with different "
                                  "transforms is not implemented")
    if p.event_shape != q.event_shape:
        raise NotImplementedError("KL between TransformedDistributions with different "
                                  "event shapes is not implemented")
    return kl_divergence(p.base_dist, q.base_dist)
