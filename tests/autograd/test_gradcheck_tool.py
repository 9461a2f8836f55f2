"""gradcheck and gradgradcheck themselves: pass on correct functions (on every test device:
inputs are perturbed in place where they live, Jacobians compared on the host), fail on
wrong ones."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib import autograd
from tensorlib.autograd import GradcheckError, gradcheck, gradgradcheck

from ._util import leaf, npy, on_device


def _x(shape=(3,), seed=0, device="cpu"):
    return leaf(np.random.default_rng(seed).standard_normal(shape), device=device)


class WrongGrad(autograd.Function):
    """sin with a wrong derivative (sin instead of cos)."""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.sin()


class RightFirstWrongSecond(autograd.Function):
    """x**2 whose backward is right in value but computed as a constant, so its own
    derivative (the second derivative) is wrong."""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (2 * x).detach()


def test_passes_on_correct_functions(device):
    a, b = _x((2, 3), device=device), _x((3, 4), 1, device=device)
    assert gradcheck(lambda x: (x.sin() * x.exp()).sum(), (_x(device=device),))
    assert gradcheck(lambda a, b: a @ b, (a, b))
    assert gradcheck(tl.tanh, _x((2, 2), device=device))   # a single tensor, not a tuple
    assert gradgradcheck(lambda x: x.sin() * x, (_x(device=device),))
    assert gradgradcheck(lambda a, b: a @ b, (a, b))


def test_fails_on_wrong_function():
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(WrongGrad.apply, (_x(),))
    assert gradcheck(WrongGrad.apply, (_x(),), raise_exception=False) is False
    assert isinstance(GradcheckError("x"), RuntimeError)


def test_gradgradcheck_catches_wrong_second_derivative():
    x = _x()
    assert gradcheck(RightFirstWrongSecond.apply, (x,))
    with pytest.raises(GradcheckError):
        gradgradcheck(RightFirstWrongSecond.apply, (x,))
    assert gradgradcheck(RightFirstWrongSecond.apply, (x,), raise_exception=False) is False


def test_mismatch_names_output_and_input():
    def f(a, b):
        return a * 2, WrongGrad.apply(b)
    with pytest.raises(GradcheckError, match="output 1 with respect to input 1"):
        gradcheck(f, (_x(), _x(seed=1)))


def test_non_differentiable_and_non_tensor_inputs_are_skipped(device):
    x = _x(device=device)
    c = tl.tensor([1.0, 2.0, 3.0], dtype=tl.float64, device=device)
    assert gradcheck(lambda x, c, k: x * c * k, (x, c, 2.5))


def test_inputs_are_restored_and_keep_their_layout(device):
    base = _x((4, 3), device=device).detach()
    x = base.t().detach().requires_grad_()
    before = npy(x).copy()
    seen = []

    def f(t):
        seen.append(t.is_contiguous())
        return t.exp()
    assert gradcheck(f, (x,))
    np.testing.assert_array_equal(npy(x), before)
    assert not any(seen) and not x.is_contiguous()
    assert on_device(x, device)                 # perturbed where it lives, not moved


def test_overlapping_input_rejected():
    x = tl.tensor([1.0, 2.0], dtype=tl.float64).expand(3, 2).detach().requires_grad_()
    with pytest.raises(RuntimeError, match="stride 0"):
        gradcheck(lambda t: t * 2, (x,))


def test_float32_input_warns():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="double precision"):
        gradcheck(lambda t: t * 2, (x,), atol=1e-2, rtol=1e-2, eps=1e-3)


def test_wrong_gradient_shape_reported():
    class BadShape(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g.sum()

    # the engine may refuse first; either way the check fails, in both modes
    for fast in (False, True):
        with pytest.raises(RuntimeError):
            gradcheck(BadShape.apply, (_x(),), fast_mode=fast)


def test_several_outputs_and_outputs_without_grad(device):
    def f(x):
        return x.sin(), (x > 0), x * x
    assert gradcheck(f, (_x(device=device),))
    assert gradgradcheck(lambda x: (x.sin(), x * x), (_x(device=device),))


def test_gradgradcheck_with_given_grad_outputs(device):
    x = _x(device=device)
    g = leaf([1.0, -2.0, 0.5], device=device)
    assert gradgradcheck(lambda t: t ** 3, (x,), (g,))


def test_gradient_on_another_device_reported(device):
    """A backward that hands back a gradient on another device than its input fails the
    check (whether the engine or gradcheck notices first)."""
    if tl.device(device).type == "cpu":
        pytest.skip("needs a device other than the CPU")

    class ToCPU(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return (g * 2).cpu()
    with pytest.raises(RuntimeError, match="device"):
        gradcheck(ToCPU.apply, (_x(device=device),))


# ---- fast_mode: one random projection v^T J u per (input, output) pair -----------------------
def test_fast_mode_passes_on_correct_functions(device):
    a, b = _x((2, 3), device=device), _x((3, 4), 1, device=device)
    assert gradcheck(lambda a, b: (a @ b).tanh(), (a, b), fast_mode=True)
    assert gradcheck(lambda x: (x.sin() * x.exp()).sum(), (_x(device=device),), fast_mode=True)
    assert gradgradcheck(lambda a, b: a @ b, (a, b), fast_mode=True)


def test_fast_mode_fails_on_wrong_functions():
    with pytest.raises(GradcheckError, match="output 1 with respect to input 1 \\(fast mode"):
        gradcheck(lambda a, b: (a * 2, WrongGrad.apply(b)), (_x(), _x(seed=1)), fast_mode=True)
    assert gradcheck(WrongGrad.apply, (_x((4, 5)),), fast_mode=True,
                     raise_exception=False) is False
    with pytest.raises(GradcheckError):
        gradgradcheck(RightFirstWrongSecond.apply, (_x(),), fast_mode=True)


def test_fast_mode_on_complex_inputs_and_outputs():
    z = tl.tensor(np.random.default_rng(2).standard_normal((3, 2))
                  + 1j * np.random.default_rng(3).standard_normal((3, 2)), requires_grad=True)
    assert gradcheck(lambda z: (z * z.conj().exp()).sum(-1), (z,), fast_mode=True)
    assert gradcheck(lambda z: z.abs(), (z,), fast_mode=True)


def test_fast_mode_restores_inputs_and_agrees_with_torch():
    torch = pytest.importorskip("torch")
    x = _x((5, 6), 4).t()
    before = npy(x).copy()
    assert gradcheck(lambda x: tl.softmax(x, -1) * x, (x,), fast_mode=True)
    np.testing.assert_array_equal(npy(x), before)
    assert x.stride() == (1, 6)
    tx = torch.tensor(before, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: torch.softmax(x, -1) * x, (tx,), fast_mode=True)


def _value_and_detached_statistic(x):
    """x ** 2, and a statistic of x computed through .item() (no grad, but it moves when x
    does), as a thresholding function returns its threshold."""
    return x ** 2, tl.tensor([x.max().item()], dtype=x.dtype)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_outputs_that_do_not_require_grad_are_not_compared(fast_mode):
    x = _x((4,))
    assert not _value_and_detached_statistic(x)[1].requires_grad
    assert gradcheck(_value_and_detached_statistic, (x,), fast_mode=fast_mode)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_with_no_differentiable_output_the_numerical_jacobian_must_be_zero(fast_mode):
    x = _x((4,))

    def detached(x):
        return tl.tensor([x.max().item()], dtype=x.dtype)
    with pytest.raises(GradcheckError):
        gradcheck(detached, (x,), fast_mode=fast_mode)
    assert gradcheck(lambda x: tl.zeros(2, dtype=x.dtype), (x,), fast_mode=fast_mode)
