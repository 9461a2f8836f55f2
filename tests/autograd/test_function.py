"""autograd.Function: ctx.save_for_backward, saved_tensors, needs_input_grad,
mark_non_differentiable, set_materialize_grads, several inputs/outputs, non-tensor args,
use inside a bigger graph and with create_graph; on every test device."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib import autograd

from ._util import assert_on, close, leaf


class Square(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x


class ScaledProduct(autograd.Function):
    """(a * b * k, a + b) with a Python scale k; records needs_input_grad."""
    seen = []

    @staticmethod
    def forward(ctx, a, k, b):
        ctx.save_for_backward(a, b)
        ctx.k = k
        return a * b * k, a + b

    @staticmethod
    def backward(ctx, g_prod, g_sum):
        ScaledProduct.seen.append(ctx.needs_input_grad)
        a, b = ctx.saved_tensors
        ga = g_prod * b * ctx.k + g_sum if ctx.needs_input_grad[0] else None
        gb = g_prod * a * ctx.k + g_sum if ctx.needs_input_grad[2] else None
        return ga, None, gb


def test_basic_function(device):
    x = leaf([1.0, 2.0, 3.0], device=device)
    y = Square.apply(x)
    assert y.requires_grad and y.grad_fn.name() == "SquareBackward"
    assert y.grad_fn.next_functions[0][0].variable is x
    y.sum().backward()
    assert_on(device, x.grad)
    close(x.grad, [2.0, 4.0, 6.0])


def test_forward_runs_without_recording(device):
    class Check(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            assert not tl.is_grad_enabled()
            y = x * 2
            assert not y.requires_grad
            return y

        @staticmethod
        def backward(ctx, g):
            return g * 2
    x = leaf([1.0], device=device)
    Check.apply(x).sum().backward()
    close(x.grad, [2.0])


def test_multiple_inputs_outputs_non_tensor_args_needs_input_grad(device):
    ScaledProduct.seen.clear()
    a, b = leaf([1.0, 2.0], device=device), leaf([3.0, 4.0], device=device)
    p, s = ScaledProduct.apply(a, 2.0, b)
    assert p.grad_fn is s.grad_fn and s.output_nr == 1
    (p.sum() + 3 * s.sum()).backward()
    close(a.grad, 2 * np.array([3.0, 4.0]) + 3)
    close(b.grad, 2 * np.array([1.0, 2.0]) + 3)
    assert ScaledProduct.seen[-1] == (True, False, True)
    c = tl.tensor([3.0, 4.0], dtype=tl.float64, device=device)    # does not require grad
    p, s = ScaledProduct.apply(a, 1.0, c)
    p.sum().backward()
    assert ScaledProduct.seen[-1] == (True, False, False)


def test_only_one_output_used_gets_zeros_for_the_other(device):
    seen = []

    class Two(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1, g2))
            return g1 + 2 * g2

    x = leaf([1.0, 2.0], device=device)
    a, b = Two.apply(x)
    a.sum().backward()
    g1, g2 = seen[-1]
    assert_on(device, g1, g2)                    # the zeros are made on the input's device
    close(g2, [0.0, 0.0])                          # materialized
    x.grad = None
    a, b = Two.apply(x)
    b.sum().backward()                             # only the second output used
    g1, g2 = seen[-1]
    close(g1, [0.0, 0.0])
    close(x.grad, [2.0, 2.0])


def test_set_materialize_grads_false_passes_none(device):
    seen = []

    class Two(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1, g2))
            out = None
            if g1 is not None:
                out = g1
            if g2 is not None:
                out = 2 * g2 if out is None else out + 2 * g2
            return out

    x = leaf([1.0, 2.0], device=device)
    a, _ = Two.apply(x)
    a.sum().backward()
    assert seen[-1][1] is None
    close(x.grad, [1.0, 1.0])
    x.grad = None
    _, b = Two.apply(x)
    b.sum().backward()
    assert seen[-1][0] is None
    close(x.grad, [2.0, 2.0])


def test_mark_non_differentiable(device):
    class SortLike(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            doubled = x * 2
            idx = x.argmax()
            flag = x * 0
            ctx.mark_non_differentiable(idx, flag)
            return doubled, idx, flag

        @staticmethod
        def backward(ctx, g, g_idx, g_flag):
            return g * 2

    x = leaf([1.0, 3.0], device=device)
    d, idx, flag = SortLike.apply(x)
    assert d.requires_grad
    assert not idx.requires_grad and not flag.requires_grad
    d.sum().backward()
    close(x.grad, [2.0, 2.0])


def test_saved_non_tensors_and_none(device):
    class Save(autograd.Function):
        @staticmethod
        def forward(ctx, x, n):
            ctx.save_for_backward(x, None)
            ctx.n = n
            return x ** n

        @staticmethod
        def backward(ctx, g):
            x, nothing = ctx.saved_tensors
            assert nothing is None
            return g * ctx.n * x ** (ctx.n - 1), None

    x = leaf([2.0], device=device)
    Save.apply(x, 3).sum().backward()
    close(x.grad, [12.0])


def test_wrong_number_of_gradients_raises():
    class Bad(autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        Bad.apply(leaf([1.0]), leaf([2.0])).sum().backward()


def test_no_input_requires_grad_records_nothing(device):
    y = Square.apply(tl.tensor([3.0], device=device))
    assert not y.requires_grad and y.grad_fn is None
    with tl.no_grad():
        y = Square.apply(leaf([3.0], device=device))
    assert not y.requires_grad


def test_inside_bigger_graph(device):
    x = leaf([0.5, -1.0], device=device)
    y = Square.apply(x.sin() * 3) + x.exp()
    y.sum().backward()
    xv = np.array([0.5, -1.0])
    close(x.grad, 2 * 3 * np.sin(xv) * 3 * np.cos(xv) + np.exp(xv))


def test_saved_tensor_modified_in_place_raises(device):
    x = leaf([1.0, 2.0], device=device)
    h = x * 1
    y = Square.apply(h)
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_saved_tensors_freed_after_backward(device):
    x = leaf([1.0], device=device)
    y = Square.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.sum().backward()
    y = Square.apply(x)
    s = y.sum()
    s.backward(retain_graph=True)
    s.backward()
    close(x.grad, [2.0 + 2.0 + 2.0])


def test_create_graph_through_function(device):
    class Cube(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2              # written in differentiable ops

    x = leaf([2.0], device=device)
    y = Cube.apply(x * 1.0) * 2
    (g,) = autograd.grad(y.sum(), x, create_graph=True)
    close(g, [24.0])
    (g2,) = autograd.grad(g.sum(), x)
    close(g2, [24.0])
    assert autograd.gradcheck(Cube.apply, (leaf([0.3, -1.2], device=device),))
    assert autograd.gradgradcheck(Cube.apply, (leaf([0.3, -1.2], device=device),))


def test_an_input_returned_unchanged_comes_back_as_a_view_with_the_functions_node(device):
    """As in PyTorch: the returned input is a new view of it carrying the Function's node, so
    gradients go through the Function's backward (here x 3) and the input's own history
    stays as it was."""
    class Ident(autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x, y * 2

        @staticmethod
        def backward(ctx, gx, gy):
            return gx * 3, gy * 2

    x, y = leaf([1.0], device=device), leaf([1.0], device=device)
    a, b = Ident.apply(x, y)
    assert a is not x and x.is_leaf and a.grad_fn is b.grad_fn
    assert a._base is x
    a.data[0] = 5.0                     # shares x's memory
    close(x.detach(), [5.0])
    x.data[0] = 1.0
    (a + b).sum().backward()
    close(x.grad, [3.0])
    close(y.grad, [2.0])
    with tl.no_grad():
        a, _ = Ident.apply(x, y)
    assert a is not x and not a.requires_grad


def test_an_unrecorded_scratch_input_written_through_data_links_the_value(device):
    """A Function that writes its second input into a slice of a scratch tensor (which needs
    no gradient) through `.data` and returns the scratch: the returned tensor requires grad
    and the value gets its slice of the gradient (the pattern of a Runge-Kutta stage
    buffer)."""
    class WriteColumn(autograd.Function):
        @staticmethod
        def forward(ctx, scratch, value, column):
            ctx.column = column
            scratch.data[:, column] = value
            return scratch

        @staticmethod
        def backward(ctx, g):
            return g, g[:, ctx.column], None

    a, b = leaf([1.0, 2.0], device=device), leaf([3.0, 4.0], device=device)
    k = tl.empty(2, 2, device=device)
    k = WriteColumn.apply(k, a, 0)
    k = WriteColumn.apply(k, b * 2, 1)
    assert k.requires_grad and type(k.grad_fn).__name__ != "NoneType"
    assert "grad_fn=<WriteColumnBackward>" in repr(k)
    (k @ tl.tensor([1.0, 10.0], device=device)).sum().backward()
    close(a.grad, [1.0, 1.0])
    close(b.grad, [20.0, 20.0])


def test_function_ctx_is_node():
    x = leaf([1.0])
    y = Square.apply(x)
    assert isinstance(y.grad_fn, autograd.Node)
    assert isinstance(y.grad_fn, autograd.FunctionCtx)


def test_unimplemented_forward_backward():
    class Nothing(autograd.Function):
        pass
    with pytest.raises(NotImplementedError):
        Nothing.apply(leaf([1.0]))

    class NoBackward(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2
    with pytest.raises(NotImplementedError):
        NoBackward.apply(leaf([1.0])).sum().backward()


def _returning(grad_fn):
    class F(autograd.Function):
        @staticmethod
        def forward(ctx, x, k=1.0):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return grad_fn(g)
    return F


def test_gradient_of_wrong_shape_raises(device):
    F = _returning(lambda g: (g.sum(), None))     # x's shape does not expand to []
    with pytest.raises(RuntimeError, match=r"got \[\] but expected shape compatible"):
        F.apply(leaf([1.0, 2.0, 3.0], device=device), 2.0).sum().backward()
    F = _returning(lambda g: (tl.ones(2, dtype=tl.float64, device=device), None))
    with pytest.raises(RuntimeError, match="invalid gradient at index 0"):
        F.apply(leaf([1.0, 2.0, 3.0], device=device), 2.0).sum().backward()


def test_gradient_broadcast_shape_is_summed_and_dtype_cast(device):
    F = _returning(lambda g: (g.expand(2, 3).to(tl.float32), None))
    x = leaf([1.0, 2.0, 3.0], device=device)
    F.apply(x, 2.0).sum().backward()
    assert x.grad.shape == (3,) and x.grad.dtype == tl.float64
    close(x.grad, [2.0, 2.0, 2.0])


def test_gradient_for_non_tensor_input_raises(device):
    F = _returning(lambda g: (g, g))
    with pytest.raises(RuntimeError, match="not a Variable"):
        F.apply(leaf([1.0], device=device), 2.0).sum().backward()


def test_saved_output_no_reference_cycle_and_double_backward(device):
    import gc
    import weakref

    class Exp(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out

    x = leaf([0.5, -1.0], device=device)
    gc.disable()
    try:
        y = Exp.apply(x)
        ref = weakref.ref(y)
        del y
        assert ref() is None, "saved output keeps itself alive through its grad_fn"
    finally:
        gc.enable()
    y = Exp.apply(x)
    (g,) = autograd.grad(y.sum(), x, create_graph=True)
    (g2,) = autograd.grad(g.sum(), x)
    close(g2, np.exp([0.5, -1.0]))
    assert autograd.gradgradcheck(Exp.apply, (leaf([0.3, -0.2], device=device),))
    y = Exp.apply(x)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="output 0 of ExpBackward"):
        y.sum().backward()


def test_gradient_on_another_device_raises(device, request):
    """PyTorch refuses a Function gradient on another device than its input ("invalid
    gradient at index 0 - expected device ... but got ...")."""
    if tl.device(device).type == "cpu":
        pytest.skip("needs a device other than the CPU")
    F = _returning(lambda g: (g.cpu(), None))
    x = leaf([1.0, 2.0], device=device)
    with pytest.raises(RuntimeError, match="device"):
        F.apply(x, 2.0).sum().backward()


def test_a_returned_input_marked_non_differentiable_stays_without_grad(device):
    class PassThrough(autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.mark_non_differentiable(x)
            return x, y * 2

        @staticmethod
        def backward(ctx, gx, gy):
            return None, gy * 2

    x, y = leaf([1.0], device=device), leaf([1.0], device=device)
    a, b = PassThrough.apply(x, y)
    assert a is not x and not a.requires_grad and a.grad_fn is None
    b.sum().backward()
    close(y.grad, [2.0])


def test_backward_may_return_extra_trailing_nones_but_no_extra_gradient():
    class Double(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None            # PyTorch drops the trailing Nones

    class TooMany(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, g

    x = tl.ones(2, requires_grad=True)
    Double.apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    with pytest.raises(RuntimeError, match="incorrect number of gradients .expected 1, got 2"):
        TooMany.apply(x).sum().backward()


class _CubeOnce(tl.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @tl.autograd.function.once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        assert not tl.is_grad_enabled()           # the body records nothing
        return grad * 3 * x ** 2


def test_once_differentiable_backward_gives_first_order_gradients():
    x = tl.tensor([1.0, -2.0], requires_grad=True)
    _CubeOnce.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 12.0]


def test_once_differentiable_refuses_a_second_differentiation():
    """As PyTorch's: with create_graph and an incoming gradient that has history, the
    gradient requires grad but differentiating it raises (a plain incoming gradient gives a
    plain result)."""
    x = tl.tensor([1.0, -2.0], requires_grad=True)
    (plain,) = tl.autograd.grad(_CubeOnce.apply(x).sum(), x, create_graph=True)
    assert plain.tolist() == [3.0, 12.0] and not plain.requires_grad
    (g,) = tl.autograd.grad((_CubeOnce.apply(x * 1) ** 2).sum(), x, create_graph=True)
    assert g.requires_grad
    with pytest.raises(RuntimeError, match="differentiate twice.*once_differentiable"):
        g.sum().backward()
