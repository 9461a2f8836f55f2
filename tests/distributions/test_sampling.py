"""Samples: statistical tests at a fixed seed (KS for continuous laws, moments for discrete),
the same samples on every device for one seed, and rsample gradients against the
reparameterised formulas."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.distributions as tld

from ..autograd._util import require_float64

st = pytest.importorskip("scipy.stats")
special = pytest.importorskip("scipy.special")

N = 20000


def _f64(v, device="cpu"):
    return tl.tensor(v, dtype=tl.float64, device=device)


CONTINUOUS = [
    ("Normal", lambda dv: tld.Normal(_f64(0.5, dv), _f64(2.0, dv)), st.norm(0.5, 2.0)),
    ("Gamma-small", lambda dv: tld.Gamma(_f64(0.3, dv), _f64(2.0, dv)), st.gamma(0.3, scale=0.5)),
    ("Gamma", lambda dv: tld.Gamma(_f64(5.0, dv), _f64(1.0, dv)), st.gamma(5.0)),
    ("Chi2", lambda dv: tld.Chi2(_f64(3.0, dv)), st.chi2(3.0)),
    ("Beta", lambda dv: tld.Beta(_f64(2.0, dv), _f64(3.0, dv)), st.beta(2, 3)),
    ("StudentT", lambda dv: tld.StudentT(_f64(4.0, dv)), st.t(4)),
    ("Laplace", lambda dv: tld.Laplace(_f64(0.0, dv), _f64(1.5, dv)), st.laplace(0, 1.5)),
    ("Gumbel", lambda dv: tld.Gumbel(_f64(1.0, dv), _f64(2.0, dv)), st.gumbel_r(1, 2)),
    ("Cauchy", lambda dv: tld.Cauchy(_f64(0.0, dv), _f64(1.0, dv)), st.cauchy()),
    ("Exponential", lambda dv: tld.Exponential(_f64(2.0, dv)), st.expon(scale=0.5)),
    ("Uniform", lambda dv: tld.Uniform(_f64(-1.0, dv), _f64(3.0, dv)), st.uniform(-1, 4)),
    ("LogNormal", lambda dv: tld.LogNormal(_f64(0.0, dv), _f64(0.5, dv)), st.lognorm(0.5)),
]

DISCRETE = [
    ("Poisson-small", lambda dv: tld.Poisson(_f64(3.0, dv)), st.poisson(3)),
    ("Poisson-large", lambda dv: tld.Poisson(_f64(40.0, dv)), st.poisson(40)),
    ("Binomial", lambda dv: tld.Binomial(10, _f64(0.3, dv)), st.binom(10, 0.3)),
    ("Geometric", lambda dv: tld.Geometric(_f64(0.3, dv)), st.geom(0.3, loc=-1)),
    ("Bernoulli", lambda dv: tld.Bernoulli(_f64(0.3, dv)), st.bernoulli(0.3)),
]


@pytest.mark.parametrize("name, make, law", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_ks(name, make, law):
    tl.manual_seed(0)
    x = make("cpu").sample((N,)).numpy()
    assert st.kstest(x, law.cdf).pvalue > 1e-3


@pytest.mark.parametrize("name, make, law", DISCRETE, ids=[c[0] for c in DISCRETE])
def test_moments(name, make, law):
    tl.manual_seed(0)
    x = make("cpu").sample((N,)).numpy()
    sd = law.std()
    assert abs(x.mean() - law.mean()) < 5 * sd / np.sqrt(N)
    assert abs(x.var() - law.var()) < 0.05 * law.var()
    assert (x == np.round(x)).all() and (x >= 0).all()


def test_categorical_frequencies():
    tl.manual_seed(0)
    p = np.array([0.1, 0.2, 0.7])
    x = tld.Categorical(_f64(p)).sample((N,)).numpy()
    assert x.dtype == np.int64
    freq = np.bincount(x, minlength=3) / N
    assert np.abs(freq - p).max() < 5 * np.sqrt(0.25 / N)
    counts = tld.Multinomial(6, _f64(p)).sample((N,)).numpy()
    assert (counts.sum(-1) == 6).all()
    np.testing.assert_allclose(counts.mean(0), 6 * p, atol=0.03)


def test_mvn_covariance():
    tl.manual_seed(0)
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    x = tld.MultivariateNormal(_f64([1.0, -1.0]), _f64(cov)).sample((N,)).numpy()
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)
    np.testing.assert_allclose(x.mean(0), [1.0, -1.0], atol=0.04)


SAME_ON_DEVICES = CONTINUOUS + DISCRETE + [
    ("Dirichlet", lambda dv: tld.Dirichlet(_f64([0.5, 1.0, 3.0], dv)), None),
    ("Categorical", lambda dv: tld.Categorical(logits=_f64([0.0, 1.0, -1.0], dv)), None),
    ("MultivariateNormal", lambda dv: tld.MultivariateNormal(
        _f64([0.0, 1.0], dv), scale_tril=_f64([[1.0, 0.0], [0.5, 2.0]], dv)), None),
    ("RelaxedOneHotCategorical", lambda dv: tld.RelaxedOneHotCategorical(
        _f64(0.5, dv), logits=_f64([0.0, 1.0, -1.0], dv)), None),
]


@pytest.mark.parametrize("name, make, law", SAME_ON_DEVICES, ids=[c[0] for c in SAME_ON_DEVICES])
def test_same_samples_on_every_device(name, make, law, device):
    """One seed, the same samples: cpu is the reference."""
    require_float64(device)
    tl.manual_seed(3)
    ref = make("cpu").sample((200,)).numpy()
    tl.manual_seed(3)
    got = make(device).sample((200,))
    assert got.device.type == tl.device(device).type
    np.testing.assert_allclose(got.cpu().numpy(), ref, rtol=1e-9, atol=1e-12)


def test_normal_rsample_gradient(device):
    require_float64(device)
    loc = _f64([0.5, -1.0], device).requires_grad_()
    scale = _f64([2.0, 0.5], device).requires_grad_()
    tl.manual_seed(1)
    x = tld.Normal(loc, scale).rsample((50,))
    (x * x).sum().backward()
    eps = (x.detach() - loc.detach()) / scale.detach()
    np.testing.assert_allclose(loc.grad.cpu().numpy(), (2 * x.detach()).sum(0).cpu().numpy())
    np.testing.assert_allclose(scale.grad.cpu().numpy(),
                               (2 * x.detach() * eps).sum(0).cpu().numpy())


def test_gamma_rsample_gradient_is_the_implicit_one():
    """d x / d alpha at fixed u = F(x; alpha), against scipy's inverse incomplete gamma, over
    the series (alpha < 40) and the Wilson-Hilferty (alpha >= 40) regimes."""
    alpha = _f64([0.2, 1.0, 3.5, 12.0, 60.0, 300.0]).requires_grad_()
    rate = _f64(2.0).requires_grad_()
    tl.manual_seed(2)
    x = tld.Gamma(alpha, rate).rsample((4,))
    x.sum().backward()
    a = alpha.detach().numpy()
    xs = (x.detach() * 2.0).numpy()               # the standard-gamma draws
    u = special.gammainc(a, xs)
    h = 1e-6 * a
    numeric = (special.gammaincinv(a + h, u) - special.gammaincinv(a - h, u)) / (2 * h)
    np.testing.assert_allclose(alpha.grad.numpy(), (numeric / 2.0).sum(0), rtol=2e-4)
    np.testing.assert_allclose(rate.grad.numpy(), -(x.detach() / 2.0).sum().numpy(),
                               rtol=1e-9)


@pytest.mark.parametrize("which", ["Beta", "Dirichlet"])
def test_beta_dirichlet_rsample_gradient_is_unbiased(which):
    """E[d x / d a] = d E[x] / d a: b / (a + b)^2 for Beta(a, b)'s first component."""
    a = _f64([2.0]).requires_grad_()
    b = _f64([3.0])
    tl.manual_seed(4)
    if which == "Beta":
        x = tld.Beta(a, b).rsample((N,))
    else:
        x = tld.Dirichlet(tl.cat([a, b])).rsample((N,))[..., 0]
    x.mean().backward()
    assert abs(float(a.grad) - 3.0 / 25.0) < 0.004


