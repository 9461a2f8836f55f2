"""F.linear with a bias: PyTorch's graph reaches the bias, the input, then the weight
(AddmmBackward0's edges: bias, input, weight.t()'s TBackward0), so the bias's gradient hooks
fire and its .grad accumulates before the weight's; tensorlib's one linear node now lists its
edges in that order (Formula.edge_order), and gradients reach leaves in that order."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")


def _order(lib, shape, with_bias, input_is_leaf=True):
    rng = np.random.default_rng(0)
    w = lib.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    b = lib.tensor(rng.standard_normal(5), requires_grad=True) if with_bias else None
    x = lib.tensor(rng.standard_normal(shape), requires_grad=input_is_leaf)
    order = []
    named = [("w", w), ("b", b)] + ([("x", x)] if input_is_leaf else [])
    for name, t in named:
        if t is not None:
            t.register_hook(lambda g, name=name: order.append(name))
            t.register_post_accumulate_grad_hook(lambda p, name=name: order.append(name.upper()))
    lib.nn.functional.linear(x, w, b).sum().backward()
    grads = [t.grad.tolist() for _, t in named if t is not None]
    return order, grads


@pytest.mark.parametrize("input_is_leaf", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (2, 4, 3)])
def test_bias_hooks_fire_before_the_weights(shape, input_is_leaf):
    got, want = (_order(lib, shape, True, input_is_leaf) for lib in (tl, torch))
    assert got[0] == want[0]
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_without_bias_2d():
    assert _order(tl, (4, 3), False)[0] == _order(torch, (4, 3), False)[0]


def test_next_functions_list_bias_input_weight():
    w = tl.randn(5, 3, requires_grad=True)
    b = tl.randn(5, requires_grad=True)
    x = tl.randn(4, 3, requires_grad=True)
    y = tl.nn.functional.linear(x, w, b)
    assert all(n.variable is t for (n, _), t in zip(y.grad_fn.next_functions, (b, x, w)))
    gb, gx, gw = y.grad_fn.apply(tl.ones(4, 5))   # gradients in the edges' order
    assert gb.shape == (5,) and gx.shape == (4, 3) and gw.shape == (5, 3)


def test_two_linear_layers():
    orders = []
    for lib in (tl, torch):
        lib.manual_seed(0)
        l1, l2 = lib.nn.Linear(3, 4), lib.nn.Linear(4, 2)
        order = []
        for layer, module in (("1", l1), ("2", l2)):
            for name, p in module.named_parameters():
                p.register_hook(lambda g, tag=layer + name[0]: order.append(tag))
        l2(l1(lib.randn(6, 3))).sum().backward()
        orders.append(order)
    assert orders[0] == orders[1] == ["2b", "2w", "1b", "1w"]
