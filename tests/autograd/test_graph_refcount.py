"""A graph is freed by reference counting, not left to the cyclic garbage collector (whose
full passes over a large heap cost a third of an LSTM step): saved tensors do not point back
at the node that saved them, and custom Functions' contexts likewise."""
import gc
import weakref

import pytest

import tensorlib as tl


@pytest.fixture
def no_gc():
    was = gc.isenabled()
    gc.disable()
    yield
    if was:
        gc.enable()


def test_forward_graph_dies_with_its_output(no_gc):
    x = tl.randn(3, 4, requires_grad=True)
    y = (x * x.sigmoid()).tanh().sum()
    nodes = [weakref.ref(y.grad_fn), weakref.ref(y.grad_fn.next_functions[0][0])]
    del y
    assert all(n() is None for n in nodes)


def test_graph_after_backward_dies(no_gc):
    x = tl.randn(5, requires_grad=True)
    y = x.exp()                          # saves its output
    z = (y * x).sum()
    ref = weakref.ref(y.grad_fn)
    z.backward()
    del y, z
    assert ref() is None
    assert x.grad is not None


def test_saved_output_still_unpacks_with_its_node():
    x = tl.randn(4, dtype=tl.float64, requires_grad=True)
    y = x.sigmoid()
    (g,) = tl.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = tl.autograd.grad(g.sum(), x)          # through the saved output's grad_fn
    s = tl.sigmoid(x.detach())
    expected = s * (1 - s) * (1 - 2 * s)
    assert tl.allclose(gg, expected)


def test_in_place_error_still_names_the_node():
    x = tl.randn(3, requires_grad=True)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match="output 0 of ExpBackward0.*The op that saved it: "
                                           "ExpBackward0"):
        y.sum().backward()


def test_custom_function_context_dies(no_gc):
    class Square(tl.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return 2 * t * g

    x = tl.randn(3, requires_grad=True)
    y = Square.apply(x)
    ref = weakref.ref(y.grad_fn)
    y.sum().backward()
    assert tl.allclose(x.grad, 2 * x.detach())
    del y
    assert ref() is None


def test_hooks_made_on_first_use():
    x = tl.randn(3, requires_grad=True)
    y = x * 2
    assert y.grad_fn._hooks is None and y.grad_fn._pre_hooks is None
    seen = []
    y.grad_fn.register_hook(lambda gi, go: seen.append(len(gi)))
    y.grad_fn.register_prehook(lambda go: seen.append("pre"))
    y.register_hook(lambda g: g * 3)
    y.sum().backward()
    assert seen == ["pre", 1] and x.grad.tolist() == [6.0, 6.0, 6.0]
