"""Gradients (and second derivatives) of composite expressions against PyTorch (tensorlib
on every test device, PyTorch on the CPU)."""
import numpy as np
import pytest

import tensorlib as tl

from ._util import require_float64

torch = pytest.importorskip("torch")


def _on(lib, device):
    """tensorlib runs on the test device; PyTorch, the reference, on its CPU."""
    return {"device": device} if lib is tl else {}


def _host(t):
    return t.detach().cpu().numpy()


def _softmax(lib, x, dim):
    e = (x - x.amax(dim, keepdim=True)).exp()
    return e / e.sum(dim, keepdim=True)


def mlp(lib, x, w1, b1, w2):
    h = (x @ w1 + b1).tanh()
    out = h @ w2
    return (out * out).mean()


def softmax_xent(lib, logits, w):
    p = _softmax(lib, logits * w, 1)
    target = lib.tensor([[1.0, 0, 0, 0], [0, 0, 1.0, 0], [0, 1.0, 0, 0]], dtype=lib.float64,
                        device=logits.device)
    return -(p.log() * target).sum() / 3


def layernorm(lib, x, g, b):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (((x - mu) / (var + 1e-5).sqrt()) * g + b).sin().sum()


def reuse_and_views(lib, x, y):
    a = x.t() @ y                       # (4,3)^T... shapes below
    b = a.reshape(-1)[1:7].view(2, 3).permute(1, 0)
    c = lib.maximum(b, b * 0.5) + lib.where(b > 0, b, b * b)
    return (c.exp() * x[0, :2]).sum() + x.prod(0).sum() + y.abs().amax()


def inplace_chain(lib, x, y):
    z = x * y
    z.add_(1.0)
    z.mul_(x)
    z = z / (y * y + 1)
    z.sub_(x.sum())
    return (z * z).sum()


def broadcast_mix(lib, x, y):
    s = x.sum(0, keepdim=True)                       # (1, 4)
    return (x / (y.expand(3, 4) + 2) + s * y.t().sum()).pow(2).mean() + (x ** y).sum()


CASES = [
    ("mlp", mlp, [(5, 3), (3, 4), (4,), (4, 2)]),
    ("softmax_xent", softmax_xent, [(3, 4), (1, 4)]),
    ("layernorm", layernorm, [(3, 4), (4,), (4,)]),
    ("reuse_and_views", reuse_and_views, [(3, 4), (3, 3)]),
    ("inplace_chain", inplace_chain, [(3, 4), (3, 4)]),
    ("broadcast_mix", broadcast_mix, [(3, 4), (1, 4)]),
]


def _inputs(shapes, seed, positive=False):
    rng = np.random.default_rng(seed)
    vals = [rng.uniform(0.3, 1.5, size=s) if positive else rng.standard_normal(s)
            for s in shapes]
    return vals


@pytest.mark.parametrize("name, fn, shapes", CASES, ids=[c[0] for c in CASES])
def test_first_and_second_derivatives_match_torch(name, fn, shapes, device):
    require_float64(device)
    values = _inputs(shapes, 0, positive=name == "broadcast_mix")
    results = {}
    for lib in (tl, torch):
        on = _on(lib, device)
        xs = [lib.tensor(v, dtype=lib.float64, requires_grad=True, **on) for v in values]
        out = fn(lib, *xs)
        grads = lib.autograd.grad(out, xs, create_graph=True)
        # a Hessian-vector product along a fixed direction
        vs = [lib.tensor(np.cos(np.arange(v.size)).reshape(v.shape), dtype=lib.float64, **on)
              for v in values]
        dot = sum((g * v).sum() for g, v in zip(grads, vs))
        hvp = lib.autograd.grad(dot, xs, allow_unused=True)
        results[lib.__name__] = (_host(out), [_host(g) for g in grads],
                                 [None if h is None else _host(h) for h in hvp])
    mine, ref = results["tensorlib"], results["torch"]
    np.testing.assert_allclose(mine[0], ref[0], rtol=1e-10, atol=1e-12)
    for a, b in zip(mine[1], ref[1]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)
    for a, b in zip(mine[2], ref[2]):
        if a is None or b is None:
            assert a is None or not np.any(a), (a, b)
            assert b is None or not np.any(b), (a, b)
            continue
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("expr", [
    "x.amax(1)",                        # ties share the gradient
    "x.max(1)[0]",                      # ties: the returned index gets it
    "x.amin()",
    "lib.maximum(x, x.flip(1) if hasattr(x, 'flip') else x)",
    "x.abs()",
    "x.prod(1)",
    "(x * 0 + 2.0).sqrt()",
    "lib.where(x > 0, x, lib.zeros_like(x)) ** 2",
    "x.pow(0)",                         # 0 * x^-1 must not become nan at 0
    "x ** 2.0",
])
def test_special_points_match_torch(expr, device):
    """Non-smooth and degenerate points (ties, zeros): tensorlib follows PyTorch's choice."""
    require_float64(device)
    values = np.array([[1.0, 3.0, 3.0, -1.0], [0.0, 0.0, 2.0, 0.0], [0.0, -2.0, -2.0, 5.0]])
    grads = []
    for lib in (tl, torch):
        on = _on(lib, device)
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True, **on)
        out = eval(expr, {"lib": lib, "x": x})
        w = lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)) + 1,
                       dtype=lib.float64, **on)
        (out * w).sum().backward()
        grads.append(_host(x.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=0)


def test_accumulation_and_retain_grad_match_torch(device):
    require_float64(device)
    values = np.array([0.5, -1.5, 2.0])
    res = []
    for lib in (tl, torch):
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True, **_on(lib, device))
        y = x.exp() * x
        y.retain_grad()
        z = (y.sin() + y * y).sum()
        z.backward(retain_graph=True)
        z.backward()
        res.append((_host(x.grad), _host(y.grad)))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-12)


def test_grad_fn_names_match_torch():
    pairs = []
    for lib in (tl, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        # (not reshape or matmul: torch names the op it decomposes into, ViewBackward0 and
        # MmBackward0)
        outs = [x + x, x - 1, x * x, x / 2, x.exp(), x.sum(), x.mean(), x.view(2, 1),
                x.unsqueeze(0), x.expand(3, 2), x.clone(), -x, x.abs(), x.sqrt(),
                x.sin(), x.tanh(), x.pow(2)]
        pairs.append([o.grad_fn.name() for o in outs])
    assert pairs[0] == pairs[1]
