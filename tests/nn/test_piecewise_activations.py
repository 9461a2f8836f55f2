"""hardtanh/relu6, leaky_relu, hardsigmoid and hardswish (ops of their own) against PyTorch:
values and gradients on the kinks, NaN and infinities, float32 and float64, small and
multi-threaded sizes, transposed and sliced inputs, a broadcast gradient, in-place variants,
integer inputs, the modules, and compiled code."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn as nn
import tensorlib.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# name -> call on (functional module, x); torch's and ours take the same arguments
CALLS = {
    "hardtanh": lambda f, x: f.hardtanh(x),
    "hardtanh-bounds": lambda f, x: f.hardtanh(x, -0.5, 3.0),
    "relu6": lambda f, x: f.relu6(x),
    "leaky_relu": lambda f, x: f.leaky_relu(x),
    "leaky_relu-slope": lambda f, x: f.leaky_relu(x, 0.2),
    "hardsigmoid": lambda f, x: f.hardsigmoid(x),
    "hardswish": lambda f, x: f.hardswish(x),
}
EDGES = [-np.inf, -6.0, -3.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, 6.0, np.inf]


def _values(n, dtype, seed=0):
    """n values with every kink, its neighbours and the infinities up front; NaN where
    PyTorch's vectorised loop (not its scalar tail) reads it."""
    x = np.random.default_rng(seed).uniform(-7, 7, n)
    edges = np.array(EDGES, dtype)
    x[:len(EDGES)] = edges
    x[len(EDGES):2 * len(EDGES)] = np.nextafter(edges, 0)
    x[2 * len(EDGES)] = np.nan
    return x.astype(dtype)


def _both(name, x, g, transform=lambda t: t):
    """(ours, torch's) forward and gradient of CALLS[name] on transform(x)."""
    results = []
    for lib, f in ((tl, F), (torch, TF)):
        leaf = lib.tensor(x).requires_grad_(True)
        y = CALLS[name](f, transform(leaf))
        y.backward(transform(lib.tensor(g)))
        results.append((y.detach().numpy(), leaf.grad.numpy()))
    return results


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [64, 1 << 17])
def test_matches_torch_bitwise_on_kinks_and_specials(name, dtype, n):
    x = _values(n, dtype)
    g = np.random.default_rng(1).standard_normal(n).astype(dtype)
    (y, gx), (ty, tgx) = _both(name, x, g)
    np.testing.assert_array_equal(y, ty)
    np.testing.assert_array_equal(gx, tgx)


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("layout", ["transposed", "sliced", "broadcast_gradient"])
def test_other_layouts_match_torch(name, layout):
    x = _values(96 * 64, np.float32).reshape(96, 64)
    g = np.random.default_rng(2).standard_normal(x.shape).astype(np.float32)
    if layout == "transposed":
        (y, gx), (ty, tgx) = _both(name, x, g, lambda t: t.t())
    elif layout == "sliced":
        (y, gx), (ty, tgx) = _both(name, x, g, lambda t: t[:, 1::2])
    else:
        out = []
        for lib, f in ((tl, F), (torch, TF)):
            leaf = lib.tensor(x).requires_grad_(True)
            (CALLS[name](f, leaf).sum() * 2.5).backward()
            out.append((None, leaf.grad.numpy()))
        (y, gx), (ty, tgx) = out
    np.testing.assert_array_equal(y, ty)
    np.testing.assert_array_equal(gx, tgx)


INPLACE = [("hardtanh_", lambda f, x: f.hardtanh_(x, -0.5, 3.0)),
           ("hardtanh-inplace", lambda f, x: f.hardtanh(x, inplace=True)),
           ("relu6-inplace", lambda f, x: f.relu6(x, inplace=True)),
           ("leaky_relu_", lambda f, x: f.leaky_relu_(x, 0.3)),
           ("leaky_relu-inplace", lambda f, x: f.leaky_relu(x, 0.3, inplace=True)),
           ("hardsigmoid-inplace", lambda f, x: f.hardsigmoid(x, inplace=True)),
           ("hardswish-inplace", lambda f, x: f.hardswish(x, inplace=True))]


