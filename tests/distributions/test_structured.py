"""VonMises, ContinuousBernoulli, LKJCholesky, Wishart and the Cat/Stack/CorrCholesky/
CumulativeDistribution transforms against torch.distributions on the same parameters, on
every test device (float64)."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.distributions as tld

torch = pytest.importorskip("torch")
td = torch.distributions

R = np.random.default_rng(11)
M = R.normal(size=(2, 3, 3))
COV = M @ np.swapaxes(M, -1, -2) + np.eye(3)
PROBS = np.array([0.05, 0.3, 0.4995, 0.5003, 0.8, 0.97])


def _pair(device, make):
    """The same distribution built in tensorlib (on device) and torch from numpy params."""
    ours = make(tld, lambda a: tl.tensor(a, dtype=tl.float64, device=device))
    theirs = make(td, lambda a: torch.tensor(a, dtype=torch.float64))
    return ours, theirs


def _close(ours, theirs, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(ours.detach().cpu().numpy(), theirs.detach().numpy(),
                               rtol=rtol, atol=atol)


DISTS = {
    "VonMises": (lambda d, t: d.VonMises(t([0.3, -1.0, 2.0]), t([0.5, 3.0, 9.0])),
                 R.uniform(-4, 4, size=(4, 3))),
    "ContinuousBernoulli": (lambda d, t: d.ContinuousBernoulli(probs=t(PROBS)),
                            R.uniform(0.01, 0.99, size=(4, 6))),
    "ContinuousBernoulliLogits": (
        lambda d, t: d.ContinuousBernoulli(logits=t(np.log(PROBS / (1 - PROBS)))),
        R.uniform(0.01, 0.99, size=(4, 6))),
}


@pytest.mark.parametrize("name", sorted(DISTS))
def test_scalar_distributions_match_torch(device, name):
    make, x = DISTS[name]
    ours, theirs = _pair(device, make)
    value = tl.tensor(x, dtype=tl.float64, device=device)
    _close(ours.log_prob(value), theirs.log_prob(torch.tensor(x)))
    for attr in ("mean", "variance", "mode") if name == "VonMises" else ("mean", "variance",
                                                                         "stddev"):
        _close(getattr(ours, attr), getattr(theirs, attr))
    if name != "VonMises":
        _close(ours.entropy(), theirs.entropy())
        _close(ours.cdf(value), theirs.cdf(torch.tensor(x)))
        _close(ours.icdf(value), theirs.icdf(torch.tensor(x)))
    sample = ours.sample((5, 2))
    assert tuple(sample.shape) == (5, 2) + tuple(theirs.batch_shape)
    assert bool(ours.support.check(sample).all())
    assert tuple(ours.expand((4,) + tuple(theirs.batch_shape)).sample().shape) == \
        (4,) + tuple(theirs.batch_shape)


def test_von_mises_samples_follow_the_distribution(device):
    """The circular mean resultant E cos(x - loc) is I_1(k) / I_0(k) = 1 - variance."""
    ours = tld.VonMises(tl.tensor([1.0, -2.0], device=device), tl.tensor([0.01, 4.0],
                                                                          device=device))
    samples = ours.sample((20000,))
    assert samples.dtype == tl.float32 and bool((samples.abs() <= np.pi).all())
    resultant = (samples - ours.loc).cos().mean(0).cpu().numpy()
    np.testing.assert_allclose(resultant, 1 - ours.variance.cpu().numpy(), atol=0.02)
    assert not tld.VonMises(0.0, 1.0).has_rsample


def test_continuous_bernoulli_rsample_gradient(device):
    probs = tl.tensor([0.2, 0.7], dtype=tl.float64, device=device, requires_grad=True)
    tld.ContinuousBernoulli(probs=probs).rsample((50,)).sum().backward()
    assert probs.grad is not None and bool(tl.isfinite(probs.grad).all())


def test_lkj_cholesky(device):
    conc = np.array([0.5, 1.0, 4.0])
    ours, theirs = _pair(device, lambda d, t: d.LKJCholesky(4, t(conc)))
    sample = ours.sample((6,))
    assert tuple(sample.shape) == (6, 3, 4, 4)
    assert bool(tld.constraints.corr_cholesky.check(sample).all())
    _close(ours.log_prob(sample), theirs.log_prob(torch.tensor(sample.cpu().numpy())))
    assert tuple(ours.expand((2, 3)).sample().shape) == (2, 3, 4, 4)


@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart(device, param):
    matrix = np.linalg.cholesky(COV) if param == "scale_tril" else COV
    df = np.array([4.0, 7.5])
    ours, theirs = _pair(device, lambda d, t: d.Wishart(t(df), **{param: t(matrix)}))
    x = theirs.sample((3,))
    _close(ours.log_prob(tl.tensor(x.numpy(), device=device)), theirs.log_prob(x), rtol=1e-9)
    for attr in ("mean", "variance", "mode", "covariance_matrix", "precision_matrix",
                 "scale_tril"):
        _close(getattr(ours, attr), getattr(theirs, attr), rtol=1e-9)
    _close(ours.entropy(), theirs.entropy())
    sample = ours.rsample((5,))
    assert tuple(sample.shape) == (5, 2, 3, 3)
    assert bool(tld.constraints.positive_definite.check(sample).all())


def test_wishart_rsample_gradient_and_mean(device):
    df = tl.tensor(6.0, dtype=tl.float64, device=device, requires_grad=True)
    cov = tl.tensor(COV[0], dtype=tl.float64, device=device)
    dist = tld.Wishart(df, covariance_matrix=cov)
    draws = dist.rsample((4000,))
    draws.sum().backward()
    assert df.grad is not None and bool(tl.isfinite(df.grad))
    np.testing.assert_allclose((draws.mean(0) / dist.mean).detach().cpu().numpy(), 1.0,
                               atol=0.12)


def test_validate_args_errors():
    with pytest.raises(ValueError):
        tld.VonMises(0.0, -1.0, validate_args=True)
    with pytest.raises(ValueError):
        tld.ContinuousBernoulli(probs=1.5, validate_args=True)
    with pytest.raises(ValueError, match="probs or `logits`|Either"):
        tld.ContinuousBernoulli()
    with pytest.raises(ValueError):
        tld.ContinuousBernoulli(probs=0.3, validate_args=True).log_prob(tl.tensor(1.5))
    with pytest.raises(ValueError, match="dim=1"):
        tld.LKJCholesky(1)
    with pytest.raises(ValueError):
        tld.LKJCholesky(3, -1.0, validate_args=True)
    with pytest.raises(ValueError, match="ndim - 1"):
        tld.Wishart(1.0, covariance_matrix=tl.eye(3))
    with pytest.raises(AssertionError):
        tld.Wishart(5.0, covariance_matrix=tl.eye(3), scale_tril=tl.eye(3))
    with pytest.warns(UserWarning, match="Low df"):
        tld.Wishart(2.5, covariance_matrix=tl.eye(3))


def _transform_pair(device, make, x):
    ours, theirs = make(tld), make(td)
    xo, xt = tl.tensor(x, dtype=tl.float64, device=device), torch.tensor(x)
    yo, yt = ours(xo), theirs(xt)
    _close(yo, yt)
    _close(ours.inv(yo), theirs.inv(yt))
    _close(ours.log_abs_det_jacobian(xo, yo), theirs.log_abs_det_jacobian(xt, yt))
    return ours, theirs


def test_cat_and_stack_transforms(device):
    x = R.normal(size=(2, 4, 3))
    ours, _ = _transform_pair(device, lambda d: d.CatTransform(
        [d.ExpTransform(), d.AffineTransform(1.0, 3.0), d.SigmoidTransform()], dim=1,
        lengths=[1, 2, 1]), x)
    assert ours.bijective and ours.length == 4
    assert bool(ours.codomain.check(ours(tl.tensor(x, device=device))).all())
    _transform_pair(device, lambda d: d.StackTransform(
        [d.ExpTransform(), d.TanhTransform(), d.AffineTransform(0.0, 2.0)], dim=-1), x)
    # a transform with event_dim 1 in a cat: the Jacobian is summed over the event
    _transform_pair(device, lambda d: d.CatTransform(
        [d.IndependentTransform(d.ExpTransform(), 1), d.IndependentTransform(
            d.AffineTransform(0.0, 2.0), 1)], dim=0, lengths=[1, 1]), x)
    with pytest.raises(AssertionError):
        tld.CatTransform([tld.ExpTransform()], dim=0, lengths=[2])(tl.zeros(3))
    with pytest.raises(AssertionError):
        tld.StackTransform([tld.ExpTransform()], dim=0)(tl.zeros(3))


def test_corr_cholesky_transform(device):
    x = R.normal(size=(4, 6))
    ours, _ = _transform_pair(device, lambda d: d.CorrCholeskyTransform(), x)
    y = ours(tl.tensor(x, device=device))
    assert tuple(y.shape) == (4, 4, 4)
    assert bool(tld.constraints.corr_cholesky.check(y).all())
    assert ours.forward_shape((5, 6)) == (5, 4, 4) and ours.inverse_shape((4, 4)) == (6,)
    with pytest.raises(ValueError, match="lower-diagonal"):
        ours.forward_shape((5,))
    assert isinstance(tld.biject_to(tld.constraints.corr_cholesky), tld.CorrCholeskyTransform)
    assert isinstance(tld.transform_to(tld.constraints.corr_cholesky),
                      tld.CorrCholeskyTransform)


def test_cdf_transform(device):
    x = R.normal(size=(5,))
    ours, _ = _transform_pair(device, lambda d: d.CumulativeDistributionTransform(
        d.Normal(0.5, 2.0)), x)
    assert ours.codomain is tld.constraints.unit_interval
    assert ours.with_cache(1)._cache_size == 1


def test_registry_cat_and_stack():
    cat = tld.constraints.cat([tld.constraints.positive, tld.constraints.real], 0, [2, 1])
    transform = tld.biject_to(cat)
    y = transform(tl.tensor([-1.0, 0.0, -3.0]))
    np.testing.assert_allclose(y.numpy(), [np.exp(-1), 1.0, -3.0])
    stack = tld.constraints.stack([tld.constraints.unit_interval, tld.constraints.positive], 1)
    y = tld.transform_to(stack)(tl.zeros(3, 2))
    np.testing.assert_allclose(y.numpy(), [[0.5, 1.0]] * 3)
