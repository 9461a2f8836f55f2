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
