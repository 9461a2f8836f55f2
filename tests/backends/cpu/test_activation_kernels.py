"""activation_kernels (one-pass sigmoid, tanh and erf, forward and backward) against numpy float64
on the layouts they take (contiguous, row-strided narrow views), refusing (False) the others;
the ops and their gradients stay right through the fallback paths too."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib._C.factory import empty
from tensorlib_cpu import activation_kernels as ak

EDGES = [0.0, -0.0, 1e-9, -1e-9, 30.0, -30.0, 800.0, -800.0, np.inf, -np.inf, np.nan]


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


def _input(dtype, rows=13, cols=37):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, cols)) * 6
    x.flat[:len(EDGES)] = EDGES
    return x.astype(dtype)


def _layouts(x):
    """(name, tensor) for a contiguous tensor, a narrow of the last dim (an LSTM gate), a
    3-D view whose leading dims collapse, and a 0-dim tensor."""
    wide = tl.from_numpy(np.concatenate([x, x, x], axis=1))
    cols = x.shape[1]
    return [("contiguous", tl.from_numpy(x.copy())),
            ("narrow", wide.narrow(1, cols, cols)),
            ("3d", tl.from_numpy(np.concatenate([x, x], axis=1)).view(
                x.shape[0], 2, cols).narrow(1, 1, 1)),
            ("0-dim", tl.from_numpy(x.copy())[1, 2])]


@pytest.mark.parametrize("dtype,tol", [(np.float32, 2e-7), (np.float64, 1e-15)])
@pytest.mark.parametrize("name,reference", [("sigmoid", _sigmoid), ("tanh_fast", np.tanh)])
def test_forward_matches_numpy(dtype, tol, name, reference):
    for layout, t in _layouts(_input(dtype)):
        out = empty(t._sizes, t._dtype, t._device)
        assert getattr(ak, name)(out, t), layout
        expected = reference(t.numpy().astype(np.float64))
        np.testing.assert_allclose(out.numpy(), expected, rtol=4 * tol, atol=tol,
                                   err_msg=layout)


@pytest.mark.parametrize("dtype,tol", [(np.float32, 2e-7), (np.float64, 1e-15)])
def test_backward_kernels_match_numpy(dtype, tol):
    rng = np.random.default_rng(1)
    y = rng.random((9, 21)).astype(dtype)
    g = rng.standard_normal((9, 21)).astype(dtype)
    for name, expected in [("sigmoid_backward", g * y * (1 - y)),
                           ("tanh_backward", g * (1 - y * y))]:
        out = tl.empty((9, 21), dtype=tl.from_numpy(y).dtype)
        assert getattr(ak, name)(out, tl.from_numpy(g), tl.from_numpy(y))
        np.testing.assert_allclose(out.numpy(), expected, rtol=4 * tol, atol=tol)


def test_refuses_layouts_and_dtypes_it_does_not_take():
    x = tl.randn(6, 8, dtype=tl.float64)
    for t in (x.t(), x[:, ::2], x.view(2, 3, 8)[:, 1:], x.to(tl.float16), x.to(tl.int64)):
        out = empty(t._sizes, t._dtype, t._device)
        assert ak.sigmoid(out, t) is False
        assert ak.tanh_fast(out, t) is False
    y = tl.rand(6, 8, dtype=tl.float64)
    out = tl.empty((6, 8), dtype=tl.float64)
    assert ak.sigmoid_backward(out, y.float(), y) is False        # mixed dtypes
    assert ak.tanh_backward(out, y.t().contiguous().t(), y) is False


@pytest.mark.parametrize("op", ["sigmoid", "tanh"])
def test_ops_through_every_path_match_torch(op):
    torch = pytest.importorskip("torch")
    x = tl.randn(6, 16, dtype=tl.float64)
    for t in (x, x.narrow(1, 4, 8), x.t(), x[:, ::3], x.to(tl.int64), x.float()):
        got = getattr(tl, op)(t)
        want = getattr(torch, op)(torch.from_numpy(np.ascontiguousarray(t.numpy())))
        assert got.dtype.__repr__().split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("op", ["sigmoid", "tanh"])
def test_gradients_fused_and_composite(op):
    """The fused backward kernel (plain backward) and the composite formula (create_graph,
    so second derivatives) both pass gradcheck, on a narrow view as an LSTM gate is."""
    base = tl.randn(4, 15, dtype=tl.float64, requires_grad=True)

    def f(t):
        return getattr(tl, op)(t.narrow(1, 5, 5)) * 1.5

    assert tl.autograd.gradcheck(f, (base,))
    assert tl.autograd.gradgradcheck(f, (base,))


@pytest.mark.parametrize("dtype,ulps", [(np.float32, 4), (np.float64, 4)])
def test_erf_within_a_few_ulp_of_scipy_on_every_layout(dtype, ulps):
    """The primitive erf (GELU's): libmvec's vector erf in one pass, saturating to +-1 (inf
    included), NaN and -0.0 passed through; layouts it does not take go to scipy's ufunc."""
    special = pytest.importorskip("scipy.special")
    x = np.concatenate([np.linspace(-12, 12, 40002),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 3.9, 6.0, 9.99,
                         10.01, 1e30]]).astype(dtype)
    base = x.reshape(-1, 13)
    # a 1-D tensor is one long row, split into pieces (4096 elements) with a short last one
    for t in (tl.from_numpy(x), tl.from_numpy(base),
              tl.from_numpy(np.concatenate([base, base], 1)).narrow(1, 13, 13),
              tl.from_numpy(base).t()):
        got = tl.erf(t).numpy().astype(np.float64)
        want = special.erf(t.numpy().astype(np.float64))
        finite = np.isfinite(want)
        spacing = np.spacing(np.abs(want[finite]).astype(dtype)).astype(np.float64)
        assert (np.abs(got[finite] - want[finite]) <= ulps * spacing).all()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ends = tl.erf(tl.tensor([np.inf, -np.inf, -0.0], dtype=tl.from_numpy(x).dtype)).tolist()
    assert ends[:2] == [1.0, -1.0] and np.signbit(ends[2])


