"""The CPU's fused softmax/log_softmax (softmax.pyx): short rows go through the blocked path,
long rows the per-row one, many rows split across threads; every layout against numpy in
float64, forward and backward."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib_cpu import softmax as fused


def _oracle(x, log):
    shifted = x - x.max(axis=-1, keepdims=True)
    lse = np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return shifted - lse if log else np.exp(shifted - lse)


def _oracle_backward(g, y, log):
    if log:
        return g - np.exp(y) * g.sum(axis=-1, keepdims=True)
    return y * (g - (g * y).sum(axis=-1, keepdims=True))


@pytest.mark.parametrize("dtype,tol", [("float32", 2e-6), ("float64", 1e-13)])
@pytest.mark.parametrize("rows,n", [(1, 1), (63, 10), (64, 10), (65, 31), (130, 32),
                                    (3, 100), (4000, 10), (700, 64)])
@pytest.mark.parametrize("log", [False, True])
def test_fused_rows_match_float64(rows, n, log, dtype, tol):
    rng = np.random.default_rng(rows * 1000 + n)
    x = rng.standard_normal((rows, n)) * 4
    g = rng.standard_normal((rows, n))
    xt = tl.tensor(x, dtype=getattr(tl, dtype), requires_grad=True)
    op = tl.log_softmax if log else tl.softmax
    y = op(xt, -1)
    expected = _oracle(xt.detach().double().numpy(), log)
    np.testing.assert_allclose(y.detach().double().numpy(), expected, rtol=tol * 10,
                               atol=tol * 10)
    y.backward(tl.tensor(g, dtype=getattr(tl, dtype)))
    want = _oracle_backward(g.astype(dtype).astype(np.float64),
                            y.detach().double().numpy(), log)
    np.testing.assert_allclose(xt.grad.double().numpy(), want, rtol=tol * 50, atol=tol * 50)


@pytest.mark.parametrize("log", [False, True])
def test_extreme_rows_and_other_layouts(log):
    x = np.array([[0.0, -np.inf, 1.0], [1e4, 1e4 - 1.0, -1e4], [-np.inf, -np.inf, 0.0]])
    op = tl.log_softmax if log else tl.softmax
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = _oracle(x, log)
    np.testing.assert_allclose(op(tl.tensor(x), 1).numpy(), expected, rtol=1e-12)
    base = np.random.default_rng(1).standard_normal((6, 5, 4))
    t = tl.tensor(base)
    for view, dim in ((t.transpose(0, 2), 1), (t[:, ::2], -1), (t, 0)):
        got = op(view, dim).numpy()
        want = np.moveaxis(_oracle(np.moveaxis(view.numpy(), dim, -1), log), -1, dim)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_tensor_entry_declines_what_it_does_not_handle():
    """forward_tensor writes nothing and returns False for a layout it leaves to numpy."""
    x = tl.ones(4, 3)
    out = tl.zeros(3, 4)
    assert not fused.forward_tensor(out, x.t(), 1, True)          # strided input
    assert not fused.forward_tensor(tl.zeros(4, 3), x, 0, True)   # not the last dim
    assert not fused.forward_tensor(tl.zeros(4, 3, dtype=tl.float64), x, 1, True)
    assert out.abs().sum().item() == 0
    assert fused.forward_tensor(out.t(), x.t().contiguous().t(), 1, True) is False


@pytest.mark.parametrize("n", [3, 60])
def test_log_softmax_keeps_precision_at_large_logits(n):
    """(x - max) - log(sum): x - (max + log(sum)) lost |x| * eps, 2e-4 at 1e4 in float32
    where torch is exact to 1e-7."""
    x = (1e4 + np.random.default_rng(n).standard_normal((5, n))).astype(np.float32)
    got = tl.log_softmax(tl.tensor(x), 1).numpy().astype(np.float64)
    np.testing.assert_allclose(got, _oracle(x.astype(np.float64), True), atol=2e-6)


@pytest.mark.parametrize("n", [32, 33, 47, 64, 1000])
@pytest.mark.parametrize("log", [False, True])
def test_float32_vector_rows_with_tails_and_special_values(n, log):
    """Long float32 rows go 16 lanes at a time with the last vector masked: a row's tail
    neither reaches its sums nor memory past the row; NaN and -inf behave as in float64."""
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((4, n)) * 30).astype(np.float32)
    x[1, -1] = -np.inf
    x[2, 0] = 80.0                      # a large logit: exp(x - max) stays finite
    x[3, n // 2] = np.nan
    buffer = np.full(4 * n + 16, 7.0, np.float32)
    y = buffer[:4 * n].reshape(4, n)
    assert fused.forward(x, y, log)
    assert (buffer[4 * n:] == 7.0).all()
    with np.errstate(invalid="ignore"):
        expected = _oracle(x.astype(np.float64), log)
    np.testing.assert_allclose(y[:3], expected[:3], rtol=2e-5, atol=2e-6)
    assert np.isnan(y[3]).all()
    g = rng.standard_normal((4, n)).astype(np.float32)
    gi = np.empty_like(g)
    assert fused.backward(g, y, gi, log)
    want = _oracle_backward(g[:3].astype(np.float64), y[:3].astype(np.float64), log)
    np.testing.assert_allclose(gi[:3], want, rtol=2e-5, atol=2e-5)
