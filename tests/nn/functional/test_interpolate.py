"""F.interpolate against torch: every mode on up- and downsampling, by size, scale_factor
(with and without recompute_scale_factor), align_corners both ways, bicubic and antialias
(values and gradients, also gradcheck), torch's errors; nn.Upsample with the new mode."""
import itertools

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn as nn
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

MODES = [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 1),
         ("nearest-exact", 2), ("linear", 1), ("bilinear", 2), ("trilinear", 3),
         ("bicubic", 2), ("area", 1), ("area", 2)]
SPECS = [dict(size=(13, 4, 11)), dict(size=(3, 5, 2)), dict(scale_factor=1.7),
         dict(scale_factor=0.45), dict(scale_factor=0.45, recompute_scale_factor=True),
         dict(scale_factor=2.3, recompute_scale_factor=True),
         dict(scale_factor=(0.6, 2.5, 1.3))]


def _spec(spec, nd):
    return {k: v[:nd] if isinstance(v, tuple) else v for k, v in spec.items()}


def _outcome(fn, x, kw):
    try:
        return fn(x, **kw).cpu().numpy()
    except Exception as e:  # noqa: BLE001 - the class is compared with torch's
        return type(e)


@pytest.mark.parametrize("mode,nd", MODES)
def test_every_mode_up_and_down_matches_torch(device, mode, nd):
    """float64 where the device has it (to 1e-11), else float32."""
    dtype = np.float64 if device == "cpu" else np.float32
    tol = 1e-11 if dtype == np.float64 else 2e-5
    x = np.random.default_rng(nd).standard_normal((2, 3) + (7, 9, 5)[:nd]).astype(dtype)
    corners = [None] if mode in ("nearest", "nearest-exact", "area") else [False, True]
    antialias = [False, True] if mode in ("bilinear", "bicubic") else [False]
    for ac, spec, aa in itertools.product(corners, SPECS, antialias):
        kw = dict(_spec(spec, nd), mode=mode, align_corners=ac, antialias=aa)
        got = _outcome(F.interpolate, tl.tensor(x, device=device), kw)
        want = _outcome(TF.interpolate, torch.tensor(x), kw)
        if isinstance(want, type):
            assert got is want, kw
        else:
            assert got.shape == want.shape, kw
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=str(kw))


@pytest.mark.parametrize("kw", [dict(size=(11, 5), mode="bicubic"),
                                dict(size=(11, 5), mode="bicubic", align_corners=True),
                                dict(scale_factor=0.3, mode="bilinear", antialias=True),
                                dict(size=(3, 13), mode="bicubic", antialias=True),
                                dict(scale_factor=0.5, mode="bicubic", antialias=True,
                                     align_corners=True),
                                dict(size=(3, 17), mode="lanczos", antialias=True),
                                dict(scale_factor=0.4, mode="lanczos", antialias=True)])
def test_bicubic_and_antialias_values_and_gradients_on_every_device(device, kw):
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 10)).astype(np.float32)
    xi = tl.tensor(x, device=device, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    out, want = F.interpolate(xi, **kw), TF.interpolate(xt, **kw)
    np.testing.assert_allclose(out.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    weight = np.cos(np.arange(want.numel())).reshape(want.shape).astype(np.float32)
    (out * tl.tensor(weight, device=device)).sum().backward()
    (want * torch.tensor(weight)).sum().backward()
    np.testing.assert_allclose(xi.grad.cpu().numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kw", [dict(size=(5, 3), mode="bicubic"),
                                dict(size=(2, 3), mode="bicubic", antialias=True),
                                dict(size=(2, 5), mode="bilinear", antialias=True),
                                dict(size=(3, 9), mode="lanczos", antialias=True)])
def test_gradcheck(kw):
    x = tl.tensor(np.random.default_rng(2).standard_normal((1, 2, 4, 6)), requires_grad=True)
    assert gradcheck(lambda a: F.interpolate(a, **kw), [x])


@pytest.mark.parametrize("shape,kw", [
    ((1, 1, 4), dict(size=3, mode="bicubic")),
    ((1, 1, 4, 4, 4), dict(size=3, mode="bicubic")),
    ((1, 1, 4), dict(size=3, mode="linear", antialias=True)),
    ((1, 1, 4, 4), dict(size=3, mode="nearest", antialias=True)),
    ((1, 1, 4, 4), dict(size=3, scale_factor=2.0, mode="bicubic")),
    ((1, 1, 4, 4), dict(size=3, mode="bicubic", recompute_scale_factor=True)),
    ((1, 1, 4, 4), dict(mode="bicubic")),
    ((1, 1, 4, 4), dict(size=(3, 3, 3), mode="bicubic")),
    ((1, 1, 4, 4), dict(size=3, mode="nearest", align_corners=True)),
    ((1, 1, 4, 4), dict(size=3, mode="cubic")),
    ((1, 1, 4, 4), dict(size=(0, 3), mode="bicubic")),
    ((1, 1, 4, 4), dict(size=3, mode="lanczos")),
    ((1, 1, 4, 4), dict(size=3, mode="lanczos", antialias=True, align_corners=True)),
    ((1, 1, 4), dict(size=3, mode="lanczos", antialias=True)),
])
def test_errors_as_torch(shape, kw):
    got = _outcome(F.interpolate, tl.zeros(shape), kw)
    want = _outcome(TF.interpolate, torch.zeros(shape), kw)
    assert isinstance(want, type) and got is want


def test_upsample_module_takes_bicubic():
    x = np.random.default_rng(3).standard_normal((1, 2, 3, 4)).astype(np.float32)
    got = nn.Upsample(scale_factor=2, mode="bicubic", align_corners=True)(tl.tensor(x))
    want = torch.nn.Upsample(scale_factor=2, mode="bicubic", align_corners=True)(
        torch.tensor(x))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    got = nn.UpsamplingBilinear2d(size=(5, 7))(tl.tensor(x))
    want = torch.nn.UpsamplingBilinear2d(size=(5, 7))(torch.tensor(x))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
