"""Gradients of broadcast inputs are summed back to the input's shape; gradients have the
input's dtype when dtypes are mixed; on every test device."""
import numpy as np
import pytest

import tensorlib as tl

from ._util import assert_on, close, leaf, npy, require_float64


def _leaf(shape, dtype=tl.float64, seed=0, device="cpu"):
    rng = np.random.default_rng(seed)
    return leaf(rng.standard_normal(shape), dtype=dtype, device=device)


@pytest.mark.parametrize("sa, sb", [
    ((3, 1), (1, 4)),
    ((3, 4), (4,)),
    ((3, 4), ()),
    ((2, 1, 4), (3, 1)),
    ((1,), (5,)),
    ((), ()),
])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_broadcast_grad_shapes_and_values(sa, sb, op, device):
    a, b = _leaf(sa, seed=1, device=device), _leaf(sb, seed=2, device=device)
    with tl.no_grad():
        b.add_(tl.sign(b) * 0.5)                         # keep away from 0 for div
    out = getattr(tl, op)(a, b)
    w = tl.tensor(np.random.default_rng(3).standard_normal(tuple(out.shape)), device=device)
    (out * w).sum().backward()
    assert a.grad.shape == a.shape and b.grad.shape == b.shape
    assert_on(device, a.grad, b.grad)
    av, bv, wv = npy(a), npy(b), npy(w)
    shape = np.broadcast_shapes(av.shape, bv.shape)
    da = {"add": np.ones(shape), "sub": np.ones(shape), "mul": np.broadcast_to(bv, shape),
          "div": np.broadcast_to(1 / bv, shape)}[op] * wv
    db = {"add": np.ones(shape), "sub": -np.ones(shape), "mul": np.broadcast_to(av, shape),
          "div": np.broadcast_to(-av / bv ** 2, shape)}[op] * wv

    def reduce(g, target):
        g = g.sum(axis=tuple(range(g.ndim - len(target))))
        return g.sum(axis=tuple(i for i, n in enumerate(target) if n == 1), keepdims=True)
    close(a.grad, reduce(da, av.shape))
    close(b.grad, reduce(db, bv.shape))


def test_scalar_tensor_grad_is_0d(device):
    require_float64(device)
    s = tl.tensor(2.0, dtype=tl.float64, requires_grad=True, device=device)
    (s * tl.ones(2, 3, dtype=tl.float64, device=device)).sum().backward()
    assert s.grad.shape == () and s.grad.item() == 6.0


def test_python_scalar_operands(device):
    x = _leaf((3,), device=device)
    (2.0 * x + 1 - x / 4 + 3 ** x).sum().backward()
    xv = npy(x)
    close(x.grad, 2 - 0.25 + np.log(3) * 3 ** xv)


def test_expand_grad_sums(device):
    require_float64(device)
    e = tl.tensor([[1.0], [2.0]], dtype=tl.float64, requires_grad=True, device=device)
    (e.expand(2, 3) * tl.tensor([1.0, 2.0, 3.0], dtype=tl.float64,
                                device=device)).sum().backward()
    close(e.grad, [[6.0], [6.0]])
    v = tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True, device=device)
    v.expand(4, 3, 2).sum().backward()
    close(v.grad, [12.0, 12.0])


@pytest.mark.parametrize("da, db", [
    (tl.float64, tl.float32), (tl.float32, tl.float64), (tl.float32, tl.float16),
    (tl.float64, tl.float16)])
def test_grad_dtype_equals_input_dtype(da, db, device):
    require_float64(device)
    a = tl.tensor([1.0, 2.0], dtype=da, requires_grad=True, device=device)
    b = tl.tensor([3.0, 4.0], dtype=db, requires_grad=True, device=device)
    out = a * b + a
    assert out.dtype == tl.promote_types(da, db)
    out.sum().backward()
    assert a.grad.dtype == da and b.grad.dtype == db
    close(a.grad, [4.0, 5.0], rtol=1e-3)
    close(b.grad, [1.0, 2.0], rtol=1e-3)


def test_grad_dtype_through_casts_and_integer_operands(device):
    require_float64(device)
    a = tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True, device=device)
    y = a.float()
    assert y.dtype == tl.float32 and y.grad_fn is not None
    (y * y).sum().backward()
    assert a.grad.dtype == tl.float64
    close(a.grad, [2.0, 4.0])
    b = tl.tensor([1.0, 2.0], dtype=tl.float32, requires_grad=True, device=device)
    (b * tl.tensor([3, 4], device=device)).sum().backward()
    assert b.grad.dtype == tl.float32
    close(b.grad, [3.0, 4.0])


def test_zero_dim_float64_with_float32_keeps_float32(device):
    require_float64(device)
    b = tl.tensor([1.0, 2.0], dtype=tl.float32, requires_grad=True, device=device)
    s = tl.tensor(2.0, dtype=tl.float64, requires_grad=True, device=device)
    out = b * s
    assert out.dtype == tl.float32
    out.sum().backward()
    assert b.grad.dtype == tl.float32 and s.grad.dtype == tl.float64 and s.grad.shape == ()
    close(s.grad, [3.0])


def test_matmul_broadcast_batch_grad(device):
    a = _leaf((2, 1, 3, 4), seed=4, device=device)
    b = _leaf((5, 4, 2), seed=5, device=device)
    (a @ b).sum().backward()
    assert a.grad.shape == (2, 1, 3, 4) and b.grad.shape == (5, 4, 2)
    av, bv = npy(a), npy(b)
    g = np.ones((2, 5, 3, 2))
    close(a.grad, (g @ np.swapaxes(bv, -1, -2)).sum(axis=1, keepdims=True))
    close(b.grad, (np.swapaxes(av, -1, -2) @ g).sum(axis=0))
