"""Tensor hooks (register_hook on leaves and non-leaves, handle.remove()),
post-accumulate-grad hooks, and Node.register_hook / register_prehook; on every test
device."""
import pytest

import tensorlib as tl
from tensorlib import autograd

from ._util import assert_on, close, leaf


def test_leaf_hook_sees_and_replaces_gradient(device):
    x = leaf([1.0, 2.0], device=device)
    seen = []
    h = x.register_hook(lambda g: seen.append(g.clone()) or g * 10)
    (x * 2).sum().backward()
    assert_on(device, seen[0], x.grad)
    close(seen[0], [2.0, 2.0])
    close(x.grad, [20.0, 20.0])
    h.remove()
    x.grad = None
    (x * 2).sum().backward()
    close(x.grad, [2.0, 2.0])
    assert len(seen) == 1


def test_hook_returning_none_keeps_gradient_and_hooks_chain(device):
    x = leaf([1.0], device=device)
    order = []
    x.register_hook(lambda g: order.append("a"))
    x.register_hook(lambda g: order.append("b") or g + 1)
    x.register_hook(lambda g: order.append("c") or g * 3)
    (x * 2).sum().backward()
    assert order == ["a", "b", "c"]
    close(x.grad, [9.0])


def test_non_leaf_hook_replaces_gradient_flowing_on(device):
    x = leaf([1.0, 2.0], device=device)
    y = x * 2
    seen = []
    h = y.register_hook(lambda g: seen.append(g.clone()) or g * 0 + 1)
    (y * y).sum().backward()
    close(seen[0], [4.0, 8.0])
    close(x.grad, [2.0, 2.0])
    h.remove()
    x.grad = None
    y = x * 2
    (y * y).sum().backward()
    close(x.grad, [8.0, 16.0])


def test_hook_on_multi_use_non_leaf_sees_the_sum(device):
    x = leaf([1.0], device=device)
    y = x * 3
    seen = []
    y.register_hook(lambda g: seen.append(g.clone()))
    (y * 2 + y * 5).sum().backward()
    assert len(seen) == 1
    close(seen[0], [7.0])


def test_hook_and_retain_grad_order(device):
    # retain_grad stores what the hooks produced, whatever the registration order (torch>=2)
    for retain_first in (True, False):
        x = leaf([1.0, 2.0], device=device)
        y = x * 2
        if retain_first:
            y.retain_grad()
        y.register_hook(lambda g: g * 2)
        if not retain_first:
            y.retain_grad()
        y.sum().backward()
        close(y.grad, [2.0, 2.0])
        close(x.grad, [4.0, 4.0])


def test_hook_requires_grad(device):
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        tl.ones(2, device=device).register_hook(lambda g: g)


def test_handle_is_context_manager(device):
    x = leaf([1.0], device=device)
    with x.register_hook(lambda g: g * 100):
        (x * 1).sum().backward()
    close(x.grad, [100.0])
    (x * 1).sum().backward()
    close(x.grad, [101.0])


def test_post_accumulate_grad_hook(device):
    x = leaf([1.0, 2.0], device=device)
    calls = []
    h = x.register_post_accumulate_grad_hook(lambda t: calls.append(t.grad.clone()))
    (x * 3).sum().backward()
    (x * 1).sum().backward()
    assert len(calls) == 2
    close(calls[0], [3.0, 3.0])
    close(calls[1], [4.0, 4.0])                  # runs after accumulation
    h.remove()
    (x * 1).sum().backward()
    assert len(calls) == 2


def test_post_accumulate_hook_can_step_parameter(device):
    w = leaf([1.0, 2.0], device=device)

    def sgd(p):
        with tl.no_grad():
            p.sub_(p.grad * 0.5)
        p.grad = None
    w.register_post_accumulate_grad_hook(sgd)
    (w * w).sum().backward()
    close(w, [0.0, 0.0])
    assert w.grad is None


def test_post_accumulate_hook_on_non_leaf_raises(device):
    y = leaf([1.0], device=device) * 2
    with pytest.raises(RuntimeError, match="non-leaf"):
        y.register_post_accumulate_grad_hook(lambda t: None)


