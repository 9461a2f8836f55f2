"""The CPU convolution kernels against a float64 numpy oracle: the im2col + GEMM path and the
direct weight gradient for thin convolutions (few input rows), with padding and dilation."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib_cpu import conv_kernels


def _reference(x, w, padding, dilation):
    """conv2d (stride 1) in float64 with numpy's sliding windows."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    kh, kw = w.shape[2:]
    span = ((kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1)
    win = np.lib.stride_tricks.sliding_window_view(x, span, axis=(2, 3))
    win = win[..., ::dilation[0], ::dilation[1]]                  # (N, C, oh, ow, kh, kw)
    return np.einsum("ncyxij,ocij->noyx", win, w.astype(np.float64))


@pytest.mark.parametrize("direct", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("c,k,padding,dilation", [(1, 3, (0, 0), (1, 1)), (1, 3, (1, 2), (1, 1)),
                                                  (2, 3, (2, 1), (2, 1)), (3, (2, 3), (0, 1), (1, 2)),
                                                  (1, 5, (2, 2), (1, 1))])
def test_forward_and_weight_grad(monkeypatch, direct, dtype, c, k, padding, dilation):
    if not direct:
        monkeypatch.setattr(conv_kernels, "DIRECT_MAX_ROWS", 0)
    rng = np.random.default_rng(c)
    k = (k, k) if isinstance(k, int) else k
    x = rng.standard_normal((3, c, 9, 11)).astype(dtype)
    w = rng.standard_normal((4, c) + k).astype(dtype)
    ref = _reference(x, w, padding, dilation)
    out = tl.nn.functional.conv2d(tl.tensor(x), tl.tensor(w), padding=padding,
                                  dilation=dilation)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(out.numpy(), ref, rtol=tol, atol=tol)
    g = rng.standard_normal(ref.shape).astype(dtype)
    gw = tl.empty(w.shape, dtype=out.dtype)
    conv_kernels.conv2d_weight_grad(gw, tl.tensor(x), tl.tensor(g), (1, 1), padding, dilation, 1)
    # d<g, conv(x, w)>/dw by the oracle: each weight's one-hot conv
    expected = np.empty(w.shape)
    for idx in np.ndindex(*w.shape):
        e = np.zeros(w.shape)
        e[idx] = 1
        expected[idx] = (g.astype(np.float64) * _reference(x, e, padding, dilation)).sum()
    np.testing.assert_allclose(gw.numpy(), expected, rtol=tol * 10, atol=tol * 10)
