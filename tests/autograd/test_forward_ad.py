"""tensorlib.autograd.forward_ad against torch.autograd.forward_ad: tangents of the
elementwise, reduction, linear-algebra and nn ops, the level API and its errors."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.autograd.forward_ad as fwAD

torch = pytest.importorskip("torch")
tfwAD = torch.autograd.forward_ad

RNG = np.random.default_rng(4)


def _arr(shape, positive=False):
    a = RNG.standard_normal(shape)
    return np.abs(a) + 0.5 if positive else a


def tangents_both(body, primals, tangents, requires_grad=False):
    """Push tangents through body on both libraries; returns (ours, torch's) output
    tangents."""
    results = []
    for lib, fw in ((tl, fwAD), (torch, tfwAD)):
        with fw.dual_level():
            duals = [fw.make_dual(lib.tensor(p, dtype=lib.float64, requires_grad=requires_grad),
                                  lib.tensor(t, dtype=lib.float64))
                     for p, t in zip(primals, tangents)]
            out = body(lib, *duals)
            outs = out if isinstance(out, tuple) else (out,)
            results.append([(fw.unpack_dual(o).primal.detach().numpy(),
                             fw.unpack_dual(o).tangent) for o in outs])
    for (p, t), (tp, tt) in zip(*results):
        np.testing.assert_allclose(p, tp, rtol=1e-10, atol=1e-12)
        assert (t is None) == (tt is None)
        if t is not None:
            assert tuple(t.shape) == tuple(tt.shape)
            np.testing.assert_allclose(t.detach().numpy(), tt.detach().numpy(), rtol=1e-9,
                                       atol=1e-12)
    return results


def F(lib):
    return lib.nn.functional


CASES = {
    # elementwise, with broadcasting and Python scalars
    "unary_chain": (lambda m, x: m.tanh(m.sin(x) * m.exp(x) + m.log(x) + m.sqrt(x)) ** 2,
                    [(3, 4)], True),
    "trig": (lambda m, x: m.cos(x) + m.tan(x * 0.3) + m.atan(x) + m.sinh(x) + m.cosh(x)
             + m.asin(x * 0.1) + m.acos(x * 0.1), [(5,)], False),
    "binary_broadcast": (lambda m, x, y: x * y - x / (y + 3.0) + m.maximum(x, y)
                         + m.minimum(x, 2 * y) + m.atan2(x, y), [(3, 4), (4,)], True),
    "pow": (lambda m, x, y: x ** y + x ** 2.5 + 2.0 ** y, [(4,), (4,)], True),
    "activations": (lambda m, x: F(m).relu(x) + m.sigmoid(x) + F(m).gelu(x) + F(m).silu(x)
                    + F(m).softplus(x) + F(m).elu(x) + F(m).leaky_relu(x, 0.1), [(3, 5)],
                    False),
    "clamp_where_abs": (lambda m, x, y: m.clamp(x, -0.5, 0.5) + m.where(x > 0, x, y)
                        + x.abs() + m.erf(y), [(6,), (6,)], False),
    # reductions
    "reductions": (lambda m, x: (x.sum(), x.mean(1), x.prod(0), x.amax(1), x.amin(0, True),
                                 x.var(1), x.std(0), m.logsumexp(x, 1),
                                 m.linalg.vector_norm(x, dim=1), x.norm()), [(3, 4)], False),
    "max_dim": (lambda m, x: x.max(1)[0] + x.min(1, keepdim=True)[0].squeeze(1), [(3, 4)],
                False),
    # linear algebra
    "matmul": (lambda m, a, b: (a @ b, m.mm(a, b), m.matmul(a, b[:, 0]), a.t() @ a),
               [(3, 4), (4, 2)], False),
    "batched_matmul": (lambda m, a, b: m.matmul(a, b), [(2, 3, 4), (4, 5)], False),
    "einsum_bmm": (lambda m, a, b: (m.bmm(a, b), m.einsum("bij,bjk->bik", a, b)),
                   [(2, 3, 4), (2, 4, 2)], False),
    # shapes and indexing
    "views": (lambda m, x: (x.reshape(4, 3), x.t(), x.permute(1, 0), x[1:, ::2], x[0],
                            x.unsqueeze(0).expand(2, 3, 4), x.flatten(), x.transpose(0, 1),
                            x.flip(0), x.roll(1, 1), x.diagonal(), m.tril(x), x.narrow(1, 1, 2)),
              [(3, 4)], False),
    "joining": (lambda m, x, y: (m.cat([x, y], 0), m.stack([x, y], 1), x.repeat(2, 1),
                                 m.gather(x, 1, m.tensor([[0], [1], [3]])),
                                 x.index_select(1, m.tensor([2, 0])), x.cumsum(1),
                                 m.cat([x, x.exp()], 1)), [(3, 4), (3, 4)], False),
    # nn
    "nn_ops": (lambda m, x, w, b: (F(m).linear(x, w, b), F(m).softmax(x, -1),
                                   F(m).log_softmax(x, 0), F(m).linear(x, w)),
               [(3, 4), (2, 4), (2,)], False),
    "conv2d": (lambda m, x, w, b: F(m).conv2d(x, w, b, padding=1, stride=2),
               [(1, 2, 5, 5), (3, 2, 3, 3), (3,)], False),
    "losses": (lambda m, x, y: (F(m).mse_loss(x, y), F(m).cross_entropy(x, m.tensor([1, 0, 2]))),
               [(3, 4), (3, 4)], False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tangents_match_torch(name):
    body, shapes, positive = CASES[name]
    primals = [_arr(s, positive) for s in shapes]
    tangents = [_arr(s) for s in shapes]
    tangents_both(body, primals, tangents)


def test_only_some_inputs_dual():
    x, y = _arr((3,)), _arr((3,))
    for lib, fw in ((tl, fwAD), (torch, tfwAD)):
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(x), lib.tensor(np.ones(3)))
            out = d * lib.tensor(y) + lib.tensor(y).exp()
            t = fw.unpack_dual(out).tangent
            np.testing.assert_allclose(t.numpy(), y)
            assert fw.unpack_dual(lib.tensor(y)).tangent is None


def test_tangent_with_requires_grad_primal_is_differentiable():
    x = tl.tensor(_arr((3,)), requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, tl.ones(3, dtype=tl.float64))
        jvp = fwAD.unpack_dual((d ** 3).sum()).tangent        # sum(3 x^2)
        (g,) = tl.autograd.grad(jvp, x)
    np.testing.assert_allclose(g.numpy(), 6 * x.detach().numpy())


def test_level_api_and_cleanup():
    x = tl.tensor(_arr((2,)))
    level = fwAD.enter_dual_level()
    d = fwAD.make_dual(x, tl.ones(2, dtype=tl.float64))
    y = d * 2
    assert isinstance(fwAD.unpack_dual(y), fwAD.UnpackedDualTensor)
    fwAD.exit_dual_level(level=level)
    assert fwAD.unpack_dual(y).tangent is None
    assert not y.requires_grad and y.grad_fn is None and not d.requires_grad
    with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
        with fwAD.dual_level():
            with fwAD.dual_level():
                pass
    with pytest.raises(RuntimeError, match="no active dual level"):
        fwAD.make_dual(x, x)

    @fwAD.dual_level()
    def decorated():
        return fwAD.unpack_dual(fwAD.make_dual(x, x).exp()).tangent
    np.testing.assert_allclose(decorated().numpy(), np.exp(x.numpy()) * x.numpy())


def test_errors():
    x = tl.tensor(_arr((3,)))
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(x, tl.zeros(4, dtype=tl.float64))
        d = fwAD.make_dual(x, tl.ones(3, dtype=tl.float64))
        with pytest.raises(NotImplementedError, match="cumprod"):
            d.cumprod(0)


def test_inplace_updates_the_tangent():
    x = _arr((3,))
    for lib, fw in ((tl, fwAD), (torch, tfwAD)):
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(x), lib.tensor(np.ones(3))).clone()
            d.mul_(3.0)
            d.exp_()
            np.testing.assert_allclose(fw.unpack_dual(d).tangent.numpy(),
                                       3 * np.exp(3 * x))
