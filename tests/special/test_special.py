"""tensorlib.special and the top-level special functions against torch (and scipy where
torch's own implementation is the less accurate one), on every test device, in float64 and
float32."""
import numpy as np
import pytest

import tensorlib as tl

from ..autograd._util import require_float64

torch = pytest.importorskip("torch")
sp = pytest.importorskip("scipy.special")

REAL = np.concatenate([np.linspace(-7.3, 30.0, 97), [0.5, 1.0, 2.0, 3.0, 0.0, -1.0, -2.0,
                                                    1e-3, 150.0]])
UNIT = np.concatenate([np.linspace(-1.0, 1.0, 81), [1 - 1e-12, -1 + 1e-14, 1e-20]])
PROB = np.concatenate([np.linspace(0.0, 1.0, 41), [1e-30, 1e-300, 1 - 1e-12]])
POSITIVE = np.linspace(0.1, 20.0, 40)


def _t(fn):
    """A torch function as numpy -> numpy (float64)."""
    return lambda v: fn(torch.tensor(v, dtype=torch.float64)).numpy()


# name, tensorlib function, the reference (numpy -> numpy: torch, or scipy where torch's
# bessel_j0/j1 are off by ~4e-7 and its trigamma by ~5e-10), inputs
CASES = [
    ("lgamma", tl.lgamma, _t(torch.lgamma), REAL),
    ("gammaln", tl.special.gammaln, _t(torch.special.gammaln), REAL),
    ("digamma", tl.digamma, _t(torch.digamma), REAL),
    ("psi", tl.special.psi, _t(torch.special.psi), POSITIVE),
    ("erfinv", tl.erfinv, _t(torch.erfinv), UNIT),
    ("ndtri", tl.special.ndtri, _t(torch.special.ndtri), PROB),
    ("ndtr", tl.special.ndtr, _t(torch.special.ndtr), REAL),
    ("log_ndtr", tl.special.log_ndtr, _t(torch.special.log_ndtr), np.linspace(-60.0, 10.0, 71)),
    ("i0", tl.i0, _t(torch.i0), REAL[np.abs(REAL) < 100]),
    ("i0e", tl.special.i0e, _t(torch.special.i0e), REAL),
    ("i1", tl.special.i1, _t(torch.special.i1), REAL[np.abs(REAL) < 100]),
    ("i1e", tl.special.i1e, _t(torch.special.i1e), REAL),
    ("sinc", tl.sinc, _t(torch.sinc), REAL),
    ("entr", tl.special.entr, _t(torch.special.entr), REAL),
    ("logit", tl.logit, _t(torch.logit), PROB),
    ("expit", tl.special.expit, _t(torch.special.expit), REAL),
    ("bessel_j0", tl.special.bessel_j0, sp.j0, REAL),
    ("bessel_j1", tl.special.bessel_j1, sp.j1, REAL),
    ("polygamma1", lambda x: tl.polygamma(1, x), lambda x: sp.polygamma(1, x), POSITIVE),
    ("polygamma2", lambda x: tl.special.polygamma(2, x), _t(lambda x: torch.polygamma(2, x)),
     POSITIVE),
    ("multigammaln", lambda x: tl.special.multigammaln(x, 3),
     _t(lambda x: torch.special.multigammaln(x, 3)), POSITIVE + 1.0),
    ("gammainc", lambda x: tl.special.gammainc(x, 2.5), _t(lambda x: torch.special.gammainc(
        x, torch.tensor(2.5, dtype=torch.float64))), POSITIVE),
    ("gammaincc", lambda x: tl.special.gammaincc(3.0, x), _t(lambda x: torch.special.gammaincc(
        torch.tensor(3.0, dtype=torch.float64), x)), POSITIVE * 3),
    ("zeta", lambda x: tl.special.zeta(x, 1.5), _t(lambda x: torch.special.zeta(x, 1.5)),
     np.linspace(1.5, 12.0, 22)),
]


def _compare(got, want, rtol):
    same_nonfinite = (~np.isfinite(want)) | (~np.isfinite(got))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[same_nonfinite & ~np.isnan(want)],
                                  want[same_nonfinite & ~np.isnan(want)])
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=rtol)


@pytest.mark.parametrize("name, ours, theirs, values", CASES, ids=[c[0] for c in CASES])
def test_float64(name, ours, theirs, values, device):
    require_float64(device)
    got = ours(tl.tensor(values, dtype=tl.float64, device=device))
    assert got.dtype == tl.float64 and got.device.type == tl.device(device).type
    _compare(got.cpu().numpy(), theirs(values), 1e-8 if name.startswith("gammainc") else 1e-10)


@pytest.mark.parametrize("name, ours, theirs, values", CASES[:8], ids=[c[0] for c in CASES[:8]])
def test_float32(name, ours, theirs, values):
    """float32 in, float32 out, computed in float64 inside: within float32 rounding."""
    values = values.astype(np.float32).astype(np.float64)
    got = ours(tl.tensor(values, dtype=tl.float32))
    assert got.dtype == tl.float32
    want = theirs(values)
    fin = np.isfinite(want) & (np.abs(want) < 1e30)
    np.testing.assert_allclose(got.numpy()[fin], want[fin], rtol=2e-6, atol=2e-6)


def test_xlogy_family(device):
    require_float64(device)
    x = np.array([0.0, 0.0, 1.5, -2.0, 3.0])
    y = np.array([0.0, np.nan, 2.0, 0.5, -1.0])
    for ours, theirs in [(tl.xlogy, torch.xlogy), (tl.special.xlog1py, torch.special.xlog1py)]:
        got = ours(tl.tensor(x, device=device), tl.tensor(y, device=device)).cpu().numpy()
        want = theirs(torch.tensor(x), torch.tensor(y)).numpy()
        np.testing.assert_allclose(got, want, equal_nan=True)
    got = tl.xlogy(2.0, tl.tensor(y[2:], device=device)).cpu().numpy()
    np.testing.assert_allclose(got, torch.xlogy(2.0, torch.tensor(y[2:])).numpy(),
                               equal_nan=True)


def test_gradients_match_torch():
    x = np.array([0.3, 1.7, 4.2])
    for ours, theirs in [(tl.lgamma, torch.lgamma), (tl.digamma, torch.digamma),
                         (tl.erfinv, lambda t: torch.erfinv(t / 5)),
                         (tl.special.i0e, torch.special.i0e), (tl.special.i1, torch.special.i1),
                         (tl.special.log_ndtr, torch.special.log_ndtr)]:
        a = tl.tensor(x, requires_grad=True)
        b = torch.tensor(x, requires_grad=True)
        scale = 5 if ours is tl.erfinv else 1
        ours(a / scale).sum().backward()
        theirs(b).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9)


def test_aliases_and_methods():
    x = tl.tensor([0.5, 2.0])
    np.testing.assert_allclose(x.lgamma().numpy(), tl.special.gammaln(x).numpy())
    np.testing.assert_allclose(x.polygamma(1).numpy(), tl.polygamma(1, x).numpy())
    np.testing.assert_allclose(tl.special.logsumexp(x, 0).numpy(), tl.logsumexp(x, 0).numpy())
    assert tl.lgamma(tl.tensor([3])).dtype == tl.float32       # integers: the default float
    with pytest.raises(RuntimeError, match="All elements must be greater than"):
        tl.mvlgamma(tl.tensor([0.5]), 3)