def test_studentt_and_mvn_rsample_gradients():
    loc = _f64([1.0, 2.0]).requires_grad_()
    tl.manual_seed(5)
    tld.StudentT(_f64(5.0), loc, _f64(1.0)).rsample((7,)).sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [7.0, 7.0])
    loc.grad = None
    tld.MultivariateNormal(loc, _f64(np.eye(2))).rsample((3,)).sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [3.0, 3.0])


def test_kl_divergence_matches_torch():
    torch = pytest.importorskip("torch")
    td = torch.distributions
    pairs = [
        (lambda d: d.Normal(_lib(d, [0.0, 1.0]), _lib(d, [1.0, 2.0])),
         lambda d: d.Normal(_lib(d, [0.5, 0.0]), _lib(d, [2.0, 1.0]))),
        (lambda d: d.Gamma(_lib(d, [2.0]), _lib(d, [1.0])),
         lambda d: d.Gamma(_lib(d, [3.0]), _lib(d, [2.0]))),
        (lambda d: d.Beta(_lib(d, [2.0]), _lib(d, [1.5])),
         lambda d: d.Beta(_lib(d, [1.0]), _lib(d, [3.0]))),
        (lambda d: d.Dirichlet(_lib(d, [1.0, 2.0, 3.0])),
         lambda d: d.Dirichlet(_lib(d, [2.0, 2.0, 1.0]))),
        (lambda d: d.Categorical(_lib(d, [0.2, 0.3, 0.5])),
         lambda d: d.Categorical(_lib(d, [0.4, 0.4, 0.2]))),
        (lambda d: d.Bernoulli(_lib(d, [0.3])), lambda d: d.Bernoulli(_lib(d, [0.6]))),
        (lambda d: d.Exponential(_lib(d, [1.5])), lambda d: d.Exponential(_lib(d, [0.5]))),
        (lambda d: d.Exponential(_lib(d, [1.5])),
         lambda d: d.Gamma(_lib(d, [2.0]), _lib(d, [0.5]))),
        (lambda d: d.Laplace(_lib(d, [0.0]), _lib(d, [1.0])),
         lambda d: d.Laplace(_lib(d, [1.0]), _lib(d, [2.0]))),
        (lambda d: d.Poisson(_lib(d, [2.0])), lambda d: d.Poisson(_lib(d, [3.0]))),
        (lambda d: d.Uniform(_lib(d, [0.0]), _lib(d, [1.0])),
         lambda d: d.Uniform(_lib(d, [-1.0]), _lib(d, [2.0]))),
        (lambda d: d.Uniform(_lib(d, [0.0]), _lib(d, [1.0])),
         lambda d: d.Normal(_lib(d, [0.2]), _lib(d, [1.5]))),
        (lambda d: d.Normal(_lib(d, [0.0]), _lib(d, [1.0])),
         lambda d: d.Laplace(_lib(d, [0.2]), _lib(d, [1.5]))),
        (lambda d: d.Gumbel(_lib(d, [0.0]), _lib(d, [1.0])),
         lambda d: d.Gumbel(_lib(d, [0.5]), _lib(d, [2.0]))),
        (lambda d: d.Geometric(_lib(d, [0.3])), lambda d: d.Geometric(_lib(d, [0.6]))),
        (lambda d: d.Binomial(5, _lib(d, [0.3])), lambda d: d.Binomial(5, _lib(d, [0.6]))),
        (lambda d: d.MultivariateNormal(_lib(d, [0.0, 1.0]), _lib(d, [[2.0, 0.3], [0.3, 1.0]])),
         lambda d: d.MultivariateNormal(_lib(d, [1.0, 0.0]), _lib(d, [[1.0, -0.2], [-0.2, 1.5]]))),
        (lambda d: d.Independent(d.Normal(_lib(d, [0.0, 1.0]), _lib(d, [1.0, 2.0])), 1),
         lambda d: d.Independent(d.Normal(_lib(d, [0.5, 0.0]), _lib(d, [2.0, 1.0])), 1)),
    ]
    for make_p, make_q in pairs:
        ours = tld.kl_divergence(make_p(tld), make_q(tld))
        theirs = td.kl_divergence(make_p(td), make_q(td))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-9, atol=1e-12)
    with pytest.raises(NotImplementedError, match="No KL"):
        tld.kl_divergence(tld.Poisson(_f64(1.0)), tld.Normal(_f64(0.0), _f64(1.0)))


