"""Linear, Bilinear, Flatten/Unflatten and every activation: forward against numpy/PyTorch
in float64, gradients by gradcheck (float64), in-place variants, numerical stability."""
import math

import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1234)


def t64(array, requires_grad=False):
    return tensorlib.tensor(np.asarray(array, dtype=np.float64), requires_grad=requires_grad)


def away_from_kinks(shape, kinks=(0.0,), gap=0.05, scale=3.0):
    """Random float64 values at least `gap` from every kink, so finite differences are
    valid for piecewise functions."""
    x = RNG.uniform(-scale, scale, size=shape)
    for k in kinks:
        near = np.abs(x - k) < gap
        x[near] = k + np.sign(x[near] - k + 1e-12) * gap * 2
    return x


# ---- Linear / Bilinear ---------------------------------------------------------------------
def test_linear_forward_matches_numpy():
    m = nn.Linear(4, 3).double()
    x = RNG.standard_normal((5, 2, 4))
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    np.testing.assert_allclose(m(t64(x)).detach().numpy(), x @ w.T + b, rtol=1e-12)
    m0 = nn.Linear(4, 3, bias=False).double()
    np.testing.assert_allclose(m0(t64(x[0, 0])).detach().numpy(),
                               x[0, 0] @ m0.weight.detach().numpy().T, rtol=1e-12)
    assert m.weight.shape == (3, 4) and m.bias.shape == (3,)
    assert m0.bias is None and list(m0.state_dict()) == ["weight"]


def test_linear_default_init_bounds():
    m = nn.Linear(50, 40)
    bound = 1 / math.sqrt(50)
    w = m.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.abs(m.bias.detach().numpy()).max() <= bound


def test_linear_dtype_device_kwargs():
    m = nn.Linear(2, 2, dtype=tensorlib.float64, device="cpu")
    assert m.weight.dtype == tensorlib.float64 and m.bias.dtype == tensorlib.float64


def test_linear_gradcheck():
    x = t64(RNG.standard_normal((3, 4)), requires_grad=True)
    w = t64(RNG.standard_normal((2, 4)), requires_grad=True)
    b = t64(RNG.standard_normal(2), requires_grad=True)
    assert gradcheck(F.linear, (x, w, b))
    assert gradcheck(lambda x, w: F.linear(x, w), (x, w))


@pytest.mark.parametrize("shape,layout", [((2, 3, 4), "contiguous"), ((2, 2, 3, 4), "contiguous"),
                                          ((3, 2, 4), "transposed"), ((0, 3, 4), "contiguous")])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_on_nd_input_matches_torch(shape, layout, bias):
    """A contiguous N-D input runs as one 2-D product (rows), a strided one as a batched
    matmul: the same values and gradients as torch's either way, an empty batch included."""
    x = RNG.standard_normal(shape)
    w = RNG.standard_normal((5, shape[-1]))
    b = RNG.standard_normal(5) if bias else None
    g = RNG.standard_normal(shape[:-1] + (5,))

    def run(lib):
        xs = lib.tensor(x)
        if layout == "transposed":
            xs = lib.tensor(x.swapaxes(0, 1).copy()).transpose(0, 1)
        xs.requires_grad_(True)
        ws = lib.tensor(w, requires_grad=True)
        bs = lib.tensor(b, requires_grad=True) if bias else None
        out = lib.nn.functional.linear(xs, ws, bs)
        out.backward(lib.tensor(g))
        return [out.detach(), xs.grad, ws.grad] + ([bs.grad] if bias else [])
    for got, want in zip(run(tensorlib), run(torch)):
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


def test_linear_nd_shape_error_names_the_rows():
    with pytest.raises(RuntimeError, match="6x4 and 3x5"):
        F.linear(tensorlib.randn(2, 3, 4), tensorlib.randn(5, 3))


