"""interpolate / Upsample (nearest, nearest-exact, linear, bilinear, trilinear, area) and
pixel (un)shuffle: forward against PyTorch, gradcheck in float64, errors and reprs."""
import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(5)


def t64(a, requires_grad=False):
    return tensorlib.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def th(a):
    return torch.tensor(np.asarray(a, dtype=np.float64))


def close(ours, ref, tol=1e-12):
    np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=tol, atol=tol)


SIZES_2D = [dict(scale_factor=2), dict(scale_factor=3), dict(size=(5, 13)),
            dict(scale_factor=1.7), dict(scale_factor=(0.5, 2.5)), dict(size=(4, 3)),
            dict(size=(1, 1)), dict(scale_factor=0.3), dict(size=(9, 8)),
            dict(scale_factor=1.7, recompute_scale_factor=True)]


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear", "bilinear-ac",
                                  "area"])
@pytest.mark.parametrize("how", SIZES_2D)
def test_interpolate_2d_matches_torch(mode, how):
    x = RNG.standard_normal((2, 3, 9, 8))
    kw = dict(how)
    if mode == "bilinear-ac":
        mode, kw["align_corners"] = "bilinear", True
    ref = TF.interpolate(th(x), mode=mode, **kw)
    ours = F.interpolate(t64(x), mode=mode, **kw)
    assert tuple(ours.shape) == tuple(ref.shape)
    close(ours, ref, 1e-10)


@pytest.mark.parametrize("mode,align", [("nearest", None), ("nearest-exact", None),
                                        ("linear", False), ("linear", True), ("area", None)])
@pytest.mark.parametrize("how", [dict(scale_factor=2.3), dict(size=3), dict(size=11),
                                 dict(scale_factor=0.5), dict(size=1)])
def test_interpolate_1d_matches_torch(mode, align, how):
    x = RNG.standard_normal((2, 3, 7))
    close(F.interpolate(t64(x), mode=mode, align_corners=align, **how),
          TF.interpolate(th(x), mode=mode, align_corners=align, **how), 1e-10)


@pytest.mark.parametrize("mode,align", [("nearest", None), ("trilinear", False),
                                        ("trilinear", True)])
def test_interpolate_3d_matches_torch(mode, align):
    x = RNG.standard_normal((1, 2, 3, 4, 5))
    close(F.interpolate(t64(x), scale_factor=(2, 1.5, 0.6), mode=mode, align_corners=align),
          TF.interpolate(th(x), scale_factor=(2, 1.5, 0.6), mode=mode, align_corners=align),
          1e-10)


def test_interpolate_float32():
    x = RNG.standard_normal((2, 3, 5, 6)).astype(np.float32)
    ours = F.interpolate(tensorlib.tensor(x), scale_factor=2, mode="bilinear")
    assert ours.dtype == tensorlib.float32
    np.testing.assert_allclose(ours.numpy(), TF.interpolate(torch.tensor(x), scale_factor=2,
                                                            mode="bilinear").numpy(),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode,align", [("nearest", None), ("bilinear", False),
                                        ("bilinear", True), ("nearest-exact", None),
                                        ("area", None)])
def test_interpolate_gradcheck(mode, align):
    x = t64(RNG.standard_normal((1, 2, 4, 3)), True)
    assert gradcheck(lambda a: F.interpolate(a, size=(7, 5), mode=mode, align_corners=align),
                     (x,))
    assert gradcheck(lambda a: F.interpolate(a, scale_factor=0.6, mode=mode,
                                             align_corners=align), (x,))
    x1 = t64(RNG.standard_normal((1, 2, 5)), True)
    assert gradcheck(lambda a: F.interpolate(a, scale_factor=1.5, mode="linear"), (x1,))


def test_interpolate_errors():
    x = tensorlib.randn(2, 3, 5, 5)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=(3, 3), scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(NotImplementedError, match="bilinear mode needs 4D input"):
        F.interpolate(x[0], scale_factor=2, mode="bilinear")
    with pytest.raises(NotImplementedError):
        F.interpolate(x, scale_factor=2, mode="foo")
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, scale_factor=2, mode="nearest", align_corners=True)
    with pytest.raises(ValueError):
        F.interpolate(x, size=(3, 3, 3))


def test_upsample_modules():
    x = RNG.standard_normal((1, 2, 3, 4))
    for args, kwargs in [((), dict(scale_factor=2)),
                         ((), dict(size=(5, 7), mode="bilinear", align_corners=True)),
                         ((), dict(scale_factor=(2, 3), mode="bilinear")),
                         ((), dict(size=6, mode="nearest-exact"))]:
        ours, ref = nn.Upsample(*args, **kwargs), torch.nn.Upsample(*args, **kwargs)
        assert repr(ours) == repr(ref)
        close(ours(t64(x)), ref(th(x)), 1e-10)
    for cls in ("UpsamplingNearest2d", "UpsamplingBilinear2d"):
        ours, ref = getattr(nn, cls)(scale_factor=2), getattr(torch.nn, cls)(scale_factor=2)
        assert repr(ours) == repr(ref)
        close(ours(t64(x)), ref(th(x)), 1e-10)
        assert list(ours.state_dict()) == []


# ---- pixel shuffle ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape,r", [((2, 8, 3, 4), 2), ((18, 2, 3), 3), ((2, 1, 4, 3, 2), 1),
                                     ((3, 2, 12, 2, 2), 2)])
def test_pixel_shuffle_matches_torch(shape, r):
    x = RNG.standard_normal(shape)
    ours = F.pixel_shuffle(t64(x), r)
    ref = TF.pixel_shuffle(th(x), r)
    close(ours, ref)
    close(nn.PixelShuffle(r)(t64(x)), ref)
    back = F.pixel_unshuffle(ours, r)
    close(back, TF.pixel_unshuffle(ref, r))
    close(back, th(x))
    close(nn.PixelUnshuffle(r)(ours), th(x))
    xg = t64(x, True)
    assert gradcheck(lambda a: F.pixel_shuffle(a, r), (xg,))
    assert gradcheck(lambda a: F.pixel_unshuffle(F.pixel_shuffle(a, r) * 2, r), (xg,))


def test_pixel_shuffle_errors_and_repr():
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor"):
        F.pixel_shuffle(tensorlib.randn(2, 3, 5, 5), 2)
    with pytest.raises(RuntimeError, match="expects height to be divisible"):
        F.pixel_unshuffle(tensorlib.randn(2, 3, 5, 4), 2)
    with pytest.raises(RuntimeError, match="expects width to be divisible"):
        F.pixel_unshuffle(tensorlib.randn(2, 3, 4, 5), 2)
    with pytest.raises(RuntimeError, match="at least 3 dimensions"):
        F.pixel_shuffle(tensorlib.randn(4, 4), 2)
    assert repr(nn.PixelShuffle(2)) == repr(torch.nn.PixelShuffle(2))
    assert repr(nn.PixelUnshuffle(3)) == repr(torch.nn.PixelUnshuffle(3))
