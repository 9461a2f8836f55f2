"""F.grid_sample and F.affine_grid against torch: every mode x padding x align_corners in 4-D
and 5-D, values and both gradients (also gradcheck in float64), on every device; torch's
errors and warnings."""
import itertools
import warnings

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

CASES = [(mode, pad, ac) for mode, pad, ac in itertools.product(
    ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"), (False, True))]


def _inputs(nd, seed=0):
    rng = np.random.default_rng(seed)
    shape = (2, 3, 5, 6) if nd == 2 else (2, 2, 3, 4, 5)
    gshape = (2, 4, 3, 2) if nd == 2 else (2, 2, 3, 2, 3)
    return rng.standard_normal(shape), rng.uniform(-1.4, 1.4, gshape)


def _run(lib, fn, x, g, dtype, device=None, **kw):
    kwargs = {} if device is None else {"device": device}
    xi = lib.tensor(x.astype(dtype), requires_grad=True, **kwargs)
    gi = lib.tensor(g.astype(dtype), requires_grad=True, **kwargs)
    out = fn(xi, gi, **kw)
    weight = lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)).astype(dtype),
                        **kwargs)
    (out * weight).sum().backward()
    return [t.detach().cpu().numpy() for t in (out, xi.grad, gi.grad)]


@pytest.mark.parametrize("nd,mode,pad,ac", [(nd,) + case for nd in (2, 3) for case in CASES
                                             if nd == 2 or case[0] != "bicubic"])
def test_grid_sample_values_and_gradients_match_torch(device, nd, mode, pad, ac):
    x, g = _inputs(nd)
    kw = dict(mode=mode, padding_mode=pad, align_corners=ac)
    got = _run(tl, F.grid_sample, x, g, "float32", device, **kw)
    want = _run(torch, TF.grid_sample, x, g, "float32", **kw)
    for a, b, what in zip(got, want, ("output", "input grad", "grid grad")):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4, err_msg=what)


def _border_grid(nd, seed=1):
    """Grid coordinates exactly on the borders, on pixel centres of either align_corners
    convention, just past the borders and far outside: where the clipping and reflection
    derivatives switch."""
    rng = np.random.default_rng(seed)
    gshape = (2, 5, 4, 2) if nd == 2 else (2, 3, 4, 2, 3)
    exact = np.array([-1.0, 1.0, 0.0, -0.5, 0.5, -1.2, 1.2, -1 - 1 / 6, 1 + 1 / 6, 3.0, -3.0,
                      1 - 1 / 6, -1 + 1 / 5, 2.0 / 3])
    return rng.choice(exact, gshape)


@pytest.mark.parametrize("nd,mode,pad,ac", [(nd,) + case for nd in (2, 3) for case in CASES
                                             if nd == 2 or case[0] != "bicubic"])
def test_grid_gradient_on_borders_matches_torch(device, nd, mode, pad, ac):
    x, _ = _inputs(nd)
    g = _border_grid(nd)
    kw = dict(mode=mode, padding_mode=pad, align_corners=ac)
    got = _run(tl, F.grid_sample, x, g, "float64", device, **kw)
    want = _run(torch, TF.grid_sample, x, g, "float64", **kw)
    for a, b, what in zip(got, want, ("output", "input grad", "grid grad")):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9, err_msg=what)


@pytest.mark.parametrize("mode,pad", [("bilinear", "reflection"), ("bicubic", "border"),
                                      ("nearest", "zeros")])
@pytest.mark.parametrize("ac", [False, True])
def test_grid_sample_gradcheck(mode, pad, ac):
    x, g = _inputs(2, seed=1)
    xi = tl.tensor(x[:1, :1, :4, :4], dtype=tl.float64, requires_grad=True)
    gi = tl.tensor(g[:1, :2, :2] * 0.8, dtype=tl.float64, requires_grad=mode != "nearest")
    assert gradcheck(lambda a, b: F.grid_sample(a, b, mode, pad, ac), [xi, gi])


def test_grid_sample_5d_gradcheck():
    x, g = _inputs(3, seed=2)
    xi = tl.tensor(x[:1, :1], dtype=tl.float64, requires_grad=True)
    gi = tl.tensor(g[:1, :1, :2, :2] * 0.8, dtype=tl.float64, requires_grad=True)
    assert gradcheck(lambda a, b: F.grid_sample(a, b, "bilinear", "border", False), [xi, gi])


def test_grid_sample_float64_matches_torch_exactly():
    x, g = _inputs(2, seed=3)
    for mode, pad, ac in CASES:
        kw = dict(mode=mode, padding_mode=pad, align_corners=ac)
        got = F.grid_sample(tl.tensor(x), tl.tensor(g), **kw).numpy()
        want = TF.grid_sample(torch.tensor(x), torch.tensor(g), **kw).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=str(kw))


def test_grid_sample_nearest_rounds_half_to_even_and_empty_shapes():
    x = np.arange(8.0).reshape(1, 1, 1, 8)
    g = np.zeros((1, 1, 4, 2))
    g[0, 0, :, 0] = (np.array([0.5, 1.5, 2.5, 3.5]) * 2 + 1) / 8 - 1   # exact halves
    kw = dict(mode="nearest", align_corners=False)
    np.testing.assert_array_equal(F.grid_sample(tl.tensor(x), tl.tensor(g), **kw).numpy(),
                                  TF.grid_sample(torch.tensor(x), torch.tensor(g), **kw).numpy())
    for xs, gs in (((0, 3, 4, 5), (0, 6, 7, 2)), ((2, 0, 4, 5), (2, 6, 7, 2)),
                   ((2, 3, 4, 5), (2, 0, 7, 2))):
        out = F.grid_sample(tl.zeros(xs), tl.zeros(gs), align_corners=False)
        assert tuple(out.shape) == tuple(TF.grid_sample(torch.zeros(xs), torch.zeros(gs),
                                                        align_corners=False).shape)


