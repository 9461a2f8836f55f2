"""Tensor-level autograd API: requires_grad, is_leaf, .grad, grad_fn names and
next_functions, retain_grad, detach/detach_, and the requires_grad errors."""
import warnings

import pytest

import tensorlib as tl
from tensorlib.autograd import AccumulateGrad, Node

from ._util import close, leaf


def test_requires_grad_on_creation_and_default():
    assert tl.tensor([1.0]).requires_grad is False
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad is None and x.grad_fn is None
    for make in (lambda: tl.ones(2, requires_grad=True), lambda: tl.zeros(2, requires_grad=True),
                 lambda: tl.full((2,), 3.0, requires_grad=True)):
        t = make()
        assert t.requires_grad and t.is_leaf


def test_requires_grad_underscore_returns_self_and_toggles():
    x = tl.tensor([1.0, 2.0])
    assert x.requires_grad_() is x
    assert x.requires_grad
    x.requires_grad_(False)
    assert not x.requires_grad
    x.requires_grad = True
    assert x.requires_grad


@pytest.mark.parametrize("dtype", [tl.int64, tl.int32, tl.bool, tl.uint8])
def test_requires_grad_needs_floating_dtype(dtype):
    with pytest.raises(RuntimeError, match="floating point"):
        tl.tensor([1, 0], dtype=dtype, requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        tl.tensor([1, 0], dtype=dtype).requires_grad_()


def test_non_leaf_requires_grad_false_raises():
    y = tl.tensor([1.0], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="leaf variables"):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError, match="leaf variables"):
        y.requires_grad = False
    assert y.requires_grad_(True) is y          # True on a non-leaf is a no-op


def test_result_of_op_is_non_leaf_with_grad_fn(device):
    x = tl.tensor([1.0, 2.0], requires_grad=True, device=device)
    c = tl.tensor([3.0, 4.0], device=device)
    y = x * c
    assert y.requires_grad and not y.is_leaf
    assert isinstance(y.grad_fn, Node)
    z = c * c                                   # no input requires grad: no graph
    assert not z.requires_grad and z.is_leaf and z.grad_fn is None


@pytest.mark.parametrize("make, name", [
    (lambda x, y: x + y, "AddBackward0"),
    (lambda x, y: x - y, "SubBackward0"),
    (lambda x, y: x * y, "MulBackward0"),
    (lambda x, y: x / y, "DivBackward0"),
    (lambda x, y: x ** y, "PowBackward0"),
    (lambda x, y: x.sum(), "SumBackward0"),
    (lambda x, y: x.mean(), "MeanBackward0"),
    (lambda x, y: x.exp(), "ExpBackward0"),
    (lambda x, y: tl.sin(x), "SinBackward0"),
    (lambda x, y: -x, "NegBackward0"),
    (lambda x, y: x.reshape(2, 1), "ReshapeBackward0"),
    (lambda x, y: x.unsqueeze(0) @ y.unsqueeze(1), "MatmulBackward0"),
    (lambda x, y: tl.maximum(x, y), "MaximumBackward0"),
])
def test_grad_fn_names(make, name):
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = tl.tensor([3.0, 4.0], requires_grad=True)
    out = make(x, y)
    assert out.grad_fn.name() == name
    assert type(out.grad_fn).__name__ == name
    assert name in repr(out.grad_fn)
    assert f"grad_fn=<{name}>" in repr(out)


def test_next_functions_leaf_inputs_show_accumulate_grad():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    c = tl.tensor([3.0, 4.0])
    y = x * c
    (acc, nr), (none, nr2) = y.grad_fn.next_functions
    assert isinstance(acc, AccumulateGrad) and acc.name() == "AccumulateGrad"
    assert acc.variable is x and nr == 0
    assert none is None and nr2 == 0
    # the same leaf always has the same AccumulateGrad node
    assert (x + 1).grad_fn.next_functions[0][0] is acc


def test_next_functions_chain_and_output_nr():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    a = x.exp()
    b = a * x
    s = b.sum()
    assert s.grad_fn.next_functions == ((b.grad_fn, 0),)
    assert b.grad_fn.next_functions[0] == (a.grad_fn, 0)
    assert b.grad_fn.next_functions[1][0].variable is x
    assert a.output_nr == 0


def test_leaf_grad_populated_non_leaf_grad_warns(device):
    x = tl.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = x * 3
    y.sum().backward()
    close(x.grad, [3.0, 3.0])
    assert x.grad.requires_grad is False
    with pytest.warns(UserWarning, match="retain_grad"):
        assert y.grad is None


def test_retain_grad(device):
    x = tl.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = x * x
    y.retain_grad()
    assert y.retains_grad and not x.retains_grad
    (y * 3).sum().backward()
    close(y.grad, [3.0, 3.0])
    close(x.grad, [6.0, 12.0])
    x.retain_grad()                              # no-op on a leaf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert y.grad is not None


def test_retain_grad_accumulates_and_needs_requires_grad(device):
    x = tl.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = x * 2
    y.retain_grad()
    y.retain_grad()                              # twice: still one store
    z = (y * y).sum()
    z.backward(retain_graph=True)
    z.backward()
    close(y.grad, [8.0, 16.0])
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        tl.tensor([1.0], device=device).retain_grad()


def test_detach_shares_storage_and_has_no_history(device):
    x = tl.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    d.add_(1)                                    # shares y's memory, like torch
    close(y, [3.0, 5.0])
    assert y.requires_grad


def test_detach_blocks_gradient(device):
    x = tl.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = x * x.detach()
    y.sum().backward()
    close(x.grad, [1.0, 2.0])


def test_detach_in_place():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert not y.requires_grad and y.is_leaf and y.grad_fn is None


def test_grad_setter_checks_shape_and_none_clears(device):
    x = tl.tensor([1.0, 2.0], requires_grad=True, device=device)
    x.grad = tl.tensor([5.0, 6.0], device=device)
    (x * 1).sum().backward()
    close(x.grad, [6.0, 7.0])
    x.grad = None
    assert x.grad is None
    with pytest.raises(RuntimeError, match="different size"):
        x.grad = tl.tensor([1.0], device=device)


def test_numpy_of_requires_grad_raises():
    x = tl.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="detach"):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0]


def test_non_float_outputs_do_not_require_grad(device):
    x = leaf([1.0, 3.0, 2.0], device=device)
    assert not (x > 1).requires_grad
    assert not x.argmax().requires_grad
    values, indices = x.max(0)
    assert values.requires_grad and not indices.requires_grad


def test_grad_setter_refuses_another_device(device, request):
    """PyTorch: "assigned grad has data located on a different device"."""
    if tl.device(device).type == "cpu":
        pytest.skip("needs a device other than the CPU")
    x = tl.tensor([1.0, 2.0], requires_grad=True, device=device)
    with pytest.raises(RuntimeError, match="device"):
        x.grad = tl.tensor([5.0, 6.0])


def test_del_grad_clears_it():
    p = tl.nn.Parameter(tl.ones(2))
    p.grad = tl.ones(2)
    del p.grad
    assert p.grad is None
