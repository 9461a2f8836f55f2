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