def test_one_long_row_splits_and_matches_numpy():
    """A 1-D tensor is one row: the kernels split it into pieces (4096 elements, a short last
    one) among the threads."""
    rng = np.random.default_rng(5)
    x, g = rng.standard_normal(3 * 4096 + 7) * 4, rng.standard_normal(3 * 4096 + 7)
    y = rng.random(3 * 4096 + 7)
    for dtype, tol in ((np.float32, 2e-7), (np.float64, 1e-15)):
        t = tl.from_numpy(x.astype(dtype))
        for name, reference in (("tanh_fast", np.tanh), ("sigmoid", _sigmoid)):
            out = empty(t._sizes, t._dtype, t._device)
            assert getattr(ak, name)(out, t)
            np.testing.assert_allclose(out.numpy(), reference(x.astype(dtype).astype(np.float64)),
                                       rtol=4 * tol, atol=tol, err_msg=name)
        gd, yd = g.astype(dtype), y.astype(dtype)
        for name, expected in (("sigmoid_backward", gd * yd * (1 - yd)),
                               ("tanh_backward", gd * (1 - yd * yd))):
            out = empty(t._sizes, t._dtype, t._device)
            assert getattr(ak, name)(out, tl.from_numpy(gd), tl.from_numpy(yd))
            np.testing.assert_allclose(out.numpy(), expected, rtol=4 * tol, atol=tol,
                                       err_msg=name)


def _gelu_reference(x, approximate):
    """GELU and its derivative in float64 (scipy's normal cdf for the exact form)."""
    from scipy.special import ndtr
    x = x.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        if approximate == "tanh":
            k = np.sqrt(2 / np.pi)
            t = np.tanh(k * (x + 0.044715 * x ** 3))
            return 0.5 * x * (1 + t), 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (
                1 + 3 * 0.044715 * x * x)
        return x * ndtr(x), ndtr(x) + x * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype,rtol,atol", [(np.float32, 3e-6, 3e-7), (np.float64, 1e-12, 1e-14)])
