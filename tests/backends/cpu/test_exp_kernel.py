"""The CPU backend's float32 exp (vexp.h: range reduction, polynomial, vscalefps) against
float64 numpy: within an ulp everywhere, the IEEE special values and the subnormal range
exact in kind, every tail length of the 16-lane loop, thread shares, in place, and the
layouts it leaves to numpy's loop."""
import numpy as np
import pytest

import tensorlib
from tensorlib_cpu import fastreduce


def _ulps(got, x):
    want = np.exp(x.astype(np.float64))
    with np.errstate(over="ignore"):
        spacing = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
        finite = np.isfinite(want.astype(np.float32))
    return np.abs(got.astype(np.float64)[finite] - want[finite]) / spacing[finite]


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_within_an_ulp_over_the_whole_range(threads):
    before = fastreduce.get_num_threads()
    fastreduce.set_num_threads(threads)
    try:
        rng = np.random.default_rng(0)
        x = np.concatenate([rng.uniform(-104, 89, 300_001), rng.uniform(-1, 1, 100_000),
                            np.linspace(-0.35, 0.35, 70_001)]).astype(np.float32)
        got = tensorlib.tensor(x).exp().numpy()
    finally:
        fastreduce.set_num_threads(before)
    assert _ulps(got, x).max() <= 1.0


def test_special_values_and_subnormal_results():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 88.72283, 88.7229, 100.0, -87.33655,
                  -95.0, -103.2, -103.98, -104.0, -200.0, 1e-30, -1e-30], np.float32)
    got = tensorlib.tensor(x).exp().numpy()
    with np.errstate(over="ignore", under="ignore"):
        want = np.exp(x.astype(np.float64)).astype(np.float32)
    assert np.isnan(got[0])
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_array_equal(got == 0, want == 0)
    sub = (want > 0) & (want < np.finfo(np.float32).tiny)
    assert sub.sum() >= 2 and np.all(got[sub] > 0)          # not flushed to zero
    np.testing.assert_allclose(got[1:], want[1:], rtol=3e-7, atol=2e-45)


@pytest.mark.parametrize("n", list(range(1, 40)) + [65_535, 65_536, 65_553, 131_089])
def test_every_tail_length(n):
    x = np.linspace(-5, 5, n, dtype=np.float32)
    out = tensorlib.tensor(x).exp().numpy()
    assert out.shape == (n,)
    assert _ulps(out, x).max() <= 1.0


def test_in_place_and_views_and_other_dtypes():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((70, 1000)).astype(np.float32)
    t = tensorlib.tensor(x)
    t.exp_()
    assert _ulps(t.numpy(), x).max() <= 1.0
    base = tensorlib.tensor(x)
    np.testing.assert_allclose(base.T.exp().numpy(), np.exp(x.T), rtol=2e-7)   # strided
    np.testing.assert_allclose(base[1:].exp().numpy(), np.exp(x[1:]), rtol=2e-7)
    d = rng.standard_normal(1000)
    np.testing.assert_allclose(tensorlib.tensor(d).exp().numpy(), np.exp(d), rtol=1e-15)
