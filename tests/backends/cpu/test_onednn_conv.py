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
    """One plan for the forward, one for both gradients (conv2d_backward), reused (16
    channels: a forward with few runs conv_kernels' direct kernel)."""
    x, w, gy = _inputs((2, 16, 7, 7), (4, 16, 3, 3), 1, 1, 1, 1)
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


def _output_gradient(kind, shape, rng):
    """An output gradient of `shape` given dense, as a broadcast scalar (stride 0: what
    y.sum() sends back) or as a strided view (every other column of a wider tensor)."""
    if kind == "dense":
        return rng.standard_normal(shape).astype(np.float32), lambda m, a: m.tensor(a)
    if kind == "broadcast":
        return np.full(shape, 0.3, np.float32), lambda m, a: m.tensor(0.3).expand(*shape)
    wide = rng.standard_normal(shape[:3] + (2 * shape[3],)).astype(np.float32)
    return wide[..., ::2], lambda m, a: m.tensor(wide)[..., ::2]


@pytest.mark.parametrize("needs", [(True, True, True), (True, False, False),
                                   (False, True, False), (False, False, True),
                                   (True, False, True)])
@pytest.mark.parametrize("g_kind", ["dense", "broadcast", "strided"])
@pytest.mark.parametrize("case", [CASES[0], CASES[1], CASES[2]])
def test_backward_kernel_computes_what_is_asked(path, case, g_kind, needs):
    """conv2d_backward(grad_x, grad_w, grad_b, x, g, w, ...) against torch's
    convolution_backward with the same output mask; unwanted outputs are None."""
    xs, ws, stride, padding, dilation, groups = case
    x, w, gy = _inputs(xs, ws, stride, padding, dilation, groups, seed=11)
    g_ref, make_g = _output_gradient(g_kind, gy.shape, np.random.default_rng(12))
    st, pd, dl = (v if isinstance(v, tuple) else (v, v) for v in (stride, padding, dilation))
    outs = [tl.empty(*xs) if needs[0] else None, tl.empty(*ws) if needs[1] else None,
            tl.empty(ws[0]) if needs[2] else None]
    onednn_conv.conv2d_backward(*outs, tl.tensor(x), make_g(tl, g_ref), tl.tensor(w), st, pd,
                                dl, groups)
    ref = torch.ops.aten.convolution_backward(
        torch.tensor(np.ascontiguousarray(g_ref)), torch.tensor(x), torch.tensor(w),
        [ws[0]], list(st), list(pd), list(dl), False, [0, 0], groups, list(needs))
    for name, got, want, wanted in zip(("grad_x", "grad_w", "grad_b"), outs, ref, needs):
        if wanted:      # (torch's oneDNN path may fill an unwanted one too)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-4,
                                       err_msg=name)


def test_output_gradient_is_reordered_once_for_both_gradients():
    if onednn.find() is None:
        pytest.skip("oneDNN is not installed")
    before = onednn.library() is not None
    onednn.use(True)
    onednn_conv._plans.clear()
    try:
        x, w, gy = _inputs((2, 16, 9, 9), (24, 16, 3, 3), 1, 1, 1, 1)
        _run(tl, x, w, gy, 1, 1, 1, 1)
        (plan,) = [p for k, p in onednn_conv._plans.items() if k[0] == "bwd"]
        assert len(plan.impls()) == 2                  # input and weight gradients
        g_copies = [copy for role, copy, _ in plan._copies if role == 0]
        assert len(g_copies) <= 1
    finally:
        onednn.use(before)


def test_bias_gradient_of_a_broadcast_output_gradient():
    """Summed over broadcast dims the bias gradient is value * count: exact to one rounding,
    where a sum of 2*5*7 terms of 0.1 rounds at each."""
    g = tl.tensor(0.1).expand(2, 3, 5, 7)
    out = tl.empty(3)
    onednn_conv._bias_grad(out, g)
    np.testing.assert_array_equal(out.numpy(), np.full(3, np.float32(0.1) * np.float32(70)))
    partly = tl.tensor(np.arange(3, dtype=np.float32)).reshape(1, 3, 1, 1).expand(2, 3, 5, 7)
    onednn_conv._bias_grad(out, partly)
    np.testing.assert_allclose(out.numpy(), np.arange(3) * 70.0, rtol=1e-6)
    dense = tl.tensor(np.random.default_rng(1).standard_normal((2, 3, 5, 7)).astype(np.float32))
    onednn_conv._bias_grad(out, dense)
    np.testing.assert_allclose(out.numpy(), dense.numpy().sum((0, 2, 3)), rtol=1e-5)


def test_double_backward_goes_through_the_three_ops(path):
    """With create_graph the gradients are recorded ops (not the one backward kernel), so a
    second derivative matches torch's."""
    x, w, _ = _inputs((2, 8, 6, 6), (5, 8, 3, 3), 1, 1, 1, 1, seed=4)
    b = np.linspace(-1, 1, 5, dtype=np.float32)
    results = []
    for m in (tl, torch):
        tx, tw = m.tensor(x, requires_grad=True), m.tensor(w, requires_grad=True)
        y = m.nn.functional.conv2d(tx, tw, m.tensor(b, requires_grad=True), 1, 1)
        (gx,) = m.autograd.grad((y * y).sum(), tx, create_graph=True)
        (gw,) = m.autograd.grad(gx.square().sum(), tw)
        results.append(gw.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-3, atol=1e-3)


def test_executor_checks_the_array_count():
    if onednn.find() is None:
        pytest.skip("oneDNN is not installed")
    before = onednn.library() is not None
    onednn.use(True)
    onednn_conv._plans.clear()
    try:
        # 16 channels: a forward with few runs conv_kernels' direct kernel, not oneDNN
        y = tl.nn.functional.conv2d(tl.randn(1, 16, 5, 5), tl.randn(2, 16, 3, 3))
        assert y.shape == (1, 2, 3, 3)
        (plan,) = [p for p in onednn_conv._plans.values() if p is not None]
        with pytest.raises(ValueError, match="takes 3 arrays, got 1"):
            plan._executor.run((np.zeros(3, np.float32),), None, 1)
    finally:
        onednn.use(before)


@pytest.mark.parametrize("padding", ["same", 1])
def test_a_strided_bias_is_read_by_its_strides(padding):
    """conv2d_bias on oneDNN with a bias view (b[::2]): the convolution reads its bias
    memory as dense, so the kernel hands it a dense copy (it used the wrong elements)."""
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 5, 4), (4, 3, 2, 3),
                                                                    (8,)))
    got = tl.nn.functional.conv2d(tl.tensor(x), tl.tensor(w), tl.tensor(b)[::2],
                                  padding=padding)
    want = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b)[::2],
                                      padding=padding)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
