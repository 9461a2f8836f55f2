"""vmap composed with the other transforms, batched (not per sample): vmap(grad), vjp,
jacrev, jacfwd, hessian, nested vmap, chunk_size, randomness, model ensembling through
functional_call, autograd through vmap; and functorch's notebook check that
vmap(jacrev(predict)) equals jacrev(summed predict) bitwise."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib import func as tf
from tensorlib.func._batching import fallback_counts
from tensorlib_cpu import small_gemm
from tests.func._parity import assert_same, to

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(11)
X = RNG.standard_normal((6, 4))
W = RNG.standard_normal((3, 4))
B = RNG.standard_normal(3)


def both(body, args, **kwargs):
    ours = tf.vmap(lambda *a: body(tl, *a), **kwargs)(*to(tl, args))
    theirs = torch.func.vmap(lambda *a: body(torch, *a), **kwargs)(*to(torch, args))
    assert_same(ours, theirs)


def mlp(m, w, b, x):
    return (m.nn.functional.linear(x, w, b).tanh() ** 2).sum()


def test_derivative_transforms_inside_vmap():
    before = sum(fallback_counts.values())
    both(lambda m, w, b, x: m.func.grad(lambda x: mlp(m, w, b, x))(x), (W, B, X),
         in_dims=(None, None, 0))
    both(lambda m, w, b, x: m.func.grad(lambda *a: mlp(m, *a), argnums=(0, 1))(w, b, x),
         (W, B, X),
         in_dims=(None, None, 0))
    both(lambda m, w, b, x: m.func.jacrev(lambda x: m.nn.functional.linear(x, w, b).sin())(x),
         (W, B, X), in_dims=(None, None, 0))
    both(lambda m, w, b, x: m.func.jacfwd(lambda x: m.nn.functional.linear(x, w, b).sin())(x),
         (W, B, X), in_dims=(None, None, 0))
    both(lambda m, w, b, x: m.func.hessian(lambda x: mlp(m, w, b, x))(x), (W, B, X),
         in_dims=(None, None, 0))
    assert sum(fallback_counts.values()) == before, dict(fallback_counts)


def test_vjp_inside_and_outside_vmap():
    both(lambda m, x, ct: m.func.vjp(lambda a: a.sin() * a, x)[1](ct)[0], (X, X))

    def jacobian_rows(m):                   # functorch's way: vmap a vjp_fn over unit vectors
        x = m.tensor(X[0])
        _, fn = m.func.vjp(lambda a: m.cumsum(a.exp(), 0), x)
        return m.func.vmap(fn)(m.eye(4, dtype=x.dtype))[0]
    assert_same(jacobian_rows(tl), jacobian_rows(torch))


def test_nested_vmap_of_grad_and_jacrev_with_chunks():
    both(lambda m, x: m.func.vmap(m.func.grad(lambda s: s.sin() * s))(x), (X,))
    both(lambda m, x: m.func.jacrev(lambda a: (a.exp() * a.sum()), chunk_size=3)(x), (X,))
    both(lambda m, x, w: x @ w.t(), (X, W), in_dims=(0, None), chunk_size=4)


def test_dict_in_dims_and_out_dims():
    both(lambda m, d: {"s": d["a"] * d["b"].sum()}, ({"a": X, "b": X.T.copy()},),
         in_dims=({"a": 0, "b": 1},), out_dims=1)
    both(lambda m, x, w: (x @ w.t(), w.sum()), (X, W), in_dims=(-2, None), out_dims=(-1, None))


def test_model_ensemble_through_functional_call():
    def run(m):
        m.manual_seed(0) if m is torch else None
        nets = [m.nn.Sequential(m.nn.Linear(4, 5), m.nn.ReLU(), m.nn.Linear(5, 2)).double()
                for _ in range(3)]
        for k, net in enumerate(nets):
            with m.no_grad():
                for j, p in enumerate(net.parameters()):
                    p.copy_(m.tensor(np.sin(np.arange(p.numel()) + 10 * k + j)
                                     .reshape(p.shape)))
        params = {name: m.stack([dict(n.named_parameters())[name].detach() for n in nets])
                  for name, _ in nets[0].named_parameters()}

        def one(p, x):
            return m.func.functional_call(nets[0], p, (x,))
        return m.func.vmap(one, in_dims=(0, None))(params, m.tensor(X))
    assert_same(run(tl), run(torch))


def test_autograd_through_vmap():
    grads = []
    for m in (tl, torch):
        w = m.tensor(W, requires_grad=True)
        x = m.tensor(X, requires_grad=True)
        out = m.func.vmap(lambda r: m.nn.functional.linear(r, w).tanh().sum())(x)
        (out ** 2).sum().backward()
        grads.append((w.grad, x.grad))
    assert_same(grads[0], grads[1])


def test_randomness():
    x = tl.zeros(5, 3)
    tl.manual_seed(1)
    diff = tf.vmap(lambda a: a + tl.nn.functional.dropout(tl.ones(3) + a, 0.5) + tl.randn(3),
                   randomness="different")(x)
    assert len({tuple(r) for r in diff.tolist()}) == 5
    tl.manual_seed(1)
    same = tf.vmap(lambda a: tl.nn.functional.dropout(a + 1, 0.5) * tl.rand_like(a),
                   randomness="same")(x)
    assert all(bool(tl.equal(same[0], r)) for r in same)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        tf.vmap(lambda a: tl.rand_like(a))(x)


def test_functorch_notebook_batch_jacobian_is_bitwise():
    """Batched jacrev and the jacobian of the batch-summed output run the same products,
    so they agree exactly (the loop over samples rounded differently past allclose) where
    small float32 products run on the backend's own kernel (AVX-512), which rounds a row
    the same whatever the row count."""
    gen = np.random.default_rng(3)
    weight = tl.tensor(gen.standard_normal((33, 31)), dtype=tl.float32)
    bias = tl.tensor(gen.standard_normal(33), dtype=tl.float32)
    x = tl.tensor(gen.standard_normal((64, 31)), dtype=tl.float32)

    def predict(weight, bias, x):
        return tl.nn.functional.linear(x, weight, bias).tanh()
    per_sample = tf.vmap(tf.jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, x)
    summed = tf.jacrev(lambda w, b, a: predict(w, b, a).sum(0), argnums=2)(weight, bias, x)
    if small_gemm.AVX512:
        assert bool(tl.equal(per_sample, summed.movedim(1, 0)))
    else:       # OpenBLAS's one-row and many-row products round differently (AVX2 CPUs)
        np.testing.assert_allclose(per_sample.numpy(), summed.movedim(1, 0).numpy(),
                                   rtol=1e-5, atol=1e-6)
    theirs = torch.func.vmap(torch.func.jacrev(
        lambda w, b, a: torch.nn.functional.linear(a, w, b).tanh(), argnums=2),
        in_dims=(None, None, 0))(*(torch.tensor(t.numpy()) for t in (weight, bias, x)))
    np.testing.assert_allclose(per_sample.numpy(), theirs.numpy(), rtol=1e-4, atol=1e-5)
