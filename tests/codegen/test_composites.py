"""The composite kernels of `tensorlib.codegen.composites`, written once for the GPU
backends, against torch on every generated-code device present (opencl on PoCL here, cuda
where a GPU is): softmax / log_softmax and their backward along any dim and layout, 2-D max
pooling and its backward, layer_norm, and the fused SGD and Adam steps. The CUDA backend
registers them all, the OpenCL backend the max-pool backward, layer_norm and Adam; here they
are called directly (or put in the table for the one test and taken out after), so the
OpenCL backend's own table is unchanged."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.codegen import composites as C

torch = pytest.importorskip("torch")
DEVICES = [d for d in ("opencl", "cuda") if tl.backends.why_unavailable(d) is None]
pytestmark = pytest.mark.skipif(not DEVICES, reason="no OpenCL or CUDA device")


@pytest.fixture(params=DEVICES)
def gpu(request):
    return request.param


def _close(got, want, tol=1e-5):
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", [((7, 300), 1), ((5, 4, 33), 1), ((3, 1000), -1),
                                       ((2, 3), 0), ((4, 1), 1)])
def test_softmax_forward_and_backward(gpu, name, shape, dim):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(shape) * 4).astype(np.float32)
    a.flat[0] = -np.inf
    x = tl.tensor(a, device=gpu)
    out = tl.empty(shape, device=gpu)
    C.KERNELS[name](out, x, dim)
    ta = torch.tensor(a, requires_grad=True)
    ref = getattr(torch, name)(ta, dim)
    _close(out.cpu().numpy(), ref.detach().numpy())
    g = rng.standard_normal(shape).astype(np.float32)
    ref.backward(torch.tensor(g))
    gi = tl.empty(shape, device=gpu)
    C.KERNELS[name + "_backward"](gi, tl.tensor(g, device=gpu),
                                  tl.tensor(ref.detach().numpy(), device=gpu), dim)
    _close(gi.cpu().numpy(), ta.grad.numpy(), 1e-4)


def test_softmax_on_strided_views_and_nan_rows(gpu):
    a = np.random.default_rng(1).standard_normal((40, 50)).astype(np.float32)
    a[3, 7] = np.nan
    x = tl.tensor(a, device=gpu).t()                 # (50, 40), softmax along stride-50 dim
    out = tl.empty((40, 50), device=gpu).t()
    C.KERNELS["softmax"](out, x, 1)
    _close(out.cpu().numpy(), torch.softmax(torch.tensor(a).t(), 1).numpy())


def test_softmax_in_16_bit_floats_computes_in_float(gpu):
    a = np.random.default_rng(2).standard_normal((6, 500)).astype(np.float32)
    x = tl.tensor(a, device=gpu).to(tl.bfloat16)
    out = tl.empty((6, 500), dtype=tl.bfloat16, device=gpu)
    C.KERNELS["log_softmax"](out, x, 1)
    ref = torch.log_softmax(torch.tensor(a).to(torch.bfloat16).float(), 1)
    _close(out.float().cpu().numpy(), ref.numpy(), 3e-2)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=2, ceil_mode=True),
                                dict(kernel_size=(2, 3), dilation=2)])
def test_max_pool2d_matches_torch(gpu, kw):
    import tensorlib.nn.functional as F
    from tensorlib._C.device import canonical
    a = np.random.default_rng(3).standard_normal((2, 3, 9, 11)).astype(np.float32)
    table = canonical(gpu)._kernels
    saved = table.get("max_pool")
    table["max_pool"] = C.max_pool                  # the op looks the kernel up by name
    try:
        v, i = F.max_pool2d(tl.tensor(a, device=gpu), **kw, return_indices=True)
    finally:
        table.pop("max_pool") if saved is None else table.__setitem__("max_pool", saved)
    rv, ri = torch.nn.functional.max_pool2d(torch.tensor(a), **kw, return_indices=True)
    _close(v.cpu().numpy(), rv.numpy())
    assert (i.cpu().numpy() == ri.numpy()).all()


@pytest.mark.parametrize("fn,shape,kw", [
    ("max_pool2d", (3, 2, 9, 11), dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool2d", (2, 3, 8, 8), dict(kernel_size=2)),
    ("max_pool2d", (2, 1, 7, 9), dict(kernel_size=(2, 3), dilation=2, ceil_mode=True)),
    ("max_pool1d", (4, 2, 13), dict(kernel_size=3, stride=1)),
    ("max_pool3d", (2, 2, 5, 6, 7), dict(kernel_size=2, stride=(1, 2, 2), padding=1)),
    ("adaptive_max_pool2d", (2, 2, 9, 7), dict(output_size=(4, 3))),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pool_backward_matches_cpu(gpu, fn, shape, kw, dtype):
    """The gather-form backward (each input element sums the windows that chose it), with
    overlapping windows, padding, dilation, 1-3 spatial dims and adaptive windows; integer
    inputs make ties, which must go to the first maximum as on the CPU."""
    import tensorlib.nn.functional as F
    from tensorlib._C.device import canonical
    a = np.random.default_rng(5).integers(-3, 4, shape).astype(dtype)
    g = np.random.default_rng(6).standard_normal(getattr(F, fn)(tl.tensor(a), **kw).shape)
    grads = {}
    table = canonical(gpu)._kernels
    saved = table.get("max_pool_backward")
    table["max_pool_backward"] = C.max_pool_backward
    try:
        for dev in ("cpu", gpu):
            x = tl.tensor(a, device=dev, requires_grad=True)
            getattr(F, fn)(x, **kw).backward(tl.tensor(g.astype(dtype), device=dev))
            grads[dev] = x.grad.cpu().numpy()
    finally:
        table.pop("max_pool_backward") if saved is None else table.__setitem__(
            "max_pool_backward", saved)
    _close(grads[gpu], grads["cpu"])
    assert C.max_pool_backward(tl.empty((1, 1, 2, 2, 2, 2), device=gpu),
                               tl.zeros((1, 1, 1, 1, 1, 1), device=gpu),
                               tl.zeros((1, 1, 1, 1, 1, 1), dtype=tl.int64, device=gpu),
                               [(tl.tensor([0, 1], device=gpu), tl.tensor([0], device=gpu))] * 4
                               ) is False


@pytest.mark.parametrize("momentum,nesterov,first", [(0.0, False, False), (0.9, True, False),
                                                     (0.9, False, True)])
def test_fused_sgd_step(gpu, momentum, nesterov, first):
    rng = np.random.default_rng(4)
    p, g, b = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))
    tp, tg, tb = (tl.tensor(z, device=gpu) for z in (p, g, b))
    buf = tb if momentum else None
    assert C.sgd_update(tp, tg, buf, 0.1, 0.01, momentum, 0.1, nesterov, True, first)
    d = -g + 0.01 * p
    if momentum:
        b = d if first else momentum * b + 0.9 * d
        d = d + momentum * b if nesterov else b
        _close(tb.cpu().numpy(), b)
    _close(tp.cpu().numpy(), p - 0.1 * d)
    assert not C.sgd_update(tp.to(tl.float16), tg.to(tl.float16), None, 0.1, 0, 0, 0, False,
                            False, False)


@pytest.mark.parametrize("shape,norm,affine", [((6, 300), (300,), True), ((4, 5, 33), (5, 33), True),
                                               ((3, 1000), (1000,), False), ((2, 1), (1,), True),
                                               ((7, 64), (64,), False)])
def test_layer_norm_matches_torch(gpu, shape, norm, affine):
    rng = np.random.default_rng(5)
    a = (rng.standard_normal(shape) * 3 + 2).astype(np.float32)
    w, b = (rng.standard_normal(norm).astype(np.float32) for _ in range(2))
    x = tl.tensor(a, device=gpu)
    out = tl.empty(shape, device=gpu)
    tw, tb = (tl.tensor(w, device=gpu), tl.tensor(b, device=gpu)) if affine else (None, None)
    C.layer_norm_kernel(out, x, tw, tb, len(norm), 1e-5)
    ref = torch.nn.functional.layer_norm(torch.tensor(a), norm,
                                         torch.tensor(w) if affine else None,
                                         torch.tensor(b) if affine else None, 1e-5)
    _close(out.cpu().numpy(), ref.numpy(), 1e-4)


def test_layer_norm_on_a_transposed_input_into_a_strided_output(gpu):
    a = np.random.default_rng(6).standard_normal((40, 50)).astype(np.float32)
    x = tl.tensor(a, device=gpu).t()                    # rows of 40 with stride 50
    out = tl.empty((40, 50), device=gpu).t()
    C.layer_norm_kernel(out, x, None, None, 1, 1e-5)
    ref = torch.nn.functional.layer_norm(torch.tensor(a).t(), (40,))
    _close(out.cpu().numpy(), ref.numpy(), 1e-4)


def test_layer_norm_in_bfloat16_computes_in_float(gpu):
    a = np.random.default_rng(7).standard_normal((5, 200)).astype(np.float32)
    x = tl.tensor(a, device=gpu).to(tl.bfloat16)
    out = tl.empty((5, 200), dtype=tl.bfloat16, device=gpu)
    C.layer_norm_kernel(out, x, None, None, 1, 1e-5)
    ref = torch.nn.functional.layer_norm(torch.tensor(a).to(torch.bfloat16).float(), (200,))
    _close(out.to(tl.float32).cpu().numpy(), ref.numpy(), 2e-2)


@pytest.mark.parametrize("amsgrad,decoupled,maximize", [(False, False, False),
                                                        (True, False, True),
                                                        (False, True, False)])
def test_fused_adam_steps_match_torch(gpu, amsgrad, decoupled, maximize):
    rng = np.random.default_rng(8)
    shapes = [(30, 7), (11,), (1,)]
    start = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(3)]
    kind = torch.optim.AdamW if decoupled else torch.optim.Adam
    tparams = [torch.tensor(p, requires_grad=True) for p in start]
    topt = kind(tparams, lr=0.01, weight_decay=0.1, amsgrad=amsgrad, maximize=maximize)
    params = [tl.tensor(p, device=gpu) for p in start]
    m = [tl.zeros(s, device=gpu) for s in shapes]
    v = [tl.zeros(s, device=gpu) for s in shapes]
    vmax = [tl.zeros(s, device=gpu) for s in shapes]
    b1, b2 = 0.9, 0.999
    for t, step_grads in enumerate(grads, start=1):
        for tp, g in zip(tparams, step_grads):
            tp.grad = torch.tensor(g)
        topt.step()
        ok = C.adam_update_multi(params, [tl.tensor(g, device=gpu) for g in step_grads], m, v,
                                 vmax if amsgrad else [], [0.01 / (1 - b1 ** t)] * 3,
                                 [(1 - b2 ** t) ** 0.5] * 3, b1, b2, 0.1, 0.01, 1e-8, amsgrad,
                                 maximize, decoupled)
        assert ok
    for p, tp in zip(params, tparams):
        _close(p.cpu().numpy(), tp.detach().numpy(), 1e-5)
    half = [p.to(tl.float16) for p in params]
    assert C.adam_update_multi(half, half, half, half, [], [0.1] * 3, [1.0] * 3, b1, b2, 0, 0.1,
                               1e-8, False, False, False) is False


@pytest.fixture
def fused_cross_entropy(gpu):
    """The gpu's table with the fused cross-entropy kernels in it, for one test."""
    from tensorlib._C.device import canonical
    table = canonical(gpu)._kernels
    saved = {n: table.get(n) for n in ("cross_entropy", "cross_entropy_backward")}
    calls = {}

    def counted(name, kernel):
        def run(*args):
            calls[name] = calls.get(name, 0) + 1
            return kernel(*args)
        return run
    table["cross_entropy"] = counted("forward", C.cross_entropy_kernel)
    table["cross_entropy_backward"] = counted("backward", C.cross_entropy_backward_kernel)
    yield gpu, calls
    for name, kernel in saved.items():
        if kernel is None:
            table.pop(name, None)
        else:
            table[name] = kernel


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(16, 10), (5, 1000), (3, 1)])
def test_fused_cross_entropy_matches_torch(fused_cross_entropy, reduction, shape):
    gpu, calls = fused_cross_entropy
    rng = np.random.default_rng(9)
    a = (rng.standard_normal(shape) * 3).astype(np.float32)
    t = rng.integers(0, shape[1], shape[0])
    t[0] = -100                                          # ignored
    x = tl.tensor(a, device=gpu, requires_grad=True)
    loss = tl.nn.functional.cross_entropy(x, tl.tensor(t, device=gpu), reduction=reduction)
    ta = torch.tensor(a, requires_grad=True)
    ref = torch.nn.functional.cross_entropy(ta, torch.tensor(t), reduction=reduction)
    _close(loss.detach().cpu().numpy(), ref.detach().numpy(), 1e-5)
    g = rng.standard_normal(ref.shape).astype(np.float32)
    loss.backward(tl.tensor(g, device=gpu))
    ref.backward(torch.tensor(g))
    _close(x.grad.cpu().numpy(), ta.grad.numpy(), 1e-5)
    assert calls == {"forward": 1, "backward": 1}


