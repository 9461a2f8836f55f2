"""tensorlib.autograd.functional against torch.autograd.functional: values, output
structures (tensor / tuple / tuple of tuples), strict-mode errors, create_graph."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import functional as F

torch = pytest.importorskip("torch")
TF = torch.autograd.functional

RNG = np.random.default_rng(0)
X = RNG.standard_normal(3)
Y = RNG.standard_normal((2, 3))
V3 = RNG.standard_normal(3)
V23 = RNG.standard_normal((2, 3))


def to(lib, a, requires_grad=False):
    if lib is torch:
        return torch.tensor(a, dtype=torch.float64, requires_grad=requires_grad)
    return tl.tensor(a, dtype=tl.float64, requires_grad=requires_grad)


def assert_same(ours, theirs):
    """Same nesting of tuples, same shapes and dtypes, close values."""
    if isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), (ours, theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b)
        return
    assert isinstance(ours, tl.Tensor), type(ours)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(),
                               rtol=1e-10, atol=1e-12)


def both(fn_name, func, inputs, *args, **kwargs):
    """Run the same call on both libraries; inputs and tensors in args are numpy arrays
    (or tuples of them)."""
    def conv(lib, v):
        if isinstance(v, tuple):
            return tuple(conv(lib, x) for x in v)
        return to(lib, v) if isinstance(v, np.ndarray) else v
    ours = getattr(F, fn_name)(lambda *a: func(tl, *a), conv(tl, inputs),
                               *[conv(tl, a) for a in args], **kwargs)
    theirs = getattr(TF, fn_name)(lambda *a: func(torch, *a), conv(torch, inputs),
                                  *[conv(torch, a) for a in args], **kwargs)
    assert_same(ours, theirs)
    return ours


def exp_reducer(m, x):
    return m.exp(x).sum(dim=-1)


def two_in_two_out(m, x, y):
    return (x * y).sum(dim=0) + m.sin(x[0]), m.tanh(y * 2.0)


def cubic(m, x):
    return (x ** 3).sum() + x[0] * x[1]


def cubic2(m, x, y):
    return (x ** 2 * y.sum(dim=0)).sum() + (y ** 3).sum()


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_single_and_tuple_structures(vectorize):
    both("jacobian", exp_reducer, Y, vectorize=vectorize)
    both("jacobian", two_in_two_out, (V3, Y), vectorize=vectorize)
    both("jacobian", lambda m, x: m.sin(x), (X,), vectorize=vectorize)      # tuple of one


def test_jacobian_forward_mode_matches_reverse():
    both("jacobian", two_in_two_out, (V3, Y), vectorize=True, strategy="forward-mode")
    both("jacobian", lambda m, x: m.cos(x) * x.sum(), X, vectorize=True,
         strategy="forward-mode")


def test_hessian_structures():
    both("hessian", cubic, X)
    both("hessian", cubic2, (V3, Y))
    both("hessian", cubic, X, outer_jacobian_strategy="forward-mode", vectorize=True)


def test_vjp_jvp_hvp_vhp():
    both("vjp", exp_reducer, Y, np.ones(2))
    both("vjp", cubic, X)                                       # v=None, scalar output
    both("vjp", two_in_two_out, (V3, Y), (V3, V23))
    both("jvp", exp_reducer, Y, V23)
    both("jvp", two_in_two_out, (V3, Y), (V3, V23))
    both("hvp", cubic, X, V3)
    both("vhp", cubic, X, V3)
    both("hvp", cubic2, (V3, Y), (V3, V23))
    both("vhp", cubic2, (V3, Y), (V3, V23))


def test_outputs_do_not_require_grad_unless_create_graph():
    out, res = F.vjp(lambda x: (x ** 2).sum(), to(tl, X))
    assert not out.requires_grad and not res.requires_grad
    x = to(tl, X, requires_grad=True)
    _, res = F.vjp(lambda a: (a ** 3).sum(), x, create_graph=True)
    assert res.requires_grad
    # the result stays differentiable with respect to the caller's x: d/dx sum(3x^2) = 6x
    (g,) = tl.autograd.grad(res.sum(), x)
    np.testing.assert_allclose(g.numpy(), 6 * X)


def test_create_graph_hessian_is_differentiable():
    x = to(tl, X, requires_grad=True)
    h = F.hessian(lambda a: (a ** 3).sum(), x, create_graph=True)
    (g,) = tl.autograd.grad(h.sum(), x)
    np.testing.assert_allclose(g.numpy(), np.full(3, 6.0))


def test_independent_outputs_give_zeros_or_strict_errors():
    def ours(x, y):
        return x.sin() * 1.0
    x, y = to(tl, X), to(tl, V3)
    jac = F.jacobian(ours, (x, y))
    np.testing.assert_array_equal(jac[1].numpy(), np.zeros((3, 3)))
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is "
                                           "independent of input 1"):
        F.jacobian(ours, (x, y), strict=True)
    with pytest.raises(RuntimeError, match="independent of input 1"):
        F.vjp(ours, (x, y), to(tl, V3), strict=True)
    with pytest.raises(RuntimeError, match="does not require gradients"):
        F.vjp(lambda a: tl.ones(3, dtype=tl.float64), x, to(tl, V3), strict=True)
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with "
                                           "respect to input 0 is independent"):
        F.hessian(lambda a: a.sum() * 2.0, x, strict=True)


def test_argument_errors_match_torch():
    x = to(tl, X)
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        F.vjp(lambda a: a, [x])
    with pytest.raises(RuntimeError, match="v has invalid size: should be"):
        F.vjp(lambda a: a * 2, x, tl.ones(4, dtype=tl.float64))
    with pytest.raises(RuntimeError, match="v is a tuple of invalid length"):
        F.jvp(lambda a, b: a * b, (x, x), (x,))
    with pytest.raises(RuntimeError, match="The vector v can only be None"):
        F.vjp(lambda a: a * 2, x)
    with pytest.raises(RuntimeError, match="should return a single Tensor"):
        F.hvp(lambda a: (a, a), x, x)
    with pytest.raises(RuntimeError, match="should contain a single element"):
        F.hessian(lambda a: a * 2, x)
    with pytest.raises(NotImplementedError, match="create_graph=True"):
        F.jacobian(lambda a: a, x, create_graph=True, vectorize=True, strategy="forward-mode")
    with pytest.raises(AssertionError, match="forward-mode"):
        F.jacobian(lambda a: a, x, strategy="sideways")
