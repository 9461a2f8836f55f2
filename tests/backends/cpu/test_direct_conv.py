"""conv_kernels.conv2d_direct (direct_conv.h: the float32 forward for few input channels,
written straight into NCHW with the bias) against PyTorch: odd widths (masked stores of the
last tile), strided, sliced and channels-last inputs, padding, dilation, height strides,
groups with a partial last block of channels, bias or none; the cases it declines write
nothing; and F.conv2d / nn.Conv2d through it, float64 (im2col) alongside."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib_cpu import conv_kernels
from conv_module_parity import assert_conv_module_matches_torch

torch = pytest.importorskip("torch")

needs_kernel = pytest.mark.skipif(not conv_kernels.DIRECT_CONV_AVAILABLE,
                                  reason="this CPU has no AVX2/FMA")

# (input shape, weight shape, stride, padding, dilation, groups)
CASES = [((32, 3, 32, 32), (32, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1),   # the benchmark's
         ((2, 1, 9, 11), (16, 1, 3, 3), (1, 1), (0, 0), (1, 1), 1),      # one tile, masked
         ((3, 3, 7, 37), (5, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1),       # 5 channels: a part
         ((2, 4, 10, 17), (8, 4, 5, 5), (1, 1), (2, 2), (1, 1), 1),      # block stored
         ((2, 2, 13, 15), (8, 2, 3, 2), (2, 1), (1, 0), (2, 3), 1),      # height stride, dilation
         ((2, 4, 8, 9), (12, 2, 3, 3), (1, 1), (1, 1), (1, 1), 2),       # groups of 6 channels
         ((1, 8, 6, 40), (16, 2, 1, 1), (1, 1), (0, 0), (1, 1), 4),      # 1x1, 4 groups
         ((1, 3, 1, 1), (4, 3, 1, 1), (1, 1), (0, 0), (1, 1), 1),        # 1x1 image
         ((2, 3, 5, 5), (4, 3, 3, 3), (1, 1), (3, 4), (1, 1), 1),        # padding > kernel
         ((2, 3, 4, 50), (8, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1)]       # 512-bit: 32 + 16 + 2


def _inputs(xs, ws, seed, layout):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32)
    if layout == "sliced":      # every other column of a wider input, every other image
        big = rng.standard_normal((2 * xs[0], xs[1], xs[2], 2 * xs[3])).astype(np.float32)
        return tl.tensor(big)[::2, :, :, ::2], w, b
    x = tl.tensor(rng.standard_normal(xs).astype(np.float32))
    if layout == "channels_last":
        x = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    return x, w, b


def _torch_conv(x, w, b, stride, padding, dilation, groups):
    return torch.nn.functional.conv2d(torch.tensor(x.numpy()), torch.tensor(w),
                                      None if b is None else torch.tensor(b), stride, padding,
                                      dilation, groups).numpy()


@needs_kernel
@pytest.mark.parametrize("layout", ["contiguous", "sliced", "channels_last"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("xs,ws,stride,padding,dilation,groups", CASES)
def test_matches_torch(xs, ws, stride, padding, dilation, groups, bias, layout):
    x, w, b = _inputs(xs, ws, sum(xs) + sum(ws), layout)
    b = b if bias else None
    want = _torch_conv(x, w, b, stride, padding, dilation, groups)
    out = tl.full(want.shape, float("nan"))
    assert conv_kernels.conv2d_direct(out, x, tl.tensor(w), None if b is None else tl.tensor(b),
                                      stride, padding, dilation, groups)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)


@needs_kernel
def test_writes_into_a_strided_output():
    """Rows of the output contiguous, the rest any strides (a channel slice of a bigger
    tensor): only its own elements are written."""
    x, w, b = _inputs((2, 3, 6, 21), (4, 3, 3, 3), 7, "contiguous")
    big = tl.zeros(2, 9, 6, 21)
    out = big[:, 2:6]
    assert conv_kernels.conv2d_direct(out, x, tl.tensor(w), tl.tensor(b), (1, 1), (1, 1),
                                      (1, 1), 1)
    np.testing.assert_allclose(out.numpy(), _torch_conv(x, w, b, 1, 1, 1, 1), rtol=1e-5,
                               atol=1e-5)
    rest = np.delete(big.numpy(), np.s_[2:6], axis=1)
    assert not rest.any()


@pytest.mark.parametrize("case", ["width_stride", "float64", "many_channels", "depthwise",
                                  "channels_last_out"])
def test_declines_and_writes_nothing(case):
    xs, ws, stride, groups = (2, 3, 8, 8), (8, 3, 3, 3), (1, 1), 1
    dtype = tl.float32
    if case == "width_stride":
        stride = (1, 2)
    elif case == "float64":
        dtype = tl.float64
    elif case == "many_channels":
        xs, ws = (2, conv_kernels.DIRECT_FWD_MAX_CHANNELS + 1, 8, 8), (
            8, conv_kernels.DIRECT_FWD_MAX_CHANNELS + 1, 3, 3)
    elif case == "depthwise":
        xs, ws, groups = (2, 8, 8, 8), (8, 1, 3, 3), 8
    x, w = tl.randn(*xs, dtype=dtype), tl.randn(*ws, dtype=dtype)
    oh, ow = 6, (6 if stride[1] == 1 else 3)
    out = tl.full((2, ws[0], oh, ow), 7.0, dtype=dtype)
    if case == "channels_last_out":
        out = out.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    assert not conv_kernels.conv2d_direct(out, x, w, None, stride, (0, 0), (1, 1), groups)
    assert (out.numpy() == 7.0).all()


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64])
def test_conv2d_module_forward_and_gradients(dtype):
    """nn.Conv2d(3, 32) as the benchmark runs it (the forward on the direct kernel in
    float32, on im2col in float64), its gradients too, against torch."""
    assert_conv_module_matches_torch(3, 32, (4, 3, 15, 18), dtype, grad_factor=10)


def test_float64_gradcheck_through_the_module_path():
    x = tl.randn(2, 3, 5, 6, dtype=tl.float64, requires_grad=True)
    w = tl.randn(4, 3, 3, 3, dtype=tl.float64, requires_grad=True)
    b = tl.randn(4, dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(lambda *a: tl.nn.functional.conv2d(*a, padding=1), (x, w, b))
