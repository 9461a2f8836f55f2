"""tensorlib.func's derivative transforms against torch.func on the same functions."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib import func as tf
from tests.func._parity import assert_same, to

torch = pytest.importorskip("torch")
ff = torch.func

RNG = np.random.default_rng(1)
X = RNG.standard_normal(3)
Y = RNG.standard_normal((2, 3))


def parity(transform, body, args, *t_args, **t_kwargs):
    """transform(body_for_lib, ...)(*args) on both libraries."""
    ours = getattr(tf, transform)(lambda *a: body(tl, *a), *t_args, **t_kwargs)(*to(tl, args))
    theirs = getattr(ff, transform)(lambda *a: body(torch, *a), *t_args, **t_kwargs)(
        *to(torch, args))
    assert_same(ours, theirs)
    return ours


def scalar_fn(m, x, y):
    return (m.sin(x) * y.sum(dim=0)).sum() + (y ** 2).mean()


def with_aux(m, x, y):
    out = (x * y).sum()
    return out, {"double": x * 2, "pair": (y.exp(), x)}


def vector_fn(m, x, y):
    return m.tanh(x * y), (y @ x).exp()


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0), -1])
def test_grad_and_grad_and_value_argnums(argnums):
    parity("grad", scalar_fn, (X, Y), argnums=argnums)
    parity("grad_and_value", scalar_fn, (X, Y), argnums=argnums)


def test_grad_has_aux_and_pytree_inputs():
    parity("grad", with_aux, (X, Y), has_aux=True)
    parity("grad_and_value", with_aux, (X, Y), argnums=(0, 1), has_aux=True)
    parity("grad", lambda m, d: (d["a"] * d["b"][0]).sum() + d["b"][1].sum() ** 2,
           ({"a": X, "b": (X, Y)},))


def test_grad_results_are_plain_at_top_level_and_differentiable_inside():
    g = tf.grad(lambda a: (a ** 3).sum())(to(tl, X))
    assert not g.requires_grad and g.grad_fn is None
    parity("grad", lambda m, a: (m.func.grad(lambda b: (b ** 3).sum())(a) * a).sum(), (X,))
    third = tf.grad(tf.grad(tf.grad(lambda a: a.sin())))(tl.tensor(0.5, dtype=tl.float64))
    assert abs(third.item() - (-np.cos(0.5))) < 1e-12
    # a captured parameter that requires grad: backward through grad(f) reaches it
    w = tl.tensor(Y[0], dtype=tl.float64, requires_grad=True)
    tw = torch.tensor(Y[0], dtype=torch.float64, requires_grad=True)
    gx = tf.grad(lambda a: (w * a ** 2).sum())(to(tl, X))
    tgx = ff.grad(lambda a: (tw * a ** 2).sum())(to(torch, X))
    gx.sum().backward()
    tgx.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy())


def test_vjp_and_jvp():
    out, fn = tf.vjp(lambda a, b: vector_fn(tl, a, b), *to(tl, (X, Y)))
    tout, tfn = ff.vjp(lambda a, b: vector_fn(torch, a, b), *to(torch, (X, Y)))
    assert_same(out, tout)
    cot = (RNG.standard_normal((2, 3)), RNG.standard_normal(2))
    assert_same(fn(to(tl, cot)), tfn(to(torch, cot)))
    assert_same(fn(to(tl, cot)), tfn(to(torch, cot)))          # vjp_fn may run again
    tangents = (RNG.standard_normal(3), RNG.standard_normal((2, 3)))
    ours = tf.jvp(lambda a, b: vector_fn(tl, a, b), to(tl, (X, Y)), to(tl, tangents))
    theirs = ff.jvp(lambda a, b: vector_fn(torch, a, b), to(torch, (X, Y)),
                    to(torch, tangents))
    assert_same(ours, theirs)
    ours = tf.jvp(lambda a: with_aux(tl, a, a), to(tl, (X,)), to(tl, (X,)), has_aux=True)
    theirs = ff.jvp(lambda a: with_aux(torch, a, a), to(torch, (X,)), to(torch, (X,)),
                    has_aux=True)
    assert_same(ours, theirs)


def test_vjp_independent_primal_gives_zeros_and_checks_structure():
    _, fn = tf.vjp(lambda a, b: a.sum(), *to(tl, (X, X)))
    _, tfn = ff.vjp(lambda a, b: a.sum(), *to(torch, (X, X)))
    assert_same(fn(tl.tensor(1.0, dtype=tl.float64)), tfn(torch.tensor(1.0, dtype=torch.float64)))
    with pytest.raises(RuntimeError, match="Expected pytree structure of cotangents"):
        fn((tl.tensor(1.0, dtype=tl.float64),))


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobians(transform):
    parity(transform, vector_fn, (X, Y))
    parity(transform, vector_fn, (X, Y), argnums=(0, 1))
    parity(transform, lambda m, d: m.sin(d["a"]) * d["b"], ({"a": X, "b": X},))
    parity(transform, lambda m, a: (a.sum() * a, a[0]), (X,), has_aux=True)
    parity(transform, lambda m, a: a.sum(), (X,))          # 0-dim output


def test_hessian():
    parity("hessian", scalar_fn, (X, Y))
    parity("hessian", scalar_fn, (X, Y), argnums=(0, 1))


def test_errors_match_torch():
    x = to(tl, X)
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor, "
                                           "got tensor with 1 dims"):
        tf.grad(lambda a: a)(x)
    with pytest.raises(RuntimeError, match="Got argnum=1, but only 1 positional inputs"):
        tf.grad(lambda a: a.sum(), argnums=1)(x)
    with pytest.raises(RuntimeError, match="output of function f should be a tuple"):
        tf.grad(lambda a: a.sum(), has_aux=True)(x)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        tf.jvp(lambda a: a, x, x)
    with pytest.raises(RuntimeError, match="different size"):
        tf.jvp(lambda a: a, (x,), (tl.zeros(4, dtype=tl.float64),))


def test_jacfwd_randomness_flag():
    x = to(tl, X)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        tf.jacfwd(lambda a: a * tl.rand(3, dtype=tl.float64))(x)
    jac = tf.jacfwd(lambda a: a * tl.rand(3, dtype=tl.float64), randomness="same")(x)
    assert tuple(jac.shape) == (3, 3)
