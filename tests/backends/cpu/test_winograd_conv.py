"""conv_kernels.conv2d_winograd / conv_transpose2d_winograd (winograd.h: F(2x2, 3x3) for
float32 3x3 stride-1 convolutions with many channels) against PyTorch and a float64 numpy
oracle: odd sizes (partial tiles at the bottom and right edges), padding 0/1/2 and
asymmetric, batch 1, bias or none, sliced / channels-last / broadcast inputs, a strided
output; the input gradient through the module path; the cases it declines write nothing;
float64 declines to the old path and gradchecks there."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib_cpu import blas_choice, conv_kernels, onednn, onednn_conv
from conv_module_parity import assert_conv_module_matches_torch

torch = pytest.importorskip("torch")

needs_kernel = pytest.mark.skipif(not conv_kernels.WINOGRAD_AVAILABLE,
                                  reason="built without AVX2/FMA, or TENSORLIB_WINOGRAD=0")
MIN = conv_kernels.WINOGRAD_MIN_CHANNELS


@pytest.fixture(autouse=True)
def before_onednn(monkeypatch):
    """The module path tries Winograd first for forwards and input gradients, as on CPUs
    without full-width AVX-512 (see test_the_cpu_rule)."""
    for name in ("WINOGRAD_FORWARD_BEFORE_ONEDNN", "WINOGRAD_GRAD_BEFORE_ONEDNN"):
        monkeypatch.setattr(conv_kernels, name, conv_kernels.WINOGRAD_AVAILABLE)


@pytest.fixture
def any_size(monkeypatch):
    """The kernel on every size: small images, which it declines by default (their tile rows
    waste vector lanes: WINOGRAD_MIN_GAIN), test its edges."""
    monkeypatch.setattr(conv_kernels, "WINOGRAD_MIN_GAIN", 0.0)

# (input shape, output channels, padding)
CASES = [((2, 32, 16, 16), 64, (1, 1)),       # the benchmark's shape (fewer images)
         ((1, 16, 13, 13), 32, (1, 1)),       # the CNN's: odd, a partial last tile
         ((3, 17, 7, 9), 21, (0, 0)),         # odd channel counts, a part register tile
         ((2, 16, 5, 6), 16, (2, 2)),         # padding 2
         ((1, 20, 11, 150), 16, (1, 0)),      # asymmetric padding, two column chunks
         ((1, 16, 3, 3), 16, (0, 0))]         # one output element


def _oracle(x, w, b, padding):
    """conv2d in float64 by numpy: the sum over the 9 kernel taps of shifted products."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    ph, pw = padding
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh, ow = xp.shape[2] - 2, xp.shape[3] - 2
    out = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return out if b is None else out + np.asarray(b, np.float64)[None, :, None, None]


def _input(shape, layout, rng):
    if layout == "sliced":       # every other column of a wider input, every other image
        big = rng.standard_normal((2 * shape[0], shape[1], shape[2], 2 * shape[3]))
        return tl.tensor(big.astype(np.float32))[::2, :, :, ::2]
    x = tl.tensor(rng.standard_normal(shape).astype(np.float32))
    if layout == "channels_last":
        x = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    return x


def _close(got, want):
    """Relative to the output's scale: the level of the conv tests' 1e-4 tolerances."""
    scale = np.abs(want).max()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * scale)


@needs_kernel
@pytest.mark.parametrize("layout", ["contiguous", "sliced", "channels_last"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("xs,o,padding", CASES)
def test_forward_matches_the_oracle_and_torch(xs, o, padding, bias, layout, any_size):
    rng = np.random.default_rng(sum(xs) + o)
    x = _input(xs, layout, rng)
    w = rng.standard_normal((o, xs[1], 3, 3)).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32) if bias else None
    want = _oracle(x.numpy(), w, b, padding)
    out = tl.full(want.shape, float("nan"))
    assert conv_kernels.conv2d_winograd(out, x, tl.tensor(w), None if b is None else
                                        tl.tensor(b), (1, 1), padding, (1, 1), 1)
    _close(out.numpy(), want)
    ref = torch.nn.functional.conv2d(torch.tensor(x.numpy()), torch.tensor(w),
                                     None if b is None else torch.tensor(b), 1, padding)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-4, atol=1e-4)


