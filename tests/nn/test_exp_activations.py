"""ELU/CELU/SELU, softplus, logsigmoid and Mish (ops of their own) against PyTorch: values and
gradients from -1000 to 1000 with NaN and the infinities, float32 and float64, small and
multi-threaded sizes, transposed and sliced inputs, a broadcast gradient, parameters the
kernels decline, in-place variants, integer inputs, the modules, and compiled code."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn as nn
import tensorlib.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

CALLS = {
    "elu": lambda f, x: f.elu(x),
    "elu-alpha": lambda f, x: f.elu(x, 0.4),
    "celu": lambda f, x: f.celu(x, 1.7),
    "celu-negative-alpha": lambda f, x: f.celu(x, -0.8),
    "selu": lambda f, x: f.selu(x),
    "softplus": lambda f, x: f.softplus(x),
    "softplus-beta": lambda f, x: f.softplus(x, 3.0, 6.0),
    "softplus-negative-beta": lambda f, x: f.softplus(x, -2.0, 6.0),
    "softplus-high-threshold": lambda f, x: f.softplus(x, 1.0, 500.0),
    "logsigmoid": lambda f, x: f.logsigmoid(x),
    "mish": lambda f, x: f.mish(x),
}
SPECIALS = [-np.inf, -1000.0, -100.0, -20.0, -1.0, -1e-4, -0.0, 0.0, 1e-4, 1.0, 2.0, 5.9, 6.1,
            19.9, 20.1, 100.0, 1000.0, np.inf]
TOLERANCE = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-12, atol=1e-14)}


def _values(n, dtype, seed=0):
    """n values, the specials and NaN up front (where PyTorch's vectorised loop reads them)."""
    x = np.random.default_rng(seed).standard_normal(n) * 5
    x[:len(SPECIALS)] = SPECIALS
    x[len(SPECIALS)] = np.nan
    return x.astype(dtype)


def _run(lib, f, name, x, g, transform):
    leaf = lib.tensor(x).requires_grad_(True)
    y = CALLS[name](f, transform(leaf))
    y.backward(transform(lib.tensor(g)))
    return y.detach().numpy(), leaf.grad.numpy(), type(y.grad_fn).__name__


def _check(name, x, g, transform=lambda t: t):
    with np.errstate(all="ignore"):
        y, gx, node = _run(tl, F, name, x, g, transform)
        ty, tgx, tnode = _run(torch, TF, name, x, g, transform)
    assert node == tnode
    tol = TOLERANCE[x.dtype.type]
    np.testing.assert_allclose(y, ty, equal_nan=True, **tol)
    np.testing.assert_allclose(gx, tgx, equal_nan=True, **tol)


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [64, 1 << 17])
def test_matches_torch_on_specials(name, dtype, n):
    _check(name, _values(n, dtype), np.random.default_rng(1).standard_normal(n).astype(dtype))


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("layout", ["transposed", "sliced"])
def test_other_layouts_match_torch(name, layout):
    x = _values(96 * 64, np.float32).reshape(96, 64)
    g = np.random.default_rng(2).standard_normal(x.shape).astype(np.float32)
    _check(name, x, g, (lambda t: t.t()) if layout == "transposed" else (lambda t: t[:, 1::2]))


@pytest.mark.parametrize("name", sorted(CALLS))
def test_broadcast_gradient_matches_torch(name):
    x = np.random.default_rng(3).standard_normal((300, 300)).astype(np.float32) * 4
    grads = []
    for lib, f in ((tl, F), (torch, TF)):
        leaf = lib.tensor(x).requires_grad_(True)
        (CALLS[name](f, leaf).sum() * 1.5).backward()
        grads.append(leaf.grad.numpy())
    np.testing.assert_allclose(*grads, **TOLERANCE[np.float32])


INPLACE = [("elu_", lambda f, x: f.elu_(x, 0.5)),
           ("elu-inplace", lambda f, x: f.elu(x, inplace=True)),
           ("selu_", lambda f, x: f.selu_(x)),
           ("selu-inplace", lambda f, x: f.selu(x, inplace=True)),
           ("celu_", lambda f, x: f.celu_(x, 2.0)),
           ("mish-inplace", lambda f, x: f.mish(x, inplace=True))]


@pytest.mark.parametrize("name,call", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_variants_write_the_input_and_differentiate(name, call):
    x = _values(200, np.float64)[:len(SPECIALS)]
    x = x[np.isfinite(x)]
    mine, theirs = tl.tensor(x), torch.tensor(x)
    assert call(F, mine) is mine
    call(TF, theirs)
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), **TOLERANCE[np.float64])
    grads = []
    for lib, f in ((tl, F), (torch, TF)):
        leaf = lib.tensor(x).requires_grad_(True)
        mid = leaf * 1.0
        call(f, mid)
        mid.backward(lib.ones(len(x), dtype=lib.float64) * 0.5)
        grads.append(leaf.grad.numpy())
    np.testing.assert_allclose(*grads, **TOLERANCE[np.float64])


@pytest.mark.parametrize("name", ["elu", "celu", "selu", "softplus", "logsigmoid", "mish"])
def test_integer_inputs_raise_as_torch(name):
    ints = np.array([-2, 0, 3], np.int64)
    with pytest.raises(NotImplementedError):
        getattr(F, name)(tl.tensor(ints))
    with pytest.raises(NotImplementedError):
        getattr(TF, name)(torch.tensor(ints))


