"""vmap's batch rules against torch.func.vmap: each op family on random inputs, batched at
different dims, beside unbatched operands; the ops with rules must not take the per-sample
loop (fallback_counts), and an op without one must still give torch's answer."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib import func as tf
from tensorlib.func._batching import fallback_counts
from tests.func._parity import assert_same, to

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
X = RNG.standard_normal((5, 4, 3))          # batch 5 of [4, 3]
Y = RNG.standard_normal((4, 3))
V = RNG.standard_normal((5, 3))
M = RNG.standard_normal((3, 2))
XT = RNG.standard_normal((4, 5, 3))         # batch at dim 1


def parity(body, args, expect_loop=False, **kwargs):
    before = sum(fallback_counts.values())
    ours = tf.vmap(lambda *a: body(tl, *a), **kwargs)(*to(tl, args))
    looped = sum(fallback_counts.values()) - before
    theirs = torch.func.vmap(lambda *a: body(torch, *a), **kwargs)(*to(torch, args))
    assert_same(ours, theirs)
    assert bool(looped) == expect_loop, dict(fallback_counts)


POINTWISE = [
    lambda m, x: m.tanh(x) * 2 - x.exp() / (1 + x.abs()),
    lambda m, x: m.where(x > 0, x, -x).clamp(-0.5, 0.7),
    lambda m, x: m.nn.functional.gelu(x) + m.nn.functional.softplus(x) + m.sigmoid(x),
    lambda m, x: m.nn.functional.leaky_relu(x, 0.1) ** 2,
    lambda m, x: m.maximum(x, m.zeros_like(x)) + x.new_ones(3) + m.ones_like(x),
]


@pytest.mark.parametrize("body", POINTWISE)
def test_pointwise(body):
    parity(body, (X,))
    parity(body, (XT,), in_dims=1)


def test_broadcasting_against_unbatched_operands():
    parity(lambda m, x, y: x + y, (V, Y), in_dims=(0, None))          # [3] + [4, 3]
    parity(lambda m, x, y: m.addcmul(x, y, x, value=0.5), (X, Y), in_dims=(0, None))
    parity(lambda m, x, y: m.lerp(x, y, 0.3), (Y, X), in_dims=(None, 0))
    parity(lambda m, x, y: m.where(y > 0, x, y), (X, V), in_dims=(0, 0))


@pytest.mark.parametrize("body", [
    lambda m, x: x.sum(),
    lambda m, x: x.sum(1, keepdim=True),
    lambda m, x: x.mean((0, -1)),
    lambda m, x: x.amax(-1),
    lambda m, x: m.norm(x),
    lambda m, x: x.norm(dim=0),
    lambda m, x: x.max(),
    lambda m, x: x.max(dim=1).values + x.min(0)[0].sum(),
    lambda m, x: x.argmax() + x.argmin(dim=1).sum(),
    lambda m, x: x.std(dim=1) + x.var(),
    lambda m, x: m.logsumexp(x, dim=1),
    lambda m, x: m.softmax(x, -1) + m.nn.functional.log_softmax(x, dim=0),
    lambda m, x: x.cumsum(0) * x.flip(1),
    lambda m, x: x.sort(dim=0).values + x.topk(2).values.sum(),
    lambda m, x: m.nn.functional.normalize(x) + m.nn.functional.layer_norm(x, (3,)),
])
def test_reductions_and_dims(body):
    parity(body, (X,))
    parity(body, (XT,), in_dims=1)


@pytest.mark.parametrize("body", [
    lambda m, x: x.reshape(12).view(2, 6).t() + x.contiguous().view(6, 2),
    lambda m, x: x.transpose(0, 1).flatten() + x.T.reshape(-1),
    lambda m, x: x.permute(1, 0).unsqueeze(-1).squeeze(),
    lambda m, x: x.movedim(0, -1).expand(2, 3, 4).sum(0),
    lambda m, x: x[1] + x[:, 2].sum() + x[None, 1:3, ...].sum(),
    lambda m, x: x.select(1, 0) + x.narrow(0, 1, 2).sum(0)[0] + x.diagonal().sum(),
    lambda m, x: m.cat([x, x * 2], 1) + m.stack([x, x], -1).sum(-1).repeat(1, 2),
    lambda m, x: m.stack(x.unbind(1), 1) + m.cat(x.split(1, dim=1), 1).mT.mT,
    lambda m, x: x[m.tensor([2, 0])] + x.index_select(0, m.tensor([1, 1])),
])
def test_views_and_indexing(body):
    parity(body, (X,))
    parity(body, (XT,), in_dims=1)


def test_cat_of_batched_and_unbatched():
    parity(lambda m, x, y: m.cat([x, y], 0), (X, Y), in_dims=(0, None))
    parity(lambda m, x, y: m.stack([y, x], 1), (XT, Y), in_dims=(1, None))


def test_products():
    parity(lambda m, x, w: x @ w, (X, M), in_dims=(0, None))
    parity(lambda m, x, w: m.matmul(w.t(), x.t()), (X, M), in_dims=(0, None))
    parity(lambda m, v, x: m.mv(x, v) + m.dot(v, v), (V, X), in_dims=(0, 0))
    parity(lambda m, v, y: y @ v + m.outer(v, v).sum(), (V, Y), in_dims=(0, None))
    parity(lambda m, x, y: m.bmm(x.unsqueeze(0), y.t().unsqueeze(0)), (X, Y), in_dims=(0, None))
    parity(lambda m, x, y: m.einsum("ij,kj->ik", x, y), (X, Y), in_dims=(0, None))
    parity(lambda m, x, v: m.einsum("ij,j->i", x, v), (X, V), in_dims=(0, 0))
    parity(lambda m, x, w, b: m.nn.functional.linear(x, w, b), (X, M.T, M[0]),
           in_dims=(0, None, None))
    parity(lambda m, x, w: m.nn.functional.linear(x, w), (X, X), in_dims=(0, 0))


def test_losses():
    t = RNG.standard_normal((5, 4, 3))
    for name in ("mse_loss", "l1_loss", "smooth_l1_loss"):
        for reduction in ("mean", "sum", "none"):
            parity(lambda m, x, y: getattr(m.nn.functional, name)(x, y, reduction=reduction),
                   (X, t))
    parity(lambda m, x, y: m.nn.functional.binary_cross_entropy_with_logits(x, y.sigmoid()),
           (X, t))


def test_cross_entropy_and_nll_loss():
    logits = RNG.standard_normal((5, 4, 3))
    target = RNG.integers(0, 3, (5, 4))
    weight = np.array([0.2, 1.0, 3.0])

    def run(m, body):
        return tf.vmap(body)(*[m.tensor(logits), m.tensor(target)]) if m is tl else \
            torch.func.vmap(body)(torch.tensor(logits), torch.tensor(target))
    for kwargs in ({}, {"reduction": "sum"}, {"ignore_index": 1}):
        ours = run(tl, lambda x, y: tl.nn.functional.cross_entropy(x, y, **kwargs))
        theirs = run(torch, lambda x, y: torch.nn.functional.cross_entropy(x, y, **kwargs))
        assert_same(ours, theirs)
    ours = run(tl, lambda x, y: tl.nn.functional.nll_loss(x, y, tl.tensor(weight)))
    theirs = run(torch, lambda x, y: torch.nn.functional.nll_loss(x, y, torch.tensor(weight)))
    assert_same(ours, theirs)
    ours = run(tl, lambda x, y: tl.nn.functional.cross_entropy(x[0], y[0]))   # one sample
    theirs = run(torch, lambda x, y: torch.nn.functional.cross_entropy(x[0], y[0]))
    assert_same(ours, theirs)


def test_inplace_and_setitem():
    parity(lambda m, x: x.clone().mul_(2).add_(1), (X,))

    def body(m, x, v):
        out = x.new_zeros(4, 3)
        out[1] = v
        out[2:, 0] = 5.0
        return out
    parity(body, (X, V), in_dims=(0, 0))
    with pytest.raises(RuntimeError, match="vmapped over but `self` not"):
        tf.vmap(lambda v: tl.zeros(3).add_(v))(tl.tensor(V))


def test_op_without_rule_loops_and_is_right():
    parity(lambda m, x: m.linalg.det(x[:3]), (X,), expect_loop=True)
    parity(lambda m, x: m.kron(x, x).sum(0), (X,), expect_loop=True)


def test_logical_shape_and_data_dependent_control_flow():
    seen = []

    def body(x):
        seen.append((tuple(x.shape), x.dim(), x.size(1), x.numel(), len(x)))
        return x
    tf.vmap(body, in_dims=1)(tl.tensor(XT))
    assert seen == [((4, 3), 2, 3, 12, 4)]
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        tf.vmap(lambda x: x * 2 if x.sum() > 0 else x)(tl.tensor(X))
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        tf.vmap(lambda x: x.sum().item())(tl.tensor(X))


def test_nested_vmap_batches_both_levels():
    parity(lambda m, x, y: m.func.vmap(lambda a, b: (a * b).sum(-1).tanh())(x, y),
           (X, XT), in_dims=(0, 1))
    parity(lambda m, x: m.func.vmap(lambda a: a.softmax(0) @ a, in_dims=1)(x), (X,))
    parity(lambda m, x: m.func.vmap(m.func.vmap(lambda s: s * s.exp()))(x), (X,))