@needs_kernel
@pytest.mark.parametrize("g_kind", ["dense", "broadcast", "sliced"])
@pytest.mark.parametrize("xs,o,padding", CASES)
def test_input_gradient_matches_the_oracle(xs, o, padding, g_kind, any_size):
    """The input gradient: conv2d of g with the weights turned 180 degrees and the channels
    swapped, padding 2 - p (the oracle computes it as that adjoint's definition: torch's
    convolution_backward)."""
    rng = np.random.default_rng(sum(xs) + 2 * o)
    w = rng.standard_normal((o, xs[1], 3, 3)).astype(np.float32)
    gshape = (xs[0], o, xs[2] + 2 * padding[0] - 2, xs[3] + 2 * padding[1] - 2)
    if g_kind == "broadcast":     # what y.sum() sends back: stride 0 everywhere
        g = tl.tensor(np.float32(0.3)).expand(*gshape)
    else:
        g = _input(gshape, "sliced" if g_kind == "sliced" else "contiguous", rng)
    gx = tl.full(xs, float("nan"))
    assert conv_kernels.conv_transpose2d_winograd(gx, g, tl.tensor(w), (1, 1), padding,
                                                  (1, 1), 1)
    turned = np.ascontiguousarray(w.transpose(1, 0, 2, 3)[:, :, ::-1, ::-1])
    _close(gx.numpy(), _oracle(g.numpy(), turned, None, (2 - padding[0], 2 - padding[1])))
    ref = torch.ops.aten.convolution_backward(
        torch.tensor(np.ascontiguousarray(g.numpy())), torch.zeros(xs), torch.tensor(w), None,
        [1, 1], list(padding), [1, 1], False, [0, 0], 1, [True, False, False])[0]
    np.testing.assert_allclose(gx.numpy(), ref.numpy(), rtol=1e-4, atol=1e-4)


@needs_kernel
def test_writes_into_a_strided_output(any_size):
    """Rows of the output contiguous, the rest any strides (a channel slice of a bigger
    tensor): only its own elements are written, the partial tiles' lanes included."""
    rng = np.random.default_rng(3)
    x = tl.tensor(rng.standard_normal((2, 16, 7, 9)).astype(np.float32))
    w = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
    big = tl.zeros(2, 20, 7, 12)
    out = big[:, 2:18, :, 1:10]
    assert conv_kernels.conv2d_winograd(out, x, tl.tensor(w), None, (1, 1), (1, 1), (1, 1), 1)
    _close(out.numpy(), _oracle(x.numpy(), w, None, (1, 1)))
    rest = big.numpy().copy()
    rest[:, 2:18, :, 1:10] = 0
    assert not rest.any()


@pytest.mark.parametrize("case", ["float64", "few_channels", "stride", "dilation", "groups",
                                  "kernel_5x5", "channels_last_out", "padding_3_input_grad",
                                  "small_image"])
def test_declines_and_writes_nothing(case, monkeypatch):
    """Each case that stays on oneDNN / im2col; the size rule aside (small_image: 4x4 outputs,
    a third of each tile row's lanes used), which the others switch off."""
    if case != "small_image":
        monkeypatch.setattr(conv_kernels, "WINOGRAD_MIN_GAIN", 0.0)
    n, c, o, hw = 2, MIN, MIN, 6
    dtype, stride, dilation, groups, k, padding = tl.float32, (1, 1), (1, 1), 1, 3, (0, 0)
    if case == "float64":
        dtype = tl.float64
    elif case == "few_channels":
        c = MIN - 1
    elif case == "stride":
        stride = (2, 1)
    elif case == "dilation":
        dilation = (1, 2)
    elif case == "groups":
        c, o, groups = 2 * MIN, 2 * MIN, 2
    elif case == "kernel_5x5":
        k = 5
    x = tl.randn(n, c, hw, hw, dtype=dtype)
    w = tl.randn(o, c // groups, k, k, dtype=dtype)
    if case == "padding_3_input_grad":
        g = tl.randn(n, o, hw + 4, hw + 4)      # padding 3: 2 - p < 0
        gx = tl.full((n, c, hw, hw), 7.0)
        assert not conv_kernels.conv_transpose2d_winograd(gx, g, w, (1, 1), (3, 3), (1, 1), 1)
        assert (gx.numpy() == 7.0).all()
        return
    out, gx = tl.full((n, o, 4, 4), 7.0, dtype=dtype), tl.full(x.shape, 7.0, dtype=dtype)
    if case == "channels_last_out":
        out, gx = (t.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2) for t in (out, gx))
    assert not conv_kernels.conv2d_winograd(out, x, w, None, stride, padding, dilation, groups)
    assert not conv_kernels.conv_transpose2d_winograd(gx, tl.randn(*out.shape, dtype=dtype), w,
                                                      stride, padding, dilation, groups)
    assert (out.numpy() == 7.0).all() and (gx.numpy() == 7.0).all()


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64])
def test_conv2d_module_forward_and_gradients(dtype, any_size):
    """nn.Conv2d(32, 64) as the benchmark runs it (float32: the forward and the input
    gradient on Winograd, the weight gradient on oneDNN or im2col; float64: im2col), all
    gradients against torch."""
    assert_conv_module_matches_torch(32, 64, (3, 32, 9, 10), dtype, grad_factor=20)