def _lib(d, values):
    if d is tld:
        return _f64(values)
    import torch
    return torch.tensor(values, dtype=torch.float64)


def test_register_kl():
    class MyNormal(tld.Normal):
        pass

    @tld.register_kl(MyNormal, MyNormal)
    def _kl(p, q):
        return tl.zeros(p.batch_shape) + 42.0
    p = MyNormal(_f64([0.0]), _f64([1.0]))
    assert float(tld.kl_divergence(p, p)) == 42.0
    assert float(tld.kl_divergence(tld.Normal(_f64(0.0), _f64(1.0)), p)) == 0.0


def test_register_kl_takes_a_librarys_own_distribution_base():
    """Pyro registers KLs against its own Distribution base, not a torch.distributions
    subclass; PyTorch's check lets any class through, and refuses non-classes."""
    class OwnBase:
        pass

    class Point(tld.Normal, OwnBase):
        pass

    @tld.register_kl(Point, OwnBase)
    def _kl(p, q):
        return tl.zeros(p.batch_shape) - 1.0
    p = Point(_f64([0.0]), _f64([1.0]))
    assert float(tld.kl_divergence(p, p)) == -1.0
    with pytest.raises(TypeError, match="type_q"):
        tld.register_kl(Point, "not a class")


def test_every_public_class_has_a_docstring():
    """Pyro builds its wrappers' docstrings from these (None broke its import)."""
    missing = [name for name in dir(tld) if isinstance(getattr(tld, name), type)
               and not getattr(tld, name).__doc__]
    assert not missing


def test_utils_private_names_libraries_import():
    # GPyTorch imports torch.distributions.utils._standard_normal
    from tensorlib.distributions.utils import _standard_normal, euler_constant
    z = _standard_normal((4000, 3), dtype=tl.float64, device="cpu")
    assert z.shape == (4000, 3) and z.dtype == tl.float64
    assert abs(z.mean().item()) < 0.05 and abs(z.var().item() - 1) < 0.05
    assert abs(euler_constant - 0.5772156649015329) < 1e-15
