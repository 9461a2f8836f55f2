"""conv2d and its two gradients on each CPU path, forced in-process with `onednn.use`: oneDNN
(where the library is installed) and im2col + GEMM. Both against PyTorch, and against each
other; float64 stays on im2col (oneDNN has no float64 convolutions) and gradchecks there."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorlib as tl
from tensorlib_cpu import onednn, onednn_conv

torch = pytest.importorskip("torch")

# (input shape, weight shape, stride, padding, dilation, groups)
CASES = [((4, 3, 12, 12), (8, 3, 3, 3), 1, 1, 1, 1),           # few input channels
         ((2, 16, 9, 9), (24, 16, 3, 3), 1, 1, 1, 1),
         ((3, 8, 11, 13), (12, 4, 3, 2), 2, (1, 2), (2, 1), 2),  # strided, dilated, grouped
         ((2, 8, 9, 9), (8, 1, 3, 3), 1, 1, 1, 8),              # depthwise
         ((2, 8, 10, 10), (16, 8, 1, 1), 1, 0, 1, 1),           # 1x1
         ((2, 6, 15, 14), (8, 6, 5, 5), 3, 2, 2, 1)]            # strides leaving rows unused


@pytest.fixture(params=["onednn", "im2col"])
def path(request):
    if request.param == "onednn" and onednn.find() is None:
        pytest.skip("oneDNN is not installed (pip install onednn-cpu-gomp)")
    before = onednn.library() is not None
    onednn.use(request.param == "onednn")
    onednn_conv._plans.clear()
    yield request.param
    onednn.use(before)


def _run(module, x, w, gy, stride, padding, dilation, groups, channels_last=False, b=None):
    tx = module.tensor(x, requires_grad=True)
    tw = module.tensor(w, requires_grad=True)
    tb = None if b is None else module.tensor(b, requires_grad=True)
    src = tx.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2) if channels_last else tx
    y = module.nn.functional.conv2d(src, tw, tb, stride, padding, dilation, groups)
    y.backward(module.tensor(gy))
    grads = [] if b is None else [tb.grad]
    return [v.detach().numpy() for v in [y, tx.grad, tw.grad] + grads]


def _inputs(xs, ws, stride, padding, dilation, groups, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    with torch.no_grad():
        shape = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), None, stride,
                                           padding, dilation, groups).shape
    return x, w, rng.standard_normal(tuple(shape)).astype(np.float32)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("xs,ws,stride,padding,dilation,groups", CASES)
def test_forward_and_gradients_match_torch(path, xs, ws, stride, padding, dilation, groups,
                                           bias):
    x, w, gy = _inputs(xs, ws, stride, padding, dilation, groups)
    b = np.linspace(-1, 1, ws[0], dtype=np.float32) if bias else None
    args = (stride, padding, dilation, groups)
    got = _run(tl, x, w, gy, *args, b=b)
    ref = _run(torch, x, w, gy, *args, b=b)
    for name, a, r in zip(("output", "input grad", "weight grad", "bias grad"), got, ref):
        np.testing.assert_allclose(a, r, rtol=1e-4, atol=1e-4, err_msg=name)
    ran = [plan for plan in onednn_conv._plans.values() if plan is not None]
    assert bool(ran) == (path == "onednn")      # the forced path is the one that ran


def test_paths_agree_and_channels_last_input():
    """The same convolution on oneDNN and on im2col, the input also given channels-last
    (read in place by oneDNN)."""
    if onednn.find() is None:
        pytest.skip("oneDNN is not installed")
    before = onednn.library() is not None
    xs, ws, *args = CASES[1]
    x, w, gy = _inputs(xs, ws, *args, seed=3)
    try:
        results = {}
        for on in (True, False):
            onednn.use(on)
            results[on] = _run(tl, x, w, gy, *args)
            np.testing.assert_allclose(_run(tl, x, w, gy, *args, channels_last=True)[0],
                                       results[on][0], rtol=1e-5, atol=1e-5)
    finally:
        onednn.use(before)
    for a, b in zip(results[True], results[False]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("reduce", ["sum", "mean"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", [CASES[0], CASES[1]])
def test_gradients_of_a_reduced_output(path, case, dtype, reduce):
    """The output gradient of conv(x).sum() / .mean() is a scalar expanded (stride 0): oneDNN
    reads it as it is, im2col through a pooled dense copy, and the bias gradient is a
    product; the results equal torch's."""
    xs, ws, *args = case
    x, w, _ = _inputs(xs, ws, *args, seed=9)
    grads = []
    for module in (tl, torch):
        tx = module.tensor(x.astype(dtype), requires_grad=True)
        tw = module.tensor(w.astype(dtype), requires_grad=True)
        getattr(module.nn.functional.conv2d(tx, tw, None, *args), reduce)().backward()
        grads.append([tx.grad.detach().numpy(), tw.grad.detach().numpy()])
    for name, a, r in zip(("input grad", "weight grad"), *grads):
        np.testing.assert_allclose(a, r, rtol=1e-4, atol=1e-5, err_msg=name)


def test_pooled_dense_copies_only_what_is_not_dense():
    dense = tl.randn(2, 3, 4, 5)
    assert onednn_conv._pooled_dense(dense) is dense
    channels_last = dense.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    assert onednn_conv._pooled_dense(channels_last) is channels_last
    expanded = tl.tensor(2.5).expand(2, 3, 4, 5)
    copy = onednn_conv._pooled_dense(expanded)
    assert copy is not expanded and copy.is_contiguous()
    np.testing.assert_array_equal(copy.numpy(), np.full((2, 3, 4, 5), 2.5, np.float32))


def test_conv_transpose_with_output_padding(path):
    """The input gradient kernel for an input size the output does not fully cover."""
    rng = np.random.default_rng(5)
    g = rng.standard_normal((2, 6, 5, 5)).astype(np.float32)
    w = rng.standard_normal((6, 4, 3, 3)).astype(np.float32)
    got = tl.nn.functional.conv_transpose2d(tl.tensor(g), tl.tensor(w), stride=2, padding=1,
                                            output_padding=1)
    ref = torch.nn.functional.conv_transpose2d(torch.tensor(g), torch.tensor(w), stride=2,
                                               padding=1, output_padding=1)
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-4, atol=1e-4)


def test_plans_are_cached_per_shape(path):
    """One plan for the forward, one for both gradients (conv2d_backward), reused."""
    x, w, gy = _inputs((2, 8, 7, 7), (4, 8, 3, 3), 1, 1, 1, 1)
    _run(tl, x, w, gy, 1, 1, 1, 1)
    count = len(onednn_conv._plans)
    _run(tl, x, w, gy, 1, 1, 1, 1)
    assert len(onednn_conv._plans) == count == (2 if path == "onednn" else 0)
    assert all(onednn_conv._plans.values())


def test_float64_gradcheck_stays_on_im2col(path):
    rng = np.random.default_rng(7)
    x = tl.tensor(rng.standard_normal((2, 4, 5, 5)), requires_grad=True)
    w = tl.tensor(rng.standard_normal((4, 2, 3, 3)), requires_grad=True)
    assert tl.autograd.gradcheck(
        lambda a, b: tl.nn.functional.conv2d(a, b, stride=2, padding=1, groups=2), (x, w))
    assert not any(onednn_conv._plans.values())     # float64: declined (cached as None)


def test_environment_switch_turns_it_off():
    code = ("from tensorlib_cpu import onednn, onednn_conv; "
            "print(onednn.library() is None, onednn_conv.describe())")
    env = {**os.environ, onednn.ENV: "0"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.startswith("True") and "TENSORLIB_ONEDNN=0" in out