def test_half_precision_goes_the_composed_way():
    """float16 rounds each step of the composite (PyTorch computes in float32 inside)."""
    x = np.linspace(-8, 8, 50, dtype=np.float32)
    for name in sorted(CALLS):
        mine = CALLS[name](F, tl.tensor(x).to(tl.float16))
        theirs = CALLS[name](TF, torch.tensor(x).half())
        np.testing.assert_allclose(mine.float().numpy(), theirs.float().numpy(), rtol=1e-2,
                                   atol=2e-3, err_msg=name)


MODULES = [(lambda m: m.ELU(0.5), "EluBackward0"),
           (lambda m: m.CELU(1.5), "CeluBackward0"),
           (lambda m: m.SELU(), "EluBackward0"),
           (lambda m: m.Softplus(2.0, 4.0), "SoftplusBackward0"),
           (lambda m: m.LogSigmoid(), "LogSigmoidBackward0"),
           (lambda m: m.Mish(), "MishBackward0")]


@pytest.mark.parametrize("make,node", MODULES, ids=[n for _, n in MODULES])
def test_modules_record_one_node_as_torch(make, node):
    x = np.linspace(-6, 6, 64)
    y = make(nn)(tl.tensor(x).requires_grad_(True))
    ty = make(torch.nn)(torch.tensor(x).requires_grad_(True))
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__ == node
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), **TOLERANCE[np.float64])


@pytest.mark.parametrize("name", sorted(CALLS))
def test_compiled_equals_eager(name):
    x = tl.tensor(np.random.default_rng(4).standard_normal((4, 1000)).astype(np.float32) * 5)

    def fn(t):
        return CALLS[name](F, t * 2.0) - 1.0
    compiled = tl.compile(fn)
    for _ in range(3):
        np.testing.assert_allclose(compiled(x).numpy(), fn(x).numpy(), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("shape", [(), (0,), (0, 3), (1,)])
def test_zero_dim_and_empty_inputs_as_torch(name, shape):
    x, g = np.full(shape, -0.7), np.full(shape, 1.5)
    y, gx, _ = _run(tl, F, name, x, g, lambda t: t)
    ty, tgx, _ = _run(torch, TF, name, x, g, lambda t: t)
    assert y.shape == ty.shape and gx.shape == tgx.shape
    np.testing.assert_allclose(y, ty, **TOLERANCE[np.float64])
    np.testing.assert_allclose(gx, tgx, **TOLERANCE[np.float64])


@pytest.mark.parametrize("name", sorted(CALLS))
def test_forward_mode_and_vmap_match_torch(name):
    x = np.random.default_rng(5).uniform(-8, 8, (4, 6))
    t = np.random.default_rng(6).standard_normal((4, 6))
    _, ours = tl.func.jvp(lambda v: CALLS[name](F, v), (tl.tensor(x),), (tl.tensor(t),))
    _, theirs = torch.func.jvp(lambda v: CALLS[name](TF, v), (torch.tensor(x),),
                               (torch.tensor(t),))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **TOLERANCE[np.float64])
    ours = tl.func.vmap(tl.func.grad(lambda v: CALLS[name](F, v).sum()))(tl.tensor(x))
    theirs = torch.func.vmap(torch.func.grad(lambda v: CALLS[name](TF, v).sum()))(
        torch.tensor(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **TOLERANCE[np.float64])


NUMBER_ARGUMENTS = [("softplus", {"beta": 2.5, "threshold": 3}), ("elu", {"alpha": 2.0}),
                    ("celu", {"alpha": 0.7}), ("leaky_relu", {"negative_slope": 0.1}),
                    ("hardtanh", {"min_val": -0.5, "max_val": 2}),
                    ("hardshrink", {"lambd": 1.0}), ("softshrink", {"lambd": 0.25})]


def _run_with_tensor_numbers(lib, name, numbers):
    x = lib.tensor(np.linspace(-3.0, 3.0, 13), requires_grad=True)
    y = getattr(lib.nn.functional, name)(x, **{k: lib.tensor(v) for k, v in numbers.items()})
    y.sum().backward()
    try:
        getattr(lib.nn.functional, name)(x, **{next(iter(numbers)): lib.tensor([1.0, 2.0])})
    except (TypeError, RuntimeError) as error:     # hardtanh compares min and max first
        return y.detach().numpy(), x.grad.numpy(), type(error)
    return y.detach().numpy(), x.grad.numpy(), None


@pytest.mark.parametrize("name, numbers", NUMBER_ARGUMENTS)
def test_number_arguments_take_zero_dim_tensors(name, numbers):
    """softplus(x, beta=1 / tau) with tau a 0-dim tensor (BoTorch's log_softplus): the value
    is the number's, forward and backward; a tensor of another shape is refused."""
    ours, our_grad, our_error = _run_with_tensor_numbers(tl, name, numbers)
    theirs, their_grad, their_error = _run_with_tensor_numbers(torch, name, numbers)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-12, atol=1e-14)
    assert our_error is their_error is not None