def test_fused_cross_entropy_double_backward_runs_through_ops(fused_cross_entropy):
    gpu, calls = fused_cross_entropy
    a = np.random.default_rng(10).standard_normal((4, 6)).astype(np.float32)
    t = np.array([1, 5, -100, 0])
    x = tl.tensor(a, device=gpu, requires_grad=True)
    loss = tl.nn.functional.cross_entropy(x, tl.tensor(t, device=gpu))
    (gx,) = tl.autograd.grad(loss, x, create_graph=True)
    (gx * gx).sum().backward()
    ta = torch.tensor(a, requires_grad=True)
    ref = torch.nn.functional.cross_entropy(ta, torch.tensor(t))
    (tg,) = torch.autograd.grad(ref, ta, create_graph=True)
    (tg * tg).sum().backward()
    _close(gx.detach().cpu().numpy(), tg.detach().numpy(), 1e-5)
    _close(x.grad.cpu().numpy(), ta.grad.numpy(), 1e-5)
    assert calls == {"forward": 1}                       # the backward ran in ops


def test_fused_cross_entropy_checks_targets(fused_cross_entropy):
    gpu, _ = fused_cross_entropy
    x = tl.zeros((2, 3), device=gpu)
    with pytest.raises(IndexError, match="Target 3 is out of bounds"):
        tl.nn.functional.cross_entropy(x, tl.tensor([0, 3], device=gpu))


