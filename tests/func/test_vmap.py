"""tensorlib.func.vmap against torch.func.vmap: in_dims/out_dims (None, negative, nested),
nested vmap, per-sample gradients, randomness, chunk_size, errors."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib import func as tf
from tests.func._parity import assert_same, to

torch = pytest.importorskip("torch")
ff = torch.func

RNG = np.random.default_rng(2)
A = RNG.standard_normal((4, 3))
B = RNG.standard_normal((3, 4))
W = RNG.standard_normal((3, 2))


def parity(body, args, **kwargs):
    ours = tf.vmap(lambda *a: body(tl, *a), **kwargs)(*to(tl, args))
    theirs = ff.vmap(lambda *a: body(torch, *a), **kwargs)(*to(torch, args))
    assert_same(ours, theirs)


def test_in_dims_and_out_dims():
    parity(lambda m, x: m.sin(x).sum(), (A,))
    parity(lambda m, x, w: x @ w, (A, W), in_dims=(0, None))
    parity(lambda m, x, y: x * y, (A, B), in_dims=(0, 1))
    parity(lambda m, x, y: x * y, (A, B), in_dims=(0, -1), out_dims=1)
    parity(lambda m, x: (x, x.sum()), (A,), out_dims=(1, 0))
    parity(lambda m, x: x.exp(), (A,), in_dims=1, out_dims=-1)


def test_nested_tuple_dicts_and_none():
    parity(lambda m, p, s: p[0] * p[1]["k"] + s, ((A, {"k": B}), 2.0),
           in_dims=((0, {"k": 1}), None))
    parity(lambda m, p: {"out": p[0] + p[1]}, ((A, A),), in_dims=(0,))
    parity(lambda m, x, w: (x @ w, w.sum()), (A, W), in_dims=(0, None), out_dims=(0, None))


def test_nested_vmap_and_chunk_size():
    parity(lambda m, x, y: m.func.vmap(lambda b: x[:, None] * b)(y), (A, B), in_dims=(0, None))
    parity(lambda m, x, y: m.func.vmap(lambda a, b: a @ b, in_dims=(None, 1))(x, y), (A, B),
           in_dims=(0, None))
    parity(lambda m, x: x ** 2, (A,), chunk_size=3)


def test_per_sample_gradients_through_functional_call():
    def run(m, nn_module):
        params = {k: v.detach() for k, v in nn_module.named_parameters()}

        def loss(p, x, y):
            out = m.func.functional_call(nn_module, p, (x.unsqueeze(0),))
            return ((out - y) ** 2).mean()
        x, y = to(m, A), to(m, RNG_TARGET)
        return m.func.vmap(m.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
    torch_net = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(),
                                    torch.nn.Linear(5, 2)).double()
    our_net = tl.nn.Sequential(tl.nn.Linear(3, 5), tl.nn.Tanh(), tl.nn.Linear(5, 2)).double()
    with torch.no_grad():
        for (name, tp), (_, op) in zip(torch_net.named_parameters(),
                                       our_net.named_parameters()):
            op.data.copy_(tl.tensor(tp.numpy()))
    assert_same(run(tl, our_net), run(torch, torch_net))
    # and the same again with jacrev / hessian inside vmap
    parity(lambda m, x: m.func.jacrev(m.sin)(x), (A,))
    parity(lambda m, x: m.func.hessian(lambda a: (a ** 3).sum())(x), (A,))


RNG_TARGET = RNG.standard_normal((4, 2))


def test_batch_of_size_zero():
    parity(lambda m, x: x * 2, (np.zeros((0, 3)),))


def test_randomness_flags():
    x = tl.zeros(3, 2)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        tf.vmap(lambda a: a + tl.rand(2))(x)
    tl.manual_seed(0)
    different = tf.vmap(lambda a: a + tl.rand(2), randomness="different")(x)
    assert not bool(tl.equal(different[0], different[1]))
    tl.manual_seed(0)
    same = tf.vmap(lambda a: a + tl.rand(2) + tl.rand(2), randomness="same")(x)
    assert bool(tl.equal(same[0], same[1])) and bool(tl.equal(same[0], same[2]))
    tl.manual_seed(0)
    expected = tl.rand(2) + tl.rand(2)
    np.testing.assert_array_equal(same[0].numpy(), expected.numpy())
    with pytest.raises(RuntimeError, match="randomness error mode"):      # nested keeps error
        tf.vmap(lambda a: tf.vmap(lambda b: b + tl.rand(()), randomness="different")(a))(x)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        tf.vmap(lambda a: a, randomness="sometimes")


def test_standard_gamma_draws_per_sample_under_different_randomness():
    """torch._standard_gamma of an unbatched alpha inside vmap: its own draws per sample
    under randomness="different", one shared draw under "same", refused by default."""
    alpha, x = tl.ones(3), tl.zeros(2, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        tf.vmap(lambda a: a + tl._standard_gamma(alpha))(x)
    different = tf.vmap(lambda a: a + tl._standard_gamma(alpha), randomness="different")(x)
    assert not bool(tl.equal(different[0], different[1]))
    same = tf.vmap(lambda a: a + tl._standard_gamma(alpha), randomness="same")(x)
    assert bool(tl.equal(same[0], same[1]))


def test_errors_match_torch():
    x = tl.zeros(2, 3)
    with pytest.raises(ValueError, match="Got in_dim=5 for some input, but that input is a "
                                         "Tensor of dimensionality 2"):
        tf.vmap(lambda a: a, in_dims=(5,))(x)
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor arguments"):
        tf.vmap(lambda a, b: a, in_dims=(0, 0))(x, 3)
    with pytest.raises(ValueError, match="got sizes \\[2, 3\\] for the mapped dimension"):
        tf.vmap(lambda a, b: a + b)(x, tl.zeros(3, 3))
    with pytest.raises(ValueError, match="must only return Tensors"):
        tf.vmap(lambda a: 3)(x)
    with pytest.raises(ValueError, match="expected `in_dims` to be int or a"):
        tf.vmap(lambda a: a, in_dims=None)(x)
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        tf.vmap(lambda a: a.sum() + tl.arange(2.0)[0], out_dims=None)(tl.arange(6.0).reshape(2, 3))


def test_per_sample_grad_jacfwd_and_forward_ad_on_device(device):
    import tensorlib.autograd.forward_ad as fwAD
    x = tl.tensor(A, dtype=tl.float32, device=device)
    g = tf.vmap(tf.grad(lambda a: (a.sin() * a).sum()))(x)
    assert g.device.type == tl.device(device).type
    np.testing.assert_allclose(g.cpu().numpy(), np.cos(A) * A + np.sin(A), rtol=1e-5,
                               atol=1e-6)
    jac = tf.jacfwd(tl.tanh)(x[0])
    np.testing.assert_allclose(jac.cpu().numpy(), np.diag(1 - np.tanh(A[0]) ** 2), rtol=1e-5,
                               atol=1e-6)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, tl.ones_like(x))
        tangent = fwAD.unpack_dual((d @ d.t()).sum()).tangent
    expected = (2 * A @ np.ones((3, 4))).sum()             # sum(1 A^T + A 1^T)
    np.testing.assert_allclose(tangent.cpu().numpy(), expected, rtol=1e-4)


def test_toplevel_vmap_is_func_vmap():
    """torch.vmap is torch.func.vmap; tensorlib.vmap is the same function."""
    assert tl.vmap is tf.vmap
    assert torch.vmap is ff.vmap
    ours = tl.vmap(lambda x: (x * x).sum())(tl.tensor(A))
    theirs = torch.vmap(lambda x: (x * x).sum())(torch.tensor(A))
    assert_same(ours, theirs)