def _error(lib, fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(*args, **kw)
        except Exception as e:  # noqa: BLE001 - comparing the class and message with torch's
            return type(e), str(e)
    return None


@pytest.mark.parametrize("xs,gs,kw", [
    ((2, 3, 4, 5), (1, 6, 7, 2), {}),
    ((2, 3, 4, 5), (2, 6, 7, 3), {}),
    ((2, 3, 4, 5, 6), (2, 6, 7, 8, 2), {}),
    ((2, 3, 0, 5), (2, 6, 7, 2), {}),
    ((2, 3, 4, 5, 6), (2, 6, 7, 8, 3), dict(mode="bicubic")),
    ((2, 3, 4, 5), (2, 6, 7, 2), dict(mode="area")),
    ((2, 3, 4, 5), (2, 6, 7, 2), dict(padding_mode="wrap")),
])
def test_grid_sample_errors_as_torch(xs, gs, kw):
    got = _error(tl, F.grid_sample, tl.zeros(xs), tl.zeros(gs), **kw)
    want = _error(torch, TF.grid_sample, torch.zeros(xs), torch.zeros(gs), **kw)
    assert got is not None and got == want
    with pytest.raises(RuntimeError):
        F.grid_sample(tl.zeros((1, 1, 2, 2)), tl.zeros((1, 1, 1, 2), dtype=tl.float64),
                      align_corners=False)


def test_align_corners_none_warns_as_torch():
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(tl.zeros((1, 1, 2, 2)), tl.zeros((1, 1, 1, 2)))
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.affine_grid(tl.zeros((1, 2, 3)), (1, 1, 2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.grid_sample(tl.zeros((1, 1, 2, 2)), tl.zeros((1, 1, 1, 2)), align_corners=True)


@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 3, 1, 5), (2, 1, 3, 4, 5)])
@pytest.mark.parametrize("ac", [False, True])
def test_affine_grid_matches_torch(device, size, ac):
    nd = len(size) - 2
    theta = np.random.default_rng(4).standard_normal((2, nd, nd + 1)).astype(np.float32)
    t = tl.tensor(theta, device=device, requires_grad=True)
    tt = torch.tensor(theta, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, want = F.affine_grid(t, size, ac), TF.affine_grid(tt, size, ac)
    np.testing.assert_allclose(out.detach().cpu().numpy(), want.detach().numpy(), atol=1e-6)
    weight = np.sin(np.arange(want.numel())).reshape(want.shape).astype(np.float32)
    (out * tl.tensor(weight, device=device)).sum().backward()
    (want * torch.tensor(weight)).sum().backward()
    np.testing.assert_allclose(t.grad.cpu().numpy(), tt.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_affine_grid_gradcheck_and_a_round_trip():
    theta = tl.tensor(np.random.default_rng(5).standard_normal((2, 3, 4)), requires_grad=True)
    assert gradcheck(lambda t: F.affine_grid(t, (2, 1, 2, 3, 2), align_corners=False), [theta])
    identity = tl.tensor([[[1.0, 0, 0], [0, 1, 0]]])
    x = tl.randn(1, 2, 5, 7)
    grid = F.affine_grid(identity, (1, 2, 5, 7), align_corners=True)
    back = F.grid_sample(x, grid, align_corners=True)
    np.testing.assert_allclose(back.numpy(), x.numpy(), atol=1e-5)


@pytest.mark.parametrize("theta_shape,size", [((2, 2, 3), (2, 3, 4, 5, 6)),
                                              ((2, 3, 4), (2, 3, 4, 5)),
                                              ((2, 2, 3), (2, 3, 4)),
                                              ((2, 2, 3), (2, 3, 0, 5)),
                                              ((3, 2, 3), (2, 3, 4, 5))])
def test_affine_grid_errors_as_torch(theta_shape, size):
    got = _error(tl, F.affine_grid, tl.zeros(theta_shape), size, align_corners=False)
    want = _error(torch, TF.affine_grid, torch.zeros(theta_shape), size, align_corners=False)
    assert got is not None and got[0] is want[0]
    assert _error(tl, F.affine_grid, tl.zeros((1, 2, 3), dtype=tl.int32), (1, 1, 2, 2),
                  align_corners=False)[0] is ValueError


@pytest.mark.parametrize("xs,gs", [((2, 3, 4, 4), (1, 2, 2, 2)), ((2, 3, 4, 4), (2, 2, 2, 3)),
                                   ((2, 3, 0, 4), (2, 2, 2, 2)), ((2, 3, 4, 4), (2, 1, 2, 2, 2)),
                                   ((2, 3, 4), (2, 2, 2))])
def test_grid_sample_shape_errors_as_torch(xs, gs):
    """The shape checks (their messages now formatted only on failure) raise torch's error
    and message."""
    with pytest.raises(RuntimeError) as want:
        TF.grid_sample(torch.zeros(xs), torch.zeros(gs), align_corners=False)
    with pytest.raises(RuntimeError) as got:
        F.grid_sample(tl.zeros(xs), tl.zeros(gs), align_corners=False)
    assert str(got.value) == str(want.value)
