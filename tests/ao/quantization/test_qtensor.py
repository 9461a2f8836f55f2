"""Quantized tensors against PyTorch: the stored integers (rounding half to even, clamping),
the parameters, dequantize, printing and errors."""
import warnings

import numpy as np
import pytest

import tensorlib as tl


def _same_text(ours, ref):
    """Equal up to line wrapping ("tensorlib." is longer than "torch.", so lines break apart)."""
    return ours.split() == ref.replace("torch.", "tensorlib.").split()


def _torch():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", message=".*deprecated.*")
    return torch


@pytest.mark.parametrize("dtype", ["qint8", "quint8", "qint32"])
@pytest.mark.parametrize("scale,zero_point", [(0.5, 0), (0.1, 3), (0.037, -5)])
def test_quantize_per_tensor_matches_torch(dtype, scale, zero_point):
    torch = _torch()
    if dtype == "quint8":
        zero_point = abs(zero_point)
    # ties (0.25 / 0.5 = 0.5) and values past the range's ends
    x = np.concatenate([np.array([0.25, 0.75, -0.25, 1e4, -1e4], np.float32),
                        np.random.default_rng(0).normal(0, 4, 200).astype(np.float32)])
    ours = tl.quantize_per_tensor(tl.tensor(x), scale, zero_point, getattr(tl, dtype))
    ref = torch.quantize_per_tensor(torch.tensor(x), scale, zero_point, getattr(torch, dtype))
    np.testing.assert_array_equal(ours.int_repr().numpy(), ref.int_repr().numpy())
    np.testing.assert_array_equal(ours.dequantize().numpy(), ref.dequantize().numpy())
    assert (ours.q_scale(), ours.q_zero_point()) == (ref.q_scale(), ref.q_zero_point())
    assert ours.is_quantized and ours.dtype is getattr(tl, dtype)
    short, short_ref = (f(t[:6].copy()) for f, t in (
        (lambda a: tl.quantize_per_tensor(tl.tensor(a), scale, zero_point, getattr(tl, dtype)), x),
        (lambda a: torch.quantize_per_tensor(torch.tensor(a), scale, zero_point,
                                             getattr(torch, dtype)), x)))
    assert _same_text(repr(short), repr(short_ref))


def test_quantize_per_channel_matches_torch():
    torch = _torch()
    w = np.random.default_rng(1).normal(size=(3, 4)).astype(np.float32)
    s, z = np.array([0.1, 0.02, 0.3]), np.array([0, 1, 2])
    for axis, scales, zps in ((0, s, z), (1, np.array([.1, .2, .3, .4]), np.array([0, 1, 2, 3]))):
        ours = tl.quantize_per_channel(tl.tensor(w), tl.tensor(scales), tl.tensor(zps), axis,
                                       tl.quint8)
        ref = torch.quantize_per_channel(torch.tensor(w), torch.tensor(scales),
                                         torch.tensor(zps), axis, torch.quint8)
        np.testing.assert_array_equal(ours.int_repr().numpy(), ref.int_repr().numpy())
        np.testing.assert_allclose(ours.dequantize().numpy(), ref.dequantize().numpy())
        np.testing.assert_array_equal(ours.q_per_channel_scales().numpy(),
                                      ref.q_per_channel_scales().numpy())
        assert ours.q_per_channel_axis() == axis
        assert ours.qscheme() is tl.per_channel_affine
        assert _same_text(repr(ours), repr(ref))


def test_errors_match_torch_types():
    x = tl.tensor([1.0, 2.0])
    q = tl.quantize_per_tensor(x, 0.5, 0, tl.qint8)
    with pytest.raises(RuntimeError, match="Float"):
        tl.quantize_per_tensor(x, 0.5, 0, tl.float32)
    with pytest.raises(RuntimeError, match="Float Tensor"):
        tl.quantize_per_tensor(tl.tensor([1, 2]), 0.5, 0, tl.qint8)
    with pytest.raises(RuntimeError):
        q.q_per_channel_scales()
    with pytest.raises(NotImplementedError):
        x.int_repr()
    with pytest.raises(RuntimeError, match="length of scales"):
        tl.quantize_per_channel(x.reshape(2, 1), tl.tensor([0.1]), tl.tensor([0]), 0, tl.qint8)
    with pytest.raises(RuntimeError, match="axis out of range"):
        tl.quantize_per_channel(x, tl.tensor([0.1, 0.1]), tl.tensor([0, 0]), 1, tl.qint8)


def test_dequantize_of_float_is_identity_and_aliases():
    x = tl.tensor([1.0])
    assert tl.dequantize(x) is x and x.dequantize() is x and not x.is_quantized
    assert tl.quantization.quantize_per_tensor is tl.ao.quantization.quantize_per_tensor


def test_per_channel_rounds_the_sum_of_float32_steps():
    """-1.3 * (1 / 0.2) is -6.5 in float32; plus zero point 1 is the tie -5.5, which rounds
    to -6 (rounding the product first gave -5)."""
    torch = pytest.importorskip("torch")
    x = np.array([[0.35, 0.82, 0.33], [-1.3, 0.91, 0.45]], np.float32)
    ours = tl.quantize_per_channel(tl.tensor(x), tl.tensor([0.1, 0.2], dtype=tl.float64),
                                   tl.tensor([0, 1]), 0, tl.qint8)
    ref = torch.quantize_per_channel(torch.tensor(x), torch.tensor([0.1, 0.2], dtype=torch.float64),
                                     torch.tensor([0, 1]), 0, torch.qint8)
    np.testing.assert_array_equal(ours.int_repr().numpy(), ref.int_repr().numpy())
    assert ours.int_repr()[1, 0].item() == -6


@pytest.mark.parametrize("zero_point, where", [(256, "above upper"), (-1, "below lower")])
def test_zero_point_out_of_range_is_refused(zero_point, where):
    with pytest.raises(RuntimeError, match=f"zero_point {zero_point} is {where} bound"):
        tl.quantize_per_tensor(tl.tensor([1.0]), 0.1, zero_point, tl.quint8)
    with pytest.raises(RuntimeError, match=f"zero_point {zero_point} is {where} bound"):
        tl.quantize_per_channel(tl.tensor([[1.0]]), tl.tensor([0.1]), tl.tensor([zero_point]), 0,
                                tl.quint8)


def test_qint32_saturates_at_its_top():
    """2**31 - 1 is no float32: clamped in float32 it rounded up and wrapped to -2**31."""
    q = tl.quantize_per_tensor(tl.tensor([3.0, -1e6]), 0.001, 2**31 - 1, tl.qint32)
    # the other value rounds in float32 (steps of 128 there), as PyTorch's does
    assert q.int_repr().tolist() == [2**31 - 1, 1147483648]