def test_node_hooks_see_grad_inputs_and_outputs(device):
    x = leaf([1.0, 2.0], device=device)
    y = x * 2
    calls = []
    y.grad_fn.register_prehook(lambda go: calls.append(("pre", go)))
    y.grad_fn.register_hook(lambda gi, go: calls.append(("post", gi, go)))
    y.sum().backward()
    assert [c[0] for c in calls] == ["pre", "post"]
    (go,) = calls[0][1]
    close(go, [1.0, 1.0])
    gi, go2 = calls[1][1], calls[1][2]
    assert_on(device, go, gi[0], go2[0])
    close(gi[0], [2.0, 2.0])
    assert len(gi) == len(y.grad_fn.next_functions)
    close(go2[0], [1.0, 1.0])


def test_node_hooks_replace_gradients(device):
    x = leaf([1.0, 2.0], device=device)
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 100,) + tuple(gi[1:]))
    y.sum().backward()
    close(x.grad, [200.0, 200.0])
    x.grad = None
    y = x * 2
    y.grad_fn.register_prehook(lambda go: (go[0] * 100,))
    y.sum().backward()
    close(x.grad, [200.0, 200.0])


def test_node_hook_handles_remove(device):
    x = leaf([1.0], device=device)
    y = x * 2
    calls = []
    h1 = y.grad_fn.register_hook(lambda gi, go: calls.append(1))
    h2 = y.grad_fn.register_prehook(lambda go: calls.append(2))
    h1.remove()
    h2.remove()
    y.sum().backward()
    assert calls == []


def test_accumulate_grad_node_hooks(device):
    x = leaf([1.0], device=device)
    acc = (x * 1).grad_fn.next_functions[0][0]
    calls = []
    acc.register_prehook(lambda go: calls.append(go[0].clone()))
    (x * 5).sum().backward()
    close(calls[0], [5.0])


def test_hooks_run_with_autograd_grad(device):
    x = leaf([1.0], device=device)
    x.register_hook(lambda g: g * 3)
    (g,) = autograd.grad((x * 2).sum(), x)
    close(g, [6.0])
    assert x.grad is None


def test_hook_removing_itself_during_backward(device):
    x = leaf([1.0], device=device)
    handles = []

    def once(g):
        handles[0].remove()
        return g * 2
    handles.append(x.register_hook(once))
    x.register_hook(lambda g: g + 1)
    (x * 1).sum().backward()
    close(x.grad, [3.0])
    (x * 1).sum().backward()
    close(x.grad, [5.0])


def test_hook_returning_another_device_raises(device, request):
    """PyTorch: "hook ... has changed the type of value" when a hook moves the gradient."""
    if tl.device(device).type == "cpu":
        pytest.skip("needs a device other than the CPU")
    x = leaf([1.0, 2.0], device=device)
    x.register_hook(lambda g: g.cpu())
    with pytest.raises(RuntimeError, match="device|type"):
        (x * 2).sum().backward()


def test_leaf_gradients_are_accumulated_as_soon_as_ready():
    """A leaf's hooks fire when its gradient is complete, before the layers below run (as
    PyTorch's engine gives accumulation the highest priority): the last layer's parameters
    first. Compared with torch's order where installed."""
    fired = []

    def watch(name):
        return lambda g: fired.append(name)

    tl.manual_seed(0)
    layers = [tl.nn.Linear(3, 4), tl.nn.Linear(4, 4), tl.nn.Linear(4, 2)]
    for i, layer in enumerate(layers):
        layer.weight.register_hook(watch(f"{i}.weight"))
    x = tl.randn(5, 3)
    out = x
    for layer in layers:
        out = layer(out).relu()
    out.sum().backward()
    assert fired == ["2.weight", "1.weight", "0.weight"]
    torch = pytest.importorskip("torch")
    fired.clear()
    theirs = [torch.nn.Linear(3, 4), torch.nn.Linear(4, 4), torch.nn.Linear(4, 2)]
    for i, layer in enumerate(theirs):
        layer.weight.register_hook(watch(f"{i}.weight"))
    out = torch.randn(5, 3)
    for layer in theirs:
        out = layer(out).relu()
    out.sum().backward()
    assert fired == ["2.weight", "1.weight", "0.weight"]
