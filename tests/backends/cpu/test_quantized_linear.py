"""The CPU's dynamically quantized Linear kernel: oneDNN's int8 matmul (K padded to the AMX
block where it runs there) against the numpy path, bit for bit, on shapes around the
padding and blocking edges, per tensor and per channel, with and without bias; the weight
packed once per tensor and again after it is written; and the C quantization of the
activation against fbgemm's rule written out in numpy."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib_cpu import onednn, onednn_qlinear, quant_kernels
from tensorlib_cpu.kernels.quantized import quantized_linear_dynamic

SHAPES = [(1, 1, 1), (3, 5, 2), (7, 64, 9), (16, 65, 33), (128, 784, 40), (5, 200, 130)]


def _numpy_qparams(lo, hi, qmax):
    """fbgemm's ChooseQuantizationParams, in float32/float64 numpy as PyTorch computes it."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = float(np.float32((hi - lo) / qmax))
    if scale == 0.0 or np.isinf(np.float32(1.0) / np.float32(scale)):
        scale = float(np.float32(0.1))
    err_min, err_max = abs(lo / scale), qmax + abs(hi / scale)
    initial = -lo / scale if err_min < err_max else qmax - hi / scale
    return scale, int(min(max(np.rint(initial), 0), qmax))


@pytest.mark.parametrize("qmax", [127, 255])
@pytest.mark.parametrize("seed", range(4))
def test_activation_quantization_is_fbgemms(qmax, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((9, 37)) * [0.01, 1, 50, 3][seed] + [0, 2, -1, 0][seed])
    x = x.astype(np.float32)
    if seed == 3:
        x[:] = np.abs(x)                      # all positive: the range widened to 0
    out = np.full((9, 40), 7, np.uint8)         # wider than x: the padding gets the zero point
    scale, zp = quant_kernels.quantize_activation(x, out, qmax, 1)
    assert (scale, zp) == _numpy_qparams(x.min(), x.max(), qmax)
    t = (x.astype(np.float64) * np.float64(np.float32(1) / np.float32(scale)) + zp)
    want = np.clip(np.rint(t.astype(np.float32)), 0, qmax).astype(np.uint8)
    np.testing.assert_array_equal(out[:, :37], want)
    assert (out[:, 37:] == zp).all()


def test_constant_and_empty_activations():
    out = np.empty((2, 3), np.uint8)
    assert quant_kernels.quantize_activation(np.zeros((2, 3), np.float32), out, 127, 1) == (
        np.float32(0.1), 0)
    assert (out == 0).all()
    empty = np.empty((0, 3), np.uint8)
    assert quant_kernels.quantize_activation(np.zeros((0, 3), np.float32), empty, 127,
                                             1) == (1.0, 0)


def _run(m, k, n, per_channel, bias, seed=0):
    rng = np.random.default_rng(seed)
    x = tl.tensor((rng.standard_normal((m, k)) * 2).astype(np.float32))
    w = tl.tensor(rng.integers(-128, 128, (n, k)).astype(np.int8))
    scale = (tl.tensor(rng.uniform(0.001, 0.02, n).astype(np.float32)) if per_channel
             else 0.0123)
    b = tl.tensor(rng.standard_normal(n).astype(np.float32)) if bias else None
    out = tl.empty(m, n)
    quantized_linear_dynamic(out, x, w, scale, b, True)
    return out.numpy()


@pytest.mark.skipif(onednn.find() is None, reason="oneDNN is not installed")
@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_onednn_and_numpy_agree_bit_for_bit(m, k, n, per_channel, bias):
    was = onednn.library() is not None
    try:
        assert onednn.use(True)
        with_dnnl = _run(m, k, n, per_channel, bias)
        onednn.use(False)
        without = _run(m, k, n, per_channel, bias)
    finally:
        onednn.use(was)
    np.testing.assert_array_equal(with_dnnl, without)


def test_numpy_path_matches_the_float_formula():
    """Without oneDNN: scale_x * scale_w * (xq - zp) @ wq.T + bias in float64 stays within
    float32 rounding of the kernel's result."""
    was = onednn.library() is not None
    onednn.use(False)
    try:
        rng = np.random.default_rng(5)
        xa = (rng.standard_normal((6, 50)) * 3).astype(np.float32)
        wa = rng.integers(-128, 128, (4, 50)).astype(np.int8)
        out = tl.empty(6, 4)
        quantized_linear_dynamic(out, tl.tensor(xa), tl.tensor(wa), 0.02, tl.ones(4), True)
    finally:
        onednn.use(was)
    xq = np.empty(xa.shape, np.uint8)
    scale, zp = quant_kernels.quantize_activation(xa, xq, 127, 1)
    want = (xq.astype(np.float64) - zp) @ wa.T.astype(np.float64) * scale * 0.02 + 1
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(onednn.find() is None, reason="oneDNN is not installed")
def test_weight_packed_once_and_again_after_a_write():
    was = onednn.library() is not None
    onednn.use(True)
    try:
        w = tl.tensor(np.random.default_rng(1).integers(-128, 128, (12, 70)).astype(np.int8))
        x = tl.randn(5, 70)
        out = tl.empty(5, 12)
        quantized_linear_dynamic(out, x, w, 0.01, None, True)
        first = out.numpy().copy()
        packs = onednn_qlinear.pack_count()
        quantized_linear_dynamic(out, x, w, 0.01, None, True)
        assert onednn_qlinear.pack_count() == packs           # the packed copy reused
        np.testing.assert_array_equal(out.numpy(), first)
        w.neg_()                                               # written in place
        quantized_linear_dynamic(out, x, w, 0.01, None, True)
        assert onednn_qlinear.pack_count() == packs + 1
        assert not np.array_equal(out.numpy(), first)
    finally:
        onednn.use(was)