def test_gelu_kernels_match_float64_on_every_layout(approximate, dtype, rtol, atol):
    """Forward and backward within float32's reach (NR's erfc in the exact float32 form:
    relative error under 2e-5 in the far lower tail, checked separately) of float64, on the
    layouts the kernels take, including one long row split into pieces; past +-10 the
    values are x or 0 and the slopes 1 or 0."""
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.standard_normal(3 * 4096 + 7) * 3,
                        np.linspace(-12, 12, 2001)]).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    want, slope = _gelu_reference(x, approximate)
    if approximate == "tanh" and dtype == np.float32:
        atol = 5e-6           # 1 - tanh^2 cancels near |t| = 1, times x^3 (as in torch's)
    tail = x > -5                                    # the far lower tail: below
    for name, t in _layouts(x.reshape(2, -1))[:3] + [("1-D", tl.from_numpy(x.copy()))]:
        out = empty(t._sizes, t._dtype, t._device)
        assert ak.gelu(out, t, approximate), name
        got = out.numpy().reshape(-1)
        np.testing.assert_allclose(got[tail], want[tail], rtol=rtol, atol=atol, err_msg=name)
        grad = tl.from_numpy(g.reshape(t.shape).copy())
        assert ak.gelu_backward(out, grad, t, approximate), name
        np.testing.assert_allclose(out.numpy().reshape(-1)[tail], (g * slope)[tail],
                                   rtol=rtol, atol=atol, err_msg=name)
    if approximate == "tanh" and dtype == np.float32:
        return                # 1 + tanh(u) cancels there in float32 (in torch's as well)
    low = (x <= -5) & (x > -10)                      # below -10: 0 (special values)
    out = tl.empty(int(low.sum()), dtype=tl.float32 if dtype == np.float32 else tl.float64)
    assert ak.gelu(out, tl.from_numpy(x[low].copy()), approximate)
    # float64's 1 + tanh(u) is known to an ulp of 1 (it cancels from x ~ -7 on, where the
    # value is under 1e-15): the reference rounds it one way, the CPU's vector tanh maybe
    # another (an Intel Xeon's libmvec gave 0 where numpy gave 4e-16)
    atol = 1e-30 if approximate == "none" else float(np.abs(x[low]).max()) * np.finfo(dtype).eps
    np.testing.assert_allclose(out.numpy(), want[low], rtol=3e-5, atol=atol)


def test_gelu_kernels_special_values_and_refusals():
    x = tl.tensor([np.inf, -np.inf, np.nan, 50.0, -50.0, 0.0], dtype=tl.float32)
    for approximate in ("none", "tanh"):
        out = empty(x._sizes, x._dtype, x._device)
        assert ak.gelu(out, x, approximate)
        np.testing.assert_array_equal(out.numpy(), [np.inf, np.nan, np.nan, 50, 0, 0])
        assert ak.gelu_backward(out, tl.ones(6), x, approximate)
        np.testing.assert_array_equal(out.numpy(), [np.nan, np.nan, np.nan, 1, 0, 0.5])
    with pytest.raises(RuntimeError, match="approximate"):
        ak.gelu(out, x, "fast")
    half = tl.ones(4, 4, dtype=tl.float16)
    assert not ak.gelu(empty(half._sizes, half._dtype, half._device), half, "none")
    square = tl.randn(4, 4)
    assert not ak.gelu(empty((4, 4), tl.float32, square._device), square.t(), "none")


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_op_and_gradients_match_torch_on_any_layout(approximate):
    """nn.functional.gelu through the fused kernels (a transposed input and sum()'s
    expanded gradient are made contiguous for them) and through the composite (create_graph,
    float64 gradcheck) against torch."""
    torch = pytest.importorskip("torch")
    import tensorlib.nn.functional as F
    rng = np.random.default_rng(4)
    base = (rng.standard_normal((64, 48)) * 3).astype(np.float32)
    for x_np in (base, base.T):
        x = tl.from_numpy(x_np).requires_grad_()
        tx = torch.from_numpy(x_np).requires_grad_()
        y, ty = F.gelu(x, approximate=approximate), torch.nn.functional.gelu(
            tx, approximate=approximate)
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
        y.sum().backward()
        ty.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5,
                                   atol=3e-6 if approximate == "tanh" else 1e-6)
    x64 = tl.tensor(rng.standard_normal((3, 5)), dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: F.gelu(t, approximate=approximate), (x64,))
    assert tl.autograd.gradgradcheck(lambda t: F.gelu(t, approximate=approximate), (x64,))