def test_bilinear_forward_matches_numpy_and_torch():
    m = nn.Bilinear(3, 4, 2).double()
    x1, x2 = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 4))
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    expected = np.einsum("ni,oij,nj->no", x1, w, x2) + b
    np.testing.assert_allclose(m(t64(x1), t64(x2)).detach().numpy(), expected, rtol=1e-12)
    tm = torch.nn.functional.bilinear(torch.tensor(x1), torch.tensor(x2), torch.tensor(w),
                                      torch.tensor(b))
    np.testing.assert_allclose(m(t64(x1), t64(x2)).detach().numpy(), tm.numpy(), rtol=1e-12)
    # extra batch dims
    y = m(t64(RNG.standard_normal((2, 5, 3))), t64(RNG.standard_normal((2, 5, 4))))
    assert y.shape == (2, 5, 2)
    with pytest.raises(RuntimeError, match="input batch dimensions do not match"):
        m(t64(x1), t64(x2[:4]))


def test_bilinear_gradcheck():
    x1 = t64(RNG.standard_normal((2, 3)), requires_grad=True)
    x2 = t64(RNG.standard_normal((2, 2)), requires_grad=True)
    w = t64(RNG.standard_normal((2, 3, 2)), requires_grad=True)
    b = t64(RNG.standard_normal(2), requires_grad=True)
    assert gradcheck(F.bilinear, (x1, x2, w, b))


def test_identity_flatten_unflatten():
    x = t64(RNG.standard_normal((2, 3, 4, 5)))
    assert nn.Identity(1, k=2)(x) is x
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 2)(x).shape == (24, 5)
    assert nn.Unflatten(1, (3, 1))(x).shape == (2, 3, 1, 4, 5)
    assert nn.Unflatten(-1, (-1, 1))(x).shape == (2, 3, 4, 5, 1)
    with pytest.raises(RuntimeError, match="don't multiply up"):
        nn.Unflatten(1, (2, 2))(x)
    with pytest.raises(TypeError):
        nn.Unflatten(1, 3)
    assert repr(nn.Flatten()) == repr(torch.nn.Flatten())


# ---- activations ---------------------------------------------------------------------------
# (tensorlib module, torch module, kinks to stay away from for finite differences)
ACTIVATIONS = [
    ("ReLU", {}, (0.0,)),
    ("ReLU6", {}, (0.0, 6.0)),
    ("LeakyReLU", {"negative_slope": 0.2}, (0.0,)),
    ("ELU", {"alpha": 0.7}, (0.0,)),
    ("CELU", {"alpha": 1.3}, (0.0,)),
    ("SELU", {}, (0.0,)),
    ("GELU", {}, ()),
    ("GELU", {"approximate": "tanh"}, ()),
    ("SiLU", {}, ()),
    ("Mish", {}, ()),
    ("Sigmoid", {}, ()),
    ("Tanh", {}, ()),
    ("Softplus", {}, ()),
    ("Softplus", {"beta": 2.0, "threshold": 3.0}, (1.5,)),
    ("Softsign", {}, ()),
    ("Hardtanh", {}, (-1.0, 1.0)),
    ("Hardtanh", {"min_val": -2.0, "max_val": 0.5}, (-2.0, 0.5)),
    ("Hardswish", {}, (-3.0, 3.0)),
    ("Hardsigmoid", {}, (-3.0, 3.0)),
    ("Threshold", {"threshold": 0.5, "value": -1.0}, (0.5,)),
    ("LogSigmoid", {}, ()),
    ("Tanhshrink", {}, ()),
    ("Hardshrink", {}, (-0.5, 0.5)),
    ("Softshrink", {"lambd": 0.3}, (-0.3, 0.3)),
    ("Softmax", {"dim": 1}, ()),
    ("Softmax", {"dim": 0}, ()),
    ("Softmin", {"dim": -1}, ()),
    ("LogSoftmax", {"dim": 1}, ()),
    ("LogSoftmax", {"dim": -1}, ()),
    ("GLU", {"dim": -1}, ()),
]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for n, kw, _ in ACTIVATIONS]