@pytest.mark.parametrize("name,call", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_variants_write_the_input_and_differentiate(name, call):
    x = _values(200, np.float32)
    mine, theirs = tl.tensor(x), torch.tensor(x)
    assert call(F, mine) is mine
    call(TF, theirs)
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    grads = []
    for lib, f in ((tl, F), (torch, TF)):
        leaf = lib.tensor(x).requires_grad_(True)
        mid = leaf * 1.0
        call(f, mid)
        mid.backward(lib.ones(200) * 0.5)
        grads.append(leaf.grad.numpy())
    np.testing.assert_array_equal(*grads)


def test_integer_inputs_as_torch():
    ints = np.array([-9, -3, -1, 0, 1, 3, 9], np.int32)
    for call in (lambda f, x: f.hardtanh(x), lambda f, x: f.relu6(x),
                 lambda f, x: f.hardtanh(x, -2, 5)):
        mine, theirs = call(F, tl.tensor(ints)), call(TF, torch.tensor(ints))
        assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    for name in ("leaky_relu", "hardsigmoid", "hardswish"):
        with pytest.raises(NotImplementedError):
            getattr(F, name)(tl.tensor(ints))
        with pytest.raises(NotImplementedError):
            getattr(TF, name)(torch.tensor(ints))
    with pytest.raises(RuntimeError):
        F.hardtanh(tl.tensor(np.array([1, 2], np.uint8)), -1.0, 1.0)
    with pytest.raises(ValueError):
        F.hardtanh(tl.tensor([1.0]), 2.0, 1.0)


def test_half_precision_goes_the_composed_way():
    x = _values(64, np.float32)
    x[np.isfinite(x) & (np.abs(x) > 1e4)] = 0.25          # past float16's range
    for name in sorted(CALLS):
        mine = CALLS[name](F, tl.tensor(x).to(tl.float16))
        theirs = CALLS[name](TF, torch.tensor(x).half())
        np.testing.assert_allclose(mine.float().numpy(), theirs.float().numpy(), rtol=1e-3,
                                   err_msg=name)


MODULES = [(lambda m: m.Hardtanh(-0.5, 3.0), "HardtanhBackward0"),
           (lambda m: m.ReLU6(), "HardtanhBackward0"),
           (lambda m: m.LeakyReLU(0.2), "LeakyReluBackward0"),
           (lambda m: m.Hardsigmoid(), "HardsigmoidBackward0"),
           (lambda m: m.Hardswish(), "HardswishBackward0")]


@pytest.mark.parametrize("make,node", MODULES, ids=[n for _, n in MODULES])
def test_modules_record_one_node_as_torch(make, node):
    x = _values(64, np.float64)
    y = make(nn)(tl.tensor(x).requires_grad_(True))
    ty = make(torch.nn)(torch.tensor(x).requires_grad_(True))
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__ == node
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())


@pytest.mark.parametrize("name", sorted(CALLS))
def test_compiled_equals_eager(name):
    x = tl.tensor(_values(4096, np.float32)[60:].reshape(4, -1))

    def fn(t):
        return CALLS[name](F, t * 2.0) - 1.0
    compiled = tl.compile(fn)
    for _ in range(3):
        np.testing.assert_array_equal(compiled(x).numpy(), fn(x).numpy())


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("shape", [(), (0,), (0, 3), (1,)])
def test_zero_dim_and_empty_inputs_as_torch(name, shape):
    x, g = np.full(shape, -0.7), np.full(shape, 1.5)
    (y, gx), (ty, tgx) = _both(name, x, g)
    assert y.shape == ty.shape and gx.shape == tgx.shape
    np.testing.assert_array_equal(y, ty)
    np.testing.assert_array_equal(gx, tgx)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_forward_mode_and_vmap_match_torch(name):
    x = np.random.default_rng(5).uniform(-5, 5, (4, 6))
    t = np.random.default_rng(6).standard_normal((4, 6))
    _, ours = tl.func.jvp(lambda v: CALLS[name](F, v), (tl.tensor(x),), (tl.tensor(t),))
    _, theirs = torch.func.jvp(lambda v: CALLS[name](TF, v), (torch.tensor(x),),
                               (torch.tensor(t),))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    ours = tl.func.vmap(tl.func.grad(lambda v: CALLS[name](F, v).sum()))(tl.tensor(x))
    theirs = torch.func.vmap(torch.func.grad(lambda v: CALLS[name](TF, v).sum()))(
        torch.tensor(x))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