def test_float64_declines_and_gradchecks_on_the_old_path(any_size):
    x = tl.randn(1, MIN, 3, 4, dtype=tl.float64, requires_grad=True)
    w = tl.randn(MIN, MIN, 3, 3, dtype=tl.float64, requires_grad=True)
    out = tl.empty(1, MIN, 3, 4, dtype=tl.float64)
    assert not conv_kernels.conv2d_winograd(out, x.detach(), w.detach(), None, (1, 1), (1, 1),
                                            (1, 1), 1)
    assert tl.autograd.gradcheck(lambda a, b: tl.nn.functional.conv2d(a, b, padding=1), (x, w),
                                  fast_mode=True)


@needs_kernel
def test_describe_names_it():
    assert "Winograd F(2x2, 3x3) (" in onednn_conv.describe()


@pytest.mark.parametrize("vendor,family,flags,wide", [
    ("AuthenticAMD", 26, {"avx2", "avx512f"}, True),     # Zen 5
    ("AuthenticAMD", 25, {"avx2", "avx512f"}, False),    # Zen 4: 512-bit ops split in two
    ("AuthenticAMD", 25, {"avx2"}, False),               # Zen 3
    ("GenuineIntel", 6, {"avx2", "avx512f"}, True),
    ("GenuineIntel", 6, {"avx2"}, False)])
def test_full_width_avx512(vendor, family, flags, wide, monkeypatch):
    monkeypatch.setattr(blas_choice, "cpu_vendor", lambda: vendor)
    monkeypatch.setattr(blas_choice, "cpu_family", lambda: family)
    monkeypatch.setattr(blas_choice, "cpu_flags", lambda: frozenset(flags))
    assert blas_choice.full_width_avx512() is wide


@pytest.mark.parametrize("forward,grad", [(True, False), (False, True), (False, False)])
def test_the_cpu_rule(forward, grad, monkeypatch):
    """Each of the forward and the input gradient goes to Winograd or oneDNN on its own
    flag (oneDNN absent: Winograd regardless); every split gives torch's results, and
    describe() says which runs where."""
    monkeypatch.setattr(conv_kernels, "WINOGRAD_FORWARD_BEFORE_ONEDNN", forward)
    monkeypatch.setattr(conv_kernels, "WINOGRAD_GRAD_BEFORE_ONEDNN", grad)
    absent = onednn.library() is None
    assert onednn_conv._winograd_first() is (forward or absent)
    assert onednn_conv._winograd_first(grad=True) is (grad or absent)
    if not absent and conv_kernels.WINOGRAD_AVAILABLE:
        text = onednn_conv.describe()
        assert ("not Winograd" in text) is not (forward or grad)
        assert ("3x3 stride-1 forwards" in text) is forward
        assert ("input gradients with" in text) is (grad and not forward)
    assert_conv_module_matches_torch(32, 64, (2, 32, 16, 16), tl.float32, grad_factor=20)


def test_the_size_rule():
    """Direct multiply-adds per Winograd product: 2.25 where the tiles fill the vectors, less
    for partial tiles and tile rows padded to 8 tiles."""
    assert conv_kernels._winograd_gain(16, 16) == pytest.approx(2.25)
    assert conv_kernels._winograd_gain(32, 32) == pytest.approx(2.25)
    assert conv_kernels._winograd_gain(11, 11) == pytest.approx(9 * 121 / (16 * 6 * 8))
    assert conv_kernels._winograd_gain(16, 16) >= conv_kernels.WINOGRAD_MIN_GAIN
    assert conv_kernels._winograd_gain(11, 11) < conv_kernels.WINOGRAD_MIN_GAIN


@needs_kernel
def test_the_benchmark_shape_takes_it_through_nn():
    """nn.Conv2d(32, 64, 3, padding=1) on 16x16 images at the default size rule: the
    forward and the input gradient run here (no oneDNN forward plan; the backward plan, where
    oneDNN is installed, holds the weight gradient alone), the results match torch."""
    onednn_conv._plans.clear()
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 32, 16, 16)).astype(np.float32)
    w = rng.standard_normal((64, 32, 3, 3)).astype(np.float32)
    tx, tw = tl.tensor(x, requires_grad=True), tl.tensor(w, requires_grad=True)
    rx, rw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    y, ry = tl.nn.functional.conv2d(tx, tw, padding=1), torch.nn.functional.conv2d(rx, rw,
                                                                                   padding=1)
    y.sum().backward()
    ry.sum().backward()
    for got, want in ((y, ry), (tx.grad, rx.grad), (tw.grad, rw.grad)):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-4,
                                   atol=1e-3)
    assert not [k for k in onednn_conv._plans if k[0] == "fwd"]
    for plan in (p for k, p in onednn_conv._plans.items() if k[0] == "bwd" and p is not None):
        assert len(plan.impls()) == 1