@pytest.mark.parametrize("name,kwargs,kinks", ACTIVATIONS, ids=IDS)
def test_activation_forward_matches_torch(name, kwargs, kinks):
    x = away_from_kinks((4, 6), kinks, scale=6.0)
    ours = getattr(nn, name)(**kwargs)(t64(x)).numpy()
    theirs = getattr(torch.nn, name)(**kwargs)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,kwargs,kinks", ACTIVATIONS, ids=IDS)
def test_activation_gradcheck(name, kwargs, kinks):
    x = t64(away_from_kinks((3, 4), kinks), requires_grad=True)
    m = getattr(nn, name)(**kwargs)
    assert gradcheck(m, (x,))


@pytest.mark.parametrize("name,kwargs,kinks", ACTIVATIONS, ids=IDS)
def test_activation_float32_keeps_dtype(name, kwargs, kinks):
    x = tensorlib.tensor(away_from_kinks((2, 4), kinks).astype(np.float32))
    assert getattr(nn, name)(**kwargs)(x).dtype == tensorlib.float32


@pytest.mark.parametrize("name,kwargs,kinks", ACTIVATIONS[:12], ids=IDS[:12])
def test_activation_gradgradcheck(name, kwargs, kinks):
    if name in ("ReLU", "ReLU6", "LeakyReLU"):
        pytest.skip("piecewise linear: second derivative is zero everywhere it exists")
    x = t64(away_from_kinks((2, 3), kinks), requires_grad=True)
    assert gradgradcheck(getattr(nn, name)(**kwargs), (x,))


def test_gradient_at_kinks_matches_torch():
    x = np.array([-3.0, -1.0, 0.0, 1.0, 3.0, 6.0])
    for name, kwargs in [("ReLU", {}), ("ReLU6", {}), ("LeakyReLU", {}), ("ELU", {}),
                         ("Hardtanh", {}), ("Hardswish", {}), ("Hardsigmoid", {}),
                         ("Sigmoid", {}), ("SiLU", {}), ("Softsign", {})]:
        a = t64(x, requires_grad=True)
        getattr(nn, name)(**kwargs)(a).sum().backward()
        b = torch.tensor(x, requires_grad=True)
        getattr(torch.nn, name)(**kwargs)(b).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-7, err_msg=name)


def test_prelu():
    m = nn.PReLU(3, init=0.1).double()
    x = away_from_kinks((2, 3, 4))
    expected = np.where(x > 0, x, 0.1 * x)
    np.testing.assert_allclose(m(t64(x)).detach().numpy(), expected)
    assert list(m.state_dict()) == ["weight"]
    w = t64([0.1, -0.2, 0.3], requires_grad=True)
    xt = t64(x, requires_grad=True)
    assert gradcheck(F.prelu, (xt, w))
    single = nn.PReLU().double()
    np.testing.assert_allclose(single(t64(x)).detach().numpy(), np.where(x > 0, x, 0.25 * x))
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers"):
        m(t64(RNG.standard_normal((2, 4))))


def test_sigmoid_softplus_stable_at_extremes():
    x = t64([-1000.0, -50.0, 0.0, 50.0, 1000.0], requires_grad=True)
    for fn in (F.sigmoid, F.softplus, F.silu, F.mish, F.logsigmoid, F.elu, F.selu):
        y = fn(x)
        y.sum().backward()
        assert np.isfinite(y.detach().numpy()).all(), fn.__name__
        assert np.isfinite(x.grad.numpy()).all(), fn.__name__
        theirs = getattr(torch.nn.functional, fn.__name__)(torch.tensor(x.detach().numpy()))
        np.testing.assert_allclose(y.detach().numpy(), theirs.numpy(), rtol=1e-12, atol=1e-300)
        x.grad = None


