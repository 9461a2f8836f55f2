"""tensorlib.distributions (torch.distributions): probability distributions written in
tensorlib ops, so they run on every device and are differentiable. Samples come from
tensorlib's counter-based generator (tensorlib.rand/randn), so one seed gives the same
samples on every device; the samplers without an inverse CDF (Gamma and its relatives,
Poisson) are rejection samplers with a fixed number of vectorised rounds (_sampling.py)."""
from tensorlib.distributions import constraints, transforms  # noqa: F401
from tensorlib.distributions import constraint_registry  # noqa: F401
from tensorlib.distributions.constraint_registry import biject_to, transform_to
from tensorlib.distributions.bernoulli import Bernoulli
from tensorlib.distributions.beta import Beta
from tensorlib.distributions.binomial import Binomial
from tensorlib.distributions.categorical import Categorical
from tensorlib.distributions.cauchy import Cauchy
from tensorlib.distributions.chi2 import Chi2
from tensorlib.distributions.continuous_bernoulli import ContinuousBernoulli
from tensorlib.distributions.dirichlet import Dirichlet
from tensorlib.distributions.distribution import Distribution
from tensorlib.distributions.exp_family import ExponentialFamily
from tensorlib.distributions.exponential import Exponential
from tensorlib.distributions.fishersnedecor import FisherSnedecor
from tensorlib.distributions.gamma import Gamma
from tensorlib.distributions.generalized_pareto import GeneralizedPareto
from tensorlib.distributions.geometric import Geometric
from tensorlib.distributions.gumbel import Gumbel
from tensorlib.distributions.half_cauchy import HalfCauchy
from tensorlib.distributions.half_normal import HalfNormal
from tensorlib.distributions.independent import Independent
from tensorlib.distributions.inverse_gamma import InverseGamma
from tensorlib.distributions.kumaraswamy import Kumaraswamy
from tensorlib.distributions.kl import kl_divergence, register_kl
from tensorlib.distributions.laplace import Laplace
from tensorlib.distributions.lkj_cholesky import LKJCholesky
from tensorlib.distributions.log_normal import LogNormal
from tensorlib.distributions.logistic_normal import LogisticNormal
from tensorlib.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from tensorlib.distributions.mixture_same_family import MixtureSameFamily
from tensorlib.distributions.multinomial import Multinomial
from tensorlib.distributions.multivariate_normal import MultivariateNormal
from tensorlib.distributions.negative_binomial import NegativeBinomial
from tensorlib.distributions.normal import Normal
from tensorlib.distributions.one_hot_categorical import (OneHotCategorical,
                                                         OneHotCategoricalStraightThrough)
from tensorlib.distributions.pareto import Pareto
from tensorlib.distributions.poisson import Poisson
from tensorlib.distributions.relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from tensorlib.distributions.relaxed_categorical import (ExpRelaxedCategorical,
                                                         RelaxedOneHotCategorical)
from tensorlib.distributions.studentT import StudentT
from tensorlib.distributions.transformed_distribution import TransformedDistribution
from tensorlib.distributions.transforms import (AbsTransform, AffineTransform,  # noqa: F401
                                                ComposeTransform, ExpTransform,
                                                IndependentTransform, PowerTransform,
                                                ReshapeTransform, SigmoidTransform,
                                                SoftmaxTransform, SoftplusTransform,
                                                StickBreakingTransform, TanhTransform,
                                                Transform, identity_transform,
                                                LowerCholeskyTransform,
                                                PositiveDefiniteTransform, CatTransform,
                                                CorrCholeskyTransform,
                                                CumulativeDistributionTransform,
                                                StackTransform)
from tensorlib.distributions.uniform import Uniform
from tensorlib.distributions.von_mises import VonMises
from tensorlib.distributions.weibull import Weibull
from tensorlib.distributions.wishart import Wishart

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical",
           "Cauchy", "Chi2", "ComposeTransform", "Dirichlet", "Distribution",
           "ExpRelaxedCategorical",
           "ExpTransform", "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Gumbel",
           "Independent", "IndependentTransform", "Laplace", "LogNormal",
           "LogitRelaxedBernoulli", "LowRankMultivariateNormal", "MixtureSameFamily",
           "Multinomial", "MultivariateNormal", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Poisson", "PowerTransform",
           "RelaxedBernoulli", "RelaxedOneHotCategorical", "ReshapeTransform",
           "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
           "StickBreakingTransform", "StudentT", "TanhTransform", "Transform",
           "TransformedDistribution", "Uniform", "constraints", "HalfCauchy", "HalfNormal",
           "InverseGamma", "NegativeBinomial", "Pareto", "Weibull", "FisherSnedecor",
           "Kumaraswamy", "LogisticNormal", "GeneralizedPareto", "biject_to", "transform_to", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "identity_transform",
           "kl_divergence", "register_kl", "transforms", "CatTransform",
           "ContinuousBernoulli", "CorrCholeskyTransform", "CumulativeDistributionTransform",
           "LKJCholesky", "StackTransform", "VonMises", "Wishart"]
