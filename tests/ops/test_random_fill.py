"""poisson, binomial, _standard_gamma, cauchy_, geometric_, log_normal_: moments of many draws against the
distributions' (torch's generator differs by design), seeding, dtypes, torch's errors."""
import math

import pytest

import tensorlib

torch = pytest.importorskip("torch")

N = 40000


def test_poisson_moments_and_seeding(device):
    for rate in (0.7, 4.0, 35.0):
        x = tensorlib.poisson(tensorlib.full((N,), rate, device=device))
        assert x.dtype is tensorlib.float32 and bool((x == x.round()).all())
        assert abs(x.mean().item() - rate) < 5 * math.sqrt(rate / N)
        assert abs(x.var().item() / rate - 1) < 0.06
    g = tensorlib.Generator(device).manual_seed(4) if device == "cpu" else None
    if g is not None:
        rates = tensorlib.full((50,), 3.0)
        first = tensorlib.poisson(rates, g)
        assert tensorlib.equal(first, tensorlib.poisson(rates, g.manual_seed(4)))
    assert tensorlib.poisson(tensorlib.zeros(5, device=device)).sum().item() == 0


def test_binomial_moments(device):
    n, p = 12.0, 0.3
    x = tensorlib.binomial(tensorlib.full((N,), n, device=device),
                           tensorlib.full((N,), p, device=device))
    assert abs(x.mean().item() - n * p) < 0.05
    assert abs(x.var().item() - n * p * (1 - p)) < 0.1
    edge = tensorlib.binomial(tensorlib.tensor([3.0, -3.0, 5.0], device=device),
                              tensorlib.tensor([2.0, 0.2, 0.0], device=device))
    assert edge.tolist() == torch.binomial(torch.tensor([3.0, -3.0, 5.0]),
                                           torch.tensor([2.0, 0.2, 0.0])).tolist()


def test_standard_gamma_moments_edges_and_gradient():
    """torch._standard_gamma (zuko's generalized normal draws with it): Gamma(a, 1) moments,
    a per-generator stream, PyTorch's values where the draw is NaN (the dtype's tiny), and the
    implicit gradient dx/da, whose mean over draws is d(mean)/da = 1."""
    for a in (0.3, 2.5):
        x = tensorlib._standard_gamma(tensorlib.full((N,), a, dtype=tensorlib.float64))
        assert x.dtype is tensorlib.float64
        assert abs(x.mean().item() - a) < 5 * math.sqrt(a / N)
        assert abs(x.var().item() / a - 1) < 0.06
    g = tensorlib.Generator().manual_seed(7)
    first = tensorlib._standard_gamma(tensorlib.ones(20), generator=g)
    assert tensorlib.equal(first, tensorlib._standard_gamma(tensorlib.ones(20),
                                                            generator=g.manual_seed(7)))
    edges = [float("nan"), -3.0, 0.0, float("inf")]
    assert tensorlib._standard_gamma(tensorlib.tensor(edges)).tolist() == \
        torch._standard_gamma(torch.tensor(edges)).tolist()
    alpha = tensorlib.full((N,), 1.7, requires_grad=True)
    tensorlib._standard_gamma(alpha).mean().backward()
    assert abs(alpha.grad.sum().item() - 1) < 0.02


def test_standard_gamma_equals_pytorch_in_its_stream(pytorch_stream):
    alpha = [0.5, 2.0, 7.5]
    for dtype in ("float32", "float64"):
        tensorlib.manual_seed(3)
        torch.manual_seed(3)
        ours = tensorlib._standard_gamma(tensorlib.tensor(alpha, dtype=getattr(tensorlib, dtype)))
        assert ours.tolist() == torch._standard_gamma(
            torch.tensor(alpha, dtype=getattr(torch, dtype))).tolist()


def test_fills_moments(device):
    g = tensorlib.empty(N, dtype=tensorlib.float64, device=device).geometric_(0.25)
    assert g.min().item() >= 1 and abs(g.mean().item() - 4) < 0.1
    assert abs(g.var().item() - 12) < 0.8
    gi = tensorlib.empty(N, dtype=tensorlib.int64, device=device).geometric_(0.5)
    assert gi.dtype is tensorlib.int64 and abs(gi.double().mean().item() - 2) < 0.05
    ln = tensorlib.empty(N, dtype=tensorlib.float64, device=device).log_normal_(0.5, 0.3)
    assert abs(ln.log().mean().item() - 0.5) < 0.01 and abs(ln.log().std().item() - 0.3) < 0.01
    c = tensorlib.empty(N + 1, dtype=tensorlib.float64, device=device).cauchy_(2.0, 0.5)
    assert abs(c.median().item() - 2) < 0.03
    assert abs((c - 2).abs().median().item() - 0.5) < 0.03     # the half-width is sigma
    tensorlib.manual_seed(9)
    a = tensorlib.empty(8, device=device).cauchy_()
    tensorlib.manual_seed(9)
    assert tensorlib.equal(a, tensorlib.empty(8, device=device).cauchy_())


@pytest.mark.parametrize("call,error,message", [
    (lambda m: m.poisson(m.tensor([-1.0])), RuntimeError, "invalid Poisson rate"),
    (lambda m: m.poisson(m.tensor([1])), NotImplementedError, "poisson_cpu"),
    (lambda m: m.binomial(m.tensor([3]), m.tensor([0.2])), ValueError, "floating-point"),
    (lambda m: m._standard_gamma(m.tensor([3])), NotImplementedError, "gamma_cpu"),
    (lambda m: m._standard_gamma(m.ones(2, dtype=m.float16)), NotImplementedError, "gamma_cpu"),
    (lambda m: m.empty(3).cauchy_(0, -1), RuntimeError, "sigma > 0.0"),
    (lambda m: m.empty(3, dtype=m.int64).cauchy_(), RuntimeError, "continuous"),
    (lambda m: m.empty(3).geometric_(1.5), RuntimeError, r"p to be in \(0, 1\)"),
    (lambda m: m.empty(3).log_normal_(1, -1), RuntimeError, "std > 0.0"),
    (lambda m: m.empty(3, dtype=m.int64).log_normal_(), NotImplementedError, "log_normal"),
])
def test_errors_match_torch(call, error, message):
    for module in (tensorlib, torch):
        with pytest.raises(error, match=message):
            call(module)