def test_softmax_stable_and_dtype():
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1000.0, -999.0]])
    ours = F.softmax(t64(x), dim=1).numpy()
    np.testing.assert_allclose(ours, torch.softmax(torch.tensor(x), 1).numpy(), rtol=1e-12)
    ls = F.log_softmax(t64(x), dim=1).numpy()
    np.testing.assert_allclose(ls, torch.log_softmax(torch.tensor(x), 1).numpy(), rtol=1e-12)
    y = F.softmax(tensorlib.tensor(x.astype(np.float32)), dim=1, dtype=tensorlib.float64)
    assert y.dtype == tensorlib.float64
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = F.softmax(t64(x))
    np.testing.assert_allclose(out.numpy(), torch.softmax(torch.tensor(x), 1).numpy())


INPLACE = [("relu", {}), ("relu6", {}), ("leaky_relu", {"negative_slope": 0.1}),
           ("elu", {}), ("selu", {}), ("celu", {}), ("silu", {}), ("mish", {}),
           ("hardtanh", {}), ("hardswish", {}), ("hardsigmoid", {})]


@pytest.mark.parametrize("name,kwargs", INPLACE)
def test_inplace_activations(name, kwargs):
    x = away_from_kinks((3, 4), (0.0, -1.0, 1.0, -3.0, 3.0))
    a = t64(x)
    out = getattr(F, name)(a, inplace=True, **kwargs)
    assert out is a
    expected = getattr(torch.nn.functional, name)(torch.tensor(x), **kwargs).numpy()
    np.testing.assert_allclose(a.numpy(), expected, rtol=1e-12)
    # on a non-leaf inside a graph: the gradient is that of the out-of-place function
    leaf = t64(x, requires_grad=True)
    mid = leaf * 1.0
    getattr(F, name)(mid, inplace=True, **kwargs).sum().backward()
    tleaf = torch.tensor(x, requires_grad=True)
    getattr(torch.nn.functional, name)(tleaf * 1.0, inplace=True, **kwargs).sum().backward()
    # (PyTorch's hardsigmoid backward rounds 1/6 to float32 even for float64)
    np.testing.assert_allclose(leaf.grad.numpy(), tleaf.grad.numpy(), rtol=1e-7)


def test_inplace_module_flag_and_repr():
    m = nn.ReLU(inplace=True)
    x = t64([-1.0, 2.0])
    assert m(x) is x
    np.testing.assert_array_equal(x.numpy(), [0.0, 2.0])


def test_gelu_bad_approximate():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(t64([1.0]), approximate="fast")


def test_activations_in_a_trained_model():
    """A small model trains: gradients flow through activations and Linear layers."""
    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1)).double()
    x = t64(RNG.standard_normal((32, 2)))
    y = t64((RNG.standard_normal((32, 1)) > 0).astype(np.float64))
    losses = []
    for _ in range(60):
        loss = ((model(x) - y) ** 2).mean()
        model.zero_grad()
        loss.backward()
        with tensorlib.no_grad():
            for p in model.parameters():
                p -= p.grad * 0.1
        losses.append(loss.item())
    assert losses[-1] < losses[0] * 0.9


@pytest.mark.parametrize("op", ["sigmoid", "relu"])
def test_composed_fallbacks_when_native_op_missing(monkeypatch, op):
    """F.sigmoid/F.relu compose from where/exp when tensorlib lacks the op."""
    if hasattr(tensorlib, op):
        monkeypatch.delattr(tensorlib, op)
    x = np.array([-800.0, -2.0, -0.5, 0.0, 0.5, 2.0, 800.0])
    a = t64(x, requires_grad=True)
    y = getattr(F, op)(a)
    y.sum().backward()
    b = torch.tensor(x, requires_grad=True)
    expected = getattr(torch, op)(b)
    expected.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)
    assert gradcheck(getattr(F, op), (t64(away_from_kinks((2, 3)), requires_grad=True),))