def test_exact_gelu_float32_large_and_tails_match_float64_and_torch():
    """The float32 exact form (ncdf_table.h's pieces in AVX-512 builds) over 2^18 + 5
    elements on the backend's threads: within 3e-7 relative of float64 where GELU is not
    tiny (2e-6 in other builds), 1e-5 relative down to -10 (the lower tail keeps its relative accuracy), exactly
    0.5 as the slope at 0; through F.gelu on a transposed input and its gradient, as torch's
    (NaN and the infinities included)."""
    from scipy.special import ndtr
    rng = np.random.default_rng(11)
    n = 2 ** 18 + 5
    x = np.concatenate([np.linspace(-10, 10, n // 2), rng.standard_normal(n - n // 2) * 2])
    x = x.astype(np.float32)
    x64 = x.astype(np.float64)
    want, slope = x64 * ndtr(x64), ndtr(x64) + x64 * np.exp(-0.5 * x64 * x64) / np.sqrt(2 * np.pi)
    t = tl.from_numpy(x.copy())
    out = empty(t._sizes, t._dtype, t._device)
    assert ak.gelu(out, t, "none")
    got = out.numpy().astype(np.float64)
    main = x > -3
    rtol = 3e-7 if ak.GELU_TABLE else 2e-6         # Numerical Recipes' erfc in other builds
    np.testing.assert_allclose(got[main], want[main], rtol=rtol, atol=1e-9)
    np.testing.assert_allclose(got[~main], want[~main], rtol=1e-5, atol=0)
    assert ak.gelu_backward(out, tl.ones(n), t, "none")
    np.testing.assert_allclose(out.numpy(), slope, rtol=2e-6, atol=2e-7)
    zero = tl.tensor([0.0, -0.0], dtype=tl.float32)
    slope0 = empty((2,), tl.float32, zero._device)
    assert ak.gelu_backward(slope0, tl.ones(2), zero, "none")
    np.testing.assert_array_equal(slope0.numpy(), [0.5, 0.5])
    torch = pytest.importorskip("torch")
    import tensorlib.nn.functional as F
    grid = x[: 512 * 512].reshape(512, 512).copy()
    grid[0, :6] = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-30]
    xt = tl.from_numpy(grid).t().requires_grad_()
    tt = torch.from_numpy(grid).t().requires_grad_()
    y, ty = F.gelu(xt), torch.nn.functional.gelu(tt)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = rng.standard_normal((512, 512)).astype(np.float32)
    y.backward(tl.from_numpy(g))
    ty.backward(torch.from_numpy(g))
    np.testing.assert_allclose(xt.grad.numpy(), tt.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_compiled_gelu_equals_eager():
    import tensorlib.nn.functional as F
    x = tl.randn(256, 64)
    for approximate in ("none", "tanh"):
        def fn(t, approximate=approximate):
            return F.gelu(t * 2.0, approximate=approximate) + 1.0
        compiled = tl.compile(fn)
        for _ in range(3):
            np.testing.assert_allclose(compiled(x).numpy(), fn(x).numpy(), rtol=2e-6,
                                       atol=1e-6)


@pytest.mark.parametrize("dtype,rtol,atol", [(np.float32, 2e-6, 1e-7), (np.float64, 1e-13, 1e-15)])
def test_silu_kernels_match_float64_on_every_layout(dtype, rtol, atol):
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_normal(3 * 4096 + 7) * 5,
                        np.linspace(-60, 60, 2001)]).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    x64 = x.astype(np.float64)
    s = _sigmoid(x64)
    want, slope = x64 * s, s * (1 + x64 * (1 - s))
    for name, t in _layouts(x.reshape(2, -1))[:3] + [("1-D", tl.from_numpy(x.copy()))]:
        out = empty(t._sizes, t._dtype, t._device)
        assert ak.silu(out, t), name
        np.testing.assert_allclose(out.numpy().reshape(-1), want, rtol=rtol, atol=atol,
                                   err_msg=name)
        assert ak.silu_backward(out, tl.from_numpy(g.reshape(t.shape).copy()), t), name
        np.testing.assert_allclose(out.numpy().reshape(-1), g * slope, rtol=rtol,
                                   atol=atol, err_msg=name)
    special = tl.tensor([np.inf, -np.inf, np.nan, 0.0], dtype=tl.from_numpy(x).dtype)
    out = empty(special._sizes, special._dtype, special._device)
    assert ak.silu(out, special)
    np.testing.assert_array_equal(out.numpy(), [np.inf, np.nan, np.nan, 0])     # as torch
    assert ak.silu_backward(out, tl.ones(4, dtype=special.dtype), special)
    np.testing.assert_array_equal(out.numpy(), [np.nan, np.nan, np.nan, 0.5])


def test_silu_op_and_gradients_match_torch_on_any_layout():
    torch = pytest.importorskip("torch")
    import tensorlib.nn.functional as F
    base = (np.random.default_rng(6).standard_normal((64, 48)) * 4).astype(np.float32)
    for x_np in (base, base.T):
        x = tl.from_numpy(x_np).requires_grad_()
        tx = torch.from_numpy(x_np).requires_grad_()
        y, ty = F.silu(x), torch.nn.functional.silu(tx)
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
        y.sum().backward()
        ty.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    inplace = tl.from_numpy(base.copy())
    assert F.silu(inplace, inplace=True) is inplace
    np.testing.assert_allclose(inplace.numpy(), torch.nn.functional.silu(
        torch.from_numpy(base)).numpy(), rtol=1e-5, atol=1e-6)
    compiled = tl.compile(lambda t: F.silu(t * 2.0) - 1.0)
    x = tl.from_numpy(base)
    for _ in range(3):
        np.testing.assert_allclose(compiled(x).numpy(), (F.silu(x * 2.0) - 1.0).numpy(),
                                   rtol=2e-6, atol=1e-6)
