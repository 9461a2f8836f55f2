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


def _oracle_along(x, dim, log):
    return np.moveaxis(_oracle(np.moveaxis(x, dim, -1), log), -1, dim)


@pytest.mark.parametrize("dtype,tol", [("float32", 2e-6), ("float64", 1e-13)])
@pytest.mark.parametrize("shape,dim", [((1024, 1024), 0), ((8, 128, 72), 1), ((300, 7, 3), 0),
                                       ((5, 40, 130), -2), ((4, 3, 2, 65), 1), ((9, 1), 0)])
@pytest.mark.parametrize("log", [False, True])
def test_strided_dims_against_torch(shape, dim, log, dtype, tol):
    """A dim that is not the last goes through the column-block kernels: blocks of 64 columns
    with a partial last block, many outer indices, inner sizes of 1 to 1024, every column's
    sums and gradients as torch's."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    xt = tl.tensor(x, requires_grad=True)
    ref = torch.tensor(x, requires_grad=True)
    name = "log_softmax" if log else "softmax"
    y, want = getattr(tl, name)(xt, dim), getattr(torch, name)(ref, dim)
    np.testing.assert_allclose(y.detach().numpy(), want.detach().numpy(), rtol=tol * 10,
                               atol=tol * 10)
    np.testing.assert_allclose(y.detach().double().numpy(),
                               _oracle_along(x.astype(np.float64), dim, log),
                               rtol=tol * 10, atol=tol * 10)
    y.backward(tl.tensor(g))
    want.backward(torch.tensor(g))
    np.testing.assert_allclose(xt.grad.numpy(), ref.grad.numpy(), rtol=tol * 50, atol=tol * 50)


@pytest.mark.parametrize("log", [False, True])
def test_strided_dims_of_views_and_broadcast_grads(log):
    """A transposed or sliced input (copied once, then the kernels) and a broadcast gradient
    (sum's backward) give torch's values."""
    torch = pytest.importorskip("torch")
    base = np.random.default_rng(7).standard_normal((96, 130, 8))
    name = "log_softmax" if log else "softmax"
    for make in (lambda t: t.transpose(0, 2), lambda t: t[::2, 1:], lambda t: t.permute(1, 0, 2)):
        xt = make(tl.tensor(base)).requires_grad_(True)
        ref = make(torch.tensor(base)).requires_grad_(True)
        for dim in (0, 1):
            y, want = getattr(tl, name)(xt, dim), getattr(torch, name)(ref, dim)
            np.testing.assert_allclose(y.detach().numpy(), want.detach().numpy(), rtol=1e-12,
                                       atol=1e-14)
            y.sum().backward()
            want.sum().backward()
            np.testing.assert_allclose(xt.grad.numpy(), ref.grad.numpy(), atol=1e-13)
            xt.grad = ref.grad = None


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("log", [False, True])
def test_strided_special_values_match_torch(dtype, log):
    """A column with NaN is NaN throughout, one of all -inf is NaN, +inf makes NaN, a finite
    column beside them is untouched; large logits stay exact."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal((70, 3, 100)).astype(dtype)
    x[5, 1, 3] = np.nan
    x[:, 2, 64] = -np.inf
    x[:40, 0, 99] = -np.inf
    x[9, 0, 70] = np.inf
    x[:, 1, 80] += 1e4
    name = "log_softmax" if log else "softmax"
    got = getattr(tl, name)(tl.tensor(x), 0).numpy()
    want = getattr(torch, name)(torch.tensor(x), 0).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
    assert np.isnan(got[:, 1, 3]).all() and np.isnan(got[:, 2, 64]).all()
    assert np.isfinite(got[:, 0, 98]).all()


@pytest.mark.parametrize("log", [False, True])
def test_strided_gradcheck_float64(log):
    x = tl.tensor(np.random.default_rng(2).standard_normal((5, 4, 3)), requires_grad=True)
    op = tl.log_softmax if log else tl.softmax
    assert tl.autograd.gradcheck(lambda t: op(t, 0), (x,))
    assert tl.autograd.gradcheck(lambda t: op(t.transpose(0, 2), 1), (x,))
    assert tl.autograd.gradgradcheck(lambda t: op(t, 1), (x,))


def test_array_entry_takes_any_dim():
    """forward()/backward() on numpy arrays: dims other than the last, and False for a dim out
    of range or a half dtype (numpy's path then), writing nothing."""
    x = np.random.default_rng(4).standard_normal((6, 70, 5))
    y = np.empty_like(x)
    assert fused.forward(x, y, False, 1)
    np.testing.assert_allclose(y, _oracle_along(x, 1, False), rtol=1e-13)
    gi = np.empty_like(x)
    assert fused.backward(np.ones_like(x), y, gi, False, 1)
    np.testing.assert_allclose(gi, 0.0, atol=1e-15)
    out = np.zeros_like(x)
    assert not fused.forward(x, out, False, 3)
    assert not fused.forward(x.astype(np.float16), out.astype(np.float16), False, 0)
    assert (out == 0).all()
