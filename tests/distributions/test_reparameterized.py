"""rsample gradients of the distributions built by transforming a reparameterized base
(HalfNormal, HalfCauchy, Pareto, Weibull, InverseGamma): the sample's derivative in its
scale parameter is sample / scale, as for any scale family."""
import pytest

import tensorlib as tl
import tensorlib.distributions as tld

SCALED = [("HalfNormal", lambda s: tld.HalfNormal(s)),
          ("HalfCauchy", lambda s: tld.HalfCauchy(s)),
          ("Pareto", lambda s: tld.Pareto(s, tl.tensor([2.0, 3.0], dtype=tl.float64))),
          ("Weibull", lambda s: tld.Weibull(s, tl.tensor([0.7, 2.0], dtype=tl.float64)))]


@pytest.mark.parametrize("name,build", SCALED, ids=[n for n, _ in SCALED])
def test_rsample_gradient_in_the_scale(name, build):
    scale = tl.tensor([0.5, 2.0], dtype=tl.float64, requires_grad=True)
    tl.manual_seed(3)
    x = build(scale).rsample((4,))
    x.sum().backward()
    expected = (x.detach() / scale.detach()).sum(0)
    assert tl.allclose(scale.grad, expected, rtol=1e-10)
    assert build(scale).has_rsample is True     # as torch's (each base reparameterizes)


def test_inverse_gamma_rsample_is_differentiable_and_positive():
    rate = tl.tensor([1.0, 3.0], dtype=tl.float64, requires_grad=True)
    x = tld.InverseGamma(tl.tensor([2.0, 4.0], dtype=tl.float64), rate).rsample((5,))
    assert bool((x > 0).all())
    x.sum().backward()      # InverseGamma is rate / Gamma(concentration, 1): d/d rate = x / rate
    assert tl.allclose(rate.grad, (x.detach() / rate.detach()).sum(0), rtol=1e-8)


def test_negative_binomial_samples_are_counts():
    d = tld.NegativeBinomial(tl.tensor([3.0, 10.0]), probs=tl.tensor([0.3, 0.6]))
    s = d.sample((2000,))
    assert tuple(s.shape) == (2000, 2) and bool((s >= 0).all()) and bool((s == s.round()).all())
    assert tl.allclose(s.mean(0), d.mean, rtol=0.15)


@pytest.mark.parametrize("build,low,high", [
    (lambda a: tld.Kumaraswamy(a, tl.tensor([2.0, 0.7], dtype=tl.float64)), 0.0, 1.0),
    (lambda a: tld.FisherSnedecor(a, tl.tensor([5.0, 9.0], dtype=tl.float64)), 0.0, None)])
def test_rsample_in_support_with_finite_gradients(build, low, high):
    a = tl.tensor([1.5, 3.0], dtype=tl.float64, requires_grad=True)
    x = build(a).rsample((50,))
    assert bool((x > low).all()) and (high is None or bool((x < high).all()))
    x.sum().backward()
    assert bool(tl.isfinite(a.grad).all()) and bool((a.grad != 0).any())


def test_generalized_pareto_matches_torch_in_float32():
    """(torch's log_prob and cdf compare concentration with a float32 zero, so they fail for
    float64 parameters: compared in float32)"""
    import numpy as np
    torch = pytest.importorskip("torch")
    conc = np.array([0.3, 0.0, -0.2, 0.6], np.float32)
    x = np.array([0.5, 1.0, 2.0, 3.0], np.float32)
    ours = tld.GeneralizedPareto(tl.tensor(0.1), tl.tensor(1.5), tl.tensor(conc))
    ref = torch.distributions.GeneralizedPareto(torch.tensor(0.1), torch.tensor(1.5),
                                                torch.tensor(conc))
    for method in ("log_prob", "cdf", "log_survival_function"):
        np.testing.assert_allclose(getattr(ours, method)(tl.tensor(x)).numpy(),
                                   getattr(ref, method)(torch.tensor(x)).numpy(), rtol=2e-5)
    u = np.array([0.1, 0.5, 0.9, 0.99], np.float32)
    np.testing.assert_allclose(ours.icdf(tl.tensor(u)).numpy(),
                               ref.icdf(torch.tensor(u)).numpy(), rtol=2e-5)
    scale = tl.tensor(1.5, requires_grad=True)
    s = tld.GeneralizedPareto(tl.tensor(0.0), scale, tl.tensor(conc)).rsample((3,))
    s.sum().backward()                  # loc 0: the sample is linear in the scale
    assert tl.allclose(scale.grad, (s.detach() / 1.5).sum(), rtol=1e-5)