@pytest.fixture
def fused_layer_norm(gpu):
    """The gpu's table with the training layer_norm pair in it, for one test."""
    from tensorlib._C.device import canonical
    table = canonical(gpu)._kernels
    saved = {n: table.get(n) for n in ("layer_norm_train", "layer_norm_backward")}
    table["layer_norm_train"] = C.layer_norm_train_kernel
    table["layer_norm_backward"] = C.layer_norm_backward_kernel
    yield gpu
    for name, kernel in saved.items():
        if kernel is None:
            table.pop(name, None)
        else:
            table[name] = kernel


@pytest.mark.parametrize("shape,norm,affine", [((6, 300), (300,), True), ((4, 5, 33), (5, 33), True),
                                               ((3, 70), (70,), False), ((50,), (50,), True)])
def test_training_layer_norm_matches_torch(fused_layer_norm, shape, norm, affine):
    gpu = fused_layer_norm
    rng = np.random.default_rng(11)
    a = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
    w, b = (rng.standard_normal(norm).astype(np.float32) for _ in range(2))
    g = rng.standard_normal(shape).astype(np.float32)
    x = tl.tensor(a, device=gpu, requires_grad=True)
    tw, tb = ((tl.tensor(w, device=gpu, requires_grad=True),
               tl.tensor(b, device=gpu, requires_grad=True)) if affine else (None, None))
    out = tl.nn.functional.layer_norm(x, norm, tw, tb)
    out.backward(tl.tensor(g, device=gpu))
    ta = torch.tensor(a, requires_grad=True)
    rw, rb = ((torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True))
              if affine else (None, None))
    ref = torch.nn.functional.layer_norm(ta, norm, rw, rb)
    ref.backward(torch.tensor(g))
    _close(out.detach().cpu().numpy(), ref.detach().numpy(), 1e-4)
    _close(x.grad.cpu().numpy(), ta.grad.numpy(), 1e-4)
    if affine:
        _close(tw.grad.cpu().numpy(), rw.grad.numpy(), 1e-4)
        _close(tb.grad.cpu().numpy(), rb.grad.numpy(), 1e-4)


def test_training_layer_norm_double_backward_runs_through_ops(fused_layer_norm):
    gpu = fused_layer_norm
    a = np.random.default_rng(12).standard_normal((3, 8)).astype(np.float32)
    w = np.random.default_rng(13).standard_normal(8).astype(np.float32)
    x = tl.tensor(a, device=gpu, requires_grad=True)
    tw = tl.tensor(w, device=gpu, requires_grad=True)
    (gx,) = tl.autograd.grad((tl.nn.functional.layer_norm(x, (8,), tw) ** 2).sum(), x,
                             create_graph=True)
    gx.sum().backward()
    ta, rw = torch.tensor(a, requires_grad=True), torch.tensor(w, requires_grad=True)
    (tg,) = torch.autograd.grad((torch.nn.functional.layer_norm(ta, (8,), rw) ** 2).sum(), ta,
                                create_graph=True)
    tg.sum().backward()
    _close(gx.detach().cpu().numpy(), tg.detach().numpy(), 1e-4)
    _close(x.grad.cpu().numpy(), ta.grad.numpy(), 1e-4)
    _close(tw.grad.cpu().numpy(), rw.grad.numpy(), 1e-4)
