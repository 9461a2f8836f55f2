"""The CPU's 2-norm kernels (vector_norm_kernels.pyx) against torch and float64: whole tensors
and trailing dims, chunked over threads, strided inputs through the composite, special values,
the gradient (0 where the norm is 0) and gradcheck."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib_cpu import vector_norm_kernels

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype,tol", [("float32", 2e-6), ("float64", 1e-13)])
@pytest.mark.parametrize("shape,dim,keepdim", [((1024, 1024), None, False),
                                               ((1024, 1024), -1, False), ((1024, 1024), 1, True),
                                               ((1024, 1024), 0, False), ((3, 4, 5), (1, 2), False),
                                               ((300001,), None, True), ((2, 300000), -1, True),
                                               ((7,), 0, False)])
def test_norm_and_gradient_match_torch(shape, dim, keepdim, dtype, tol):
    """Rows split over threads, one long row split into chunks (over 65536 elements), a
    reduction over a leading dim (the composite), against torch and a float64 oracle."""
    a = np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)
    g_shape = torch.linalg.vector_norm(torch.tensor(a), 2, dim, keepdim).shape
    g = np.random.default_rng(1).standard_normal(tuple(g_shape)).astype(dtype)
    xt, xr = tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, want = tl.linalg.vector_norm(xt, 2, dim, keepdim), torch.linalg.vector_norm(xr, 2, dim,
                                                                                    keepdim)
    assert tuple(y.shape) == tuple(want.shape) and y.dtype == getattr(tl, dtype)
    exact = np.sqrt((a.astype(np.float64) ** 2).sum(axis=dim, keepdims=keepdim))
    np.testing.assert_allclose(y.detach().numpy(), exact, rtol=tol, atol=0)
    y.backward(tl.tensor(g))
    want.backward(torch.tensor(g))
    np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), rtol=tol * 10, atol=tol)


def test_norm_spellings_and_strided_inputs():
    a = np.random.default_rng(2).standard_normal((96, 700))
    x, r = tl.tensor(a), torch.tensor(a)
    for ours, theirs in ((x.norm(), r.norm()), (x.norm(dim=1), r.norm(dim=1)),
                         (x.t().norm(dim=0), r.t().norm(dim=0)),
                         (x[:, ::3].norm(), r[:, ::3].norm()),
                         (tl.linalg.norm(x), torch.linalg.norm(r)),
                         (x.norm(p="fro", dim=(0, 1)), r.norm(p="fro", dim=(0, 1)))):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-13)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_values_and_zero_norm_gradient(dtype):
    """NaN and inf rows give NaN and inf norms (and torch's gradients); squares past float32's
    range overflow to inf as in torch; a row of zeros (-0 included) gets a zero gradient."""
    big = 1e20 if dtype == "float32" else 1e200
    a = np.array([[1.0, np.nan, 2.0], [np.inf, 1.0, 0.0], [-0.0, 0.0, 0.0], [big, 1.0, 0.0]],
                 dtype=dtype)
    grads, norms = [], []
    for lib in (tl, torch):
        x = lib.tensor(a, requires_grad=True)
        y = lib.linalg.vector_norm(x, dim=1)
        y.backward(lib.tensor(np.array([1.0, 1.0, -1.0, 1.0], dtype=dtype)))
        norms.append(y.detach().numpy())
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(norms[0], norms[1])
    np.testing.assert_array_equal(grads[0], grads[1])
    assert np.signbit(grads[0][2]).tolist() == np.signbit(grads[1][2]).tolist()


def test_gradcheck_and_double_backward():
    x = tl.tensor(np.random.default_rng(3).standard_normal((3, 5)), requires_grad=True)
    for fn in (lambda t: tl.linalg.vector_norm(t), lambda t: t.norm(dim=1),
               lambda t: tl.linalg.vector_norm(t, 2, (0, 1), keepdim=True)):
        assert tl.autograd.gradcheck(fn, (x,))
        assert tl.autograd.gradgradcheck(fn, (x,))


def test_kernels_decline_other_orders_and_layouts():
    x = tl.ones(4, 6)
    out = tl.zeros(4)
    assert vector_norm_kernels.vector_norm(out, x, 1.0, (1,)) is False
    assert vector_norm_kernels.vector_norm(out, x.t().contiguous().t(), 2.0, (1,)) is False
    assert vector_norm_kernels.vector_norm(tl.zeros(6), x, 2.0, (0,)) is False
    assert vector_norm_kernels.vector_norm(out, x.int(), 2.0, (1,)) is False
    assert out.abs().sum().item() == 0
    assert vector_norm_kernels.vector_norm(out, x, 2.0, (1,)) is True
    np.testing.assert_allclose(out.numpy(), np.sqrt(6.0))
