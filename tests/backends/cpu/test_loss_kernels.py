"""The CPU's fused cross entropy kernels against a float64 numpy oracle and torch: every
reduction, ignored rows, strided and half-precision inputs, non-finite logits, the target
check, and the rows split across threads."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib_cpu import loss_kernels


def _oracle(x, t, ignore_index):
    """Per-row losses and d(sum of rows)/dx in float64."""
    x = x.astype(np.float64)
    keep = t != ignore_index
    safe = np.where(keep, t, 0)
    m = x.max(1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(x - m).sum(1))
    rows = np.where(keep, lse - x[np.arange(len(t)), safe], 0.0)
    p = np.exp(x - lse[:, None])
    p[np.arange(len(t)), safe] -= 1
    return rows, p * keep[:, None]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(128, 10), (3, 1), (300, 257)])
def test_cross_entropy_matches_float64(dtype, reduction, shape):
    r = np.random.default_rng(0)
    x = (r.standard_normal(shape) * 4).astype(dtype)
    t = r.integers(0, shape[1], shape[0])
    t[::5] = -100
    rows, grad = _oracle(x, t, -100)
    xt = tl.tensor(x, requires_grad=True)
    loss = F.cross_entropy(xt, tl.tensor(t), reduction=reduction)
    kept = (t != -100).sum()
    want = {"none": rows, "sum": rows.sum(), "mean": rows.sum() / kept}[reduction]
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(loss.detach().numpy(), want, rtol=tol, atol=tol)
    loss.sum().backward()
    scale = 1 / kept if reduction == "mean" else 1
    np.testing.assert_allclose(xt.grad.numpy(), grad * scale, rtol=tol, atol=tol)


@pytest.mark.parametrize("classes", [15, 16, 17, 32, 33])
def test_cross_entropy_rows_around_the_vector_width(classes):
    # float32 rows run 16 lanes at a time, the last vector masked: a row one short of,
    # exactly at and one past a whole vector, with its largest logit in the masked part
    r = np.random.default_rng(classes)
    x = (r.standard_normal((9, classes)) * 3).astype(np.float32)
    x[:, -1] += 20
    t = r.integers(0, classes, 9)
    rows, grad = _oracle(x, t, -100)
    xt = tl.tensor(x, requires_grad=True)
    loss = F.cross_entropy(xt, tl.tensor(t), reduction="sum")
    np.testing.assert_allclose(loss.item(), rows.sum(), rtol=1e-5)
    loss.backward()
    np.testing.assert_allclose(xt.grad.numpy(), grad, rtol=1e-5, atol=1e-6)


def test_cross_entropy_takes_strided_and_half_logits():
    r = np.random.default_rng(1)
    x = r.standard_normal((10, 6)).astype(np.float32)
    t = r.integers(0, 10, 6)
    got = F.cross_entropy(tl.tensor(x).t(), tl.tensor(t), reduction="none")
    np.testing.assert_allclose(got.numpy(), _oracle(x.T, t, -100)[0], rtol=1e-5)
    half = tl.tensor(x).to(tl.float16)
    got = F.cross_entropy(half.t(), tl.tensor(t), reduction="none")
    assert got.dtype == tl.float16
    want = _oracle(half.t().to(tl.float32).numpy(), t, -100)[0]
    np.testing.assert_allclose(got.to(tl.float32).numpy(), want, rtol=2e-3, atol=2e-3)


def test_cross_entropy_backward_takes_an_expanded_row_gradient():
    r = np.random.default_rng(2)
    x = r.standard_normal((7, 4))
    t = r.integers(0, 4, 7)
    grad_x = tl.empty(7, 4, dtype=tl.float64)
    loss_kernels.cross_entropy_backward(grad_x, tl.tensor(2.5, dtype=tl.float64).expand(7),
                                        tl.tensor(x), tl.tensor(t), -100)
    np.testing.assert_allclose(grad_x.numpy(), 2.5 * _oracle(x, t, -100)[1], rtol=1e-12)


def test_cross_entropy_out_of_range_target_raises_and_leaves_things_usable():
    x = tl.randn(4, 3, requires_grad=True)
    for bad in (3, -1):
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
            F.cross_entropy(x, tl.tensor([0, bad, 1, 2]))
    F.cross_entropy(x, tl.tensor([0, 2, 1, -100])).backward()
    assert x.grad.shape == (4, 3)


def test_cross_entropy_all_ignored_mean_is_nan_with_zero_gradient():
    x = tl.randn(3, 4, requires_grad=True)
    loss = F.cross_entropy(x, tl.tensor([-100, -100, -100]))
    assert np.isnan(loss.item())
    loss.backward()
    assert (x.grad.numpy() == 0).all()


def test_cross_entropy_non_finite_logits_match_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)
    x[1, 2], x[2, 0], x[3, :] = np.nan, np.inf, -np.inf
    t = np.array([0, 1, 2, 3])
    xt = tl.tensor(x, requires_grad=True)
    got = F.cross_entropy(xt, tl.tensor(t), reduction="none")
    got.sum().backward()
    xr = torch.tensor(x, requires_grad=True)
    want = torch.nn.functional.cross_entropy(xr, torch.tensor(t), reduction="none")
    want.sum().backward()
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_cross_entropy_double_backward_goes_through_ops():
    x = tl.randn(5, 3, dtype=tl.float64, requires_grad=True)
    t = tl.tensor([0, 1, 2, -100, 1])
    assert tl.autograd.gradgradcheck(lambda a: F.cross_entropy(a, t), (x,))
