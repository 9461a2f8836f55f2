"""autocast: output dtypes per op equal torch's CPU autocast, regions nest, the weight cast is
cached, backward runs in the forward's dtypes."""
import warnings

import numpy as np
import pytest

import tensorlib
from tensorlib.amp import policy

torch = pytest.importorskip("torch")


def _inputs(lib):
    g = np.random.default_rng(0)

    def t(*shape):
        return lib.tensor(g.standard_normal(shape).astype(np.float32))
    return dict(x=t(4, 8), w=t(6, 8), b=t(6), img=t(2, 3, 8, 8), k=t(4, 3, 3, 3),
                tgt=lib.tensor([0, 1, 2, 3]), vol=t(1, 2, 4, 4, 4))


# op -> a call on the inputs; every CPU-list op tensorlib has, and ops that keep their dtype
CASES = {
    "matmul": lambda L, F, i: L.matmul(i["x"], i["w"].t()),
    "mm": lambda L, F, i: L.mm(i["x"], i["w"].t()),
    "bmm": lambda L, F, i: L.bmm(i["x"][None], i["w"].t()[None]),
    "baddbmm": lambda L, F, i: L.baddbmm(i["b"], i["x"][None], i["w"].t()[None]),
    "addmm": lambda L, F, i: L.addmm(i["b"], i["x"], i["w"].t()),
    "addbmm": lambda L, F, i: L.addbmm(i["b"], i["x"][None], i["w"].t()[None]),
    "linear": lambda L, F, i: F.linear(i["x"], i["w"], i["b"]),
    "conv1d": lambda L, F, i: F.conv1d(i["x"][None], i["w"][:2, :4, None].expand(2, 4, 3)),
    "conv2d": lambda L, F, i: F.conv2d(i["img"], i["k"], i["k"][:, 0, 0, 0]),
    "conv_transpose2d": lambda L, F, i: F.conv_transpose2d(i["img"], i["k"].transpose(0, 1)),
    "prelu": lambda L, F, i: F.prelu(i["x"], i["b"][:1]),
    "sdpa": lambda L, F, i: F.scaled_dot_product_attention(i["x"][None], i["x"][None],
                                                           i["x"][None]),
    "einsum": lambda L, F, i: L.einsum("ij,kj->ik", i["x"], i["w"]),
    "mv": lambda L, F, i: L.mv(i["w"], i["x"][0]),
    "dot": lambda L, F, i: L.dot(i["x"][0], i["x"][1]),
    "softmax": lambda L, F, i: L.softmax(i["x"], 1),
    "log_softmax": lambda L, F, i: F.log_softmax(i["x"], 1),
    "layer_norm": lambda L, F, i: F.layer_norm(i["x"], (8,)),
    "group_norm": lambda L, F, i: F.group_norm(i["img"], 1),
    "sum": lambda L, F, i: i["x"].sum(),
    "exp": lambda L, F, i: i["x"].exp(),
    "relu": lambda L, F, i: F.relu(i["x"]),
    "prod": lambda L, F, i: i["x"].prod(),
    "trace": lambda L, F, i: L.trace(i["w"]),
    "mse_loss": lambda L, F, i: F.mse_loss(i["x"], i["x"]),
    "l1_loss": lambda L, F, i: F.l1_loss(i["x"], i["x"]),
    "smooth_l1_loss": lambda L, F, i: F.smooth_l1_loss(i["x"], i["x"]),
    "huber_loss": lambda L, F, i: F.huber_loss(i["x"], i["x"]),
    "cross_entropy": lambda L, F, i: F.cross_entropy(i["x"], i["tgt"]),
    "nll_loss": lambda L, F, i: F.nll_loss(i["x"], i["tgt"]),
    "binary_cross_entropy": lambda L, F, i: F.binary_cross_entropy(i["x"].sigmoid(),
                                                                   i["x"].sigmoid()),
    "bce_with_logits": lambda L, F, i: F.binary_cross_entropy_with_logits(i["x"],
                                                                          i["x"].sigmoid()),
    "kl_div": lambda L, F, i: F.kl_div(i["x"], i["x"], reduction="batchmean"),
    "cosine_embedding_loss": lambda L, F, i: F.cosine_embedding_loss(i["x"], i["x"],
                                                                     i["x"][:, 0].sign()),
    "hinge_embedding_loss": lambda L, F, i: F.hinge_embedding_loss(i["x"], i["x"].sign()),
    "margin_ranking_loss": lambda L, F, i: F.margin_ranking_loss(i["x"], i["x"], i["x"]),
    "soft_margin_loss": lambda L, F, i: F.soft_margin_loss(i["x"], i["x"]),
    "triplet_margin_loss": lambda L, F, i: F.triplet_margin_loss(i["x"], i["x"], i["x"]),
    "multi_margin_loss": lambda L, F, i: F.multi_margin_loss(i["x"], i["tgt"]),
    "poisson_nll_loss": lambda L, F, i: F.poisson_nll_loss(i["x"], i["x"].abs()),
    "avg_pool3d": lambda L, F, i: F.avg_pool3d(i["vol"], 2),
    "max_pool3d": lambda L, F, i: F.max_pool3d(i["vol"], 2),
    "adaptive_avg_pool3d": lambda L, F, i: F.adaptive_avg_pool3d(i["vol"], 2),
    "max_pool2d": lambda L, F, i: F.max_pool2d(i["img"], 2),
    "grid_sample": lambda L, F, i: F.grid_sample(i["img"], i["img"][:, :2].permute(0, 2, 3, 1),
                                                 align_corners=False),
    "grid_sample-3d": lambda L, F, i: F.grid_sample(
        i["vol"], i["vol"].permute(0, 2, 3, 4, 1)[..., :1].expand(1, 4, 4, 4, 3),
        align_corners=True),
    "affine_grid": lambda L, F, i: F.affine_grid(i["x"][0, :6].reshape(1, 2, 3), [1, 1, 4, 5],
                                                 align_corners=False),
    "cat": lambda L, F, i: L.cat([i["x"], i["x"].to(L.bfloat16)]),
    "stack": lambda L, F, i: L.stack([i["x"], i["x"].to(L.bfloat16)]),
}


def _run(lib, name, input_dtype, **region):
    F = lib.nn.functional
    inputs = _inputs(lib)
    inputs = {k: (v.to(getattr(lib, input_dtype)) if v.dtype.is_floating_point else v)
              for k, v in inputs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with lib.autocast("cpu", **region):
            return str(CASES[name](lib, F, inputs).dtype).split(".")[-1]


@pytest.mark.parametrize("input_dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_output_dtype_matches_torch_cpu_policy(name, input_dtype):
    assert _run(tensorlib, name, input_dtype) == _run(torch, name, input_dtype)


@pytest.mark.parametrize("name", ["linear", "conv2d", "mse_loss", "softmax"])
def test_float16_region_matches_torch(name):
    assert _run(tensorlib, name, "float32", dtype=tensorlib.float16) == \
        _run(torch, name, "float32", dtype=torch.float16)


def test_tables_name_only_ops_tensorlib_hooks():
    """Every CPU-list entry is an op of tensorlib (so the table is not aspirational)."""
    F = tensorlib.nn.functional
    missing = [n for n in policy.CPU if not (hasattr(tensorlib, n) or hasattr(F, n))
               and n != "cdist"]
    assert missing == []


def test_float64_and_integers_are_left_alone():
    x = tensorlib.randn(3, 3, dtype=tensorlib.float64)
    with tensorlib.autocast("cpu"):
        assert tensorlib.matmul(x, x).dtype is tensorlib.float64
        i = tensorlib.ones(3, 3, dtype=tensorlib.int64)
        assert tensorlib.matmul(i, i).dtype is tensorlib.int64


def test_nesting_and_disabled_regions():
    x = tensorlib.randn(2, 2)
    assert not tensorlib.is_autocast_enabled("cpu")
    with tensorlib.autocast("cpu"):
        assert tensorlib.is_autocast_enabled("cpu")
        assert tensorlib.mm(x, x).dtype is tensorlib.bfloat16
        with tensorlib.autocast("cpu", enabled=False):
            assert not tensorlib.is_autocast_enabled("cpu")
            assert tensorlib.mm(x, x).dtype is tensorlib.float32
            with tensorlib.amp.autocast("cpu", dtype=tensorlib.float16):
                assert tensorlib.get_autocast_dtype("cpu") is tensorlib.float16
                assert tensorlib.mm(x, x).dtype is tensorlib.float16
        assert tensorlib.get_autocast_dtype("cpu") is tensorlib.bfloat16
        assert tensorlib.mm(x, x).dtype is tensorlib.bfloat16
    assert not tensorlib.is_autocast_enabled("cpu")
    assert tensorlib.mm(x, x).dtype is tensorlib.float32


def test_decorator_and_deprecated_spellings():
    @tensorlib.autocast("cpu")
    def f(a):
        return tensorlib.mm(a, a)
    x = tensorlib.randn(2, 2)
    assert f(x).dtype is tensorlib.bfloat16
    assert tensorlib.mm(x, x).dtype is tensorlib.float32
    with pytest.warns(FutureWarning, match="tensorlib.amp.autocast"):
        region = tensorlib.cpu.amp.autocast()
    with region:
        assert tensorlib.mm(x, x).dtype is tensorlib.bfloat16
    import tensorlib.cuda.amp as cuda_amp
    assert issubclass(cuda_amp.autocast, tensorlib.autocast)
    assert issubclass(cuda_amp.GradScaler, tensorlib.amp.GradScaler)


def test_bad_arguments_raise_as_torch():
    with pytest.raises(ValueError, match="device_type"):
        tensorlib.autocast(0)
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'tpu'"):
        tensorlib.autocast("tpu")
    with pytest.warns(UserWarning, match="Disabling autocast"):
        region = tensorlib.autocast("cpu", dtype=tensorlib.float64)
    with region:
        assert not tensorlib.is_autocast_enabled("cpu")


def test_weight_cast_is_cached_inside_a_region():
    w = tensorlib.randn(4, 4, requires_grad=True)
    x = tensorlib.randn(2, 4)
    casts = []
    original = tensorlib.Tensor.to

    def counting_to(self, *args, **kwargs):
        if self is w:
            casts.append(args)
        return original(self, *args, **kwargs)
    tensorlib.Tensor.to = counting_to
    try:
        with tensorlib.autocast("cpu"):
            tensorlib.nn.functional.linear(x, w)
            tensorlib.nn.functional.linear(x, w)
        assert len(casts) == 1
        with tensorlib.autocast("cpu", cache_enabled=False):
            tensorlib.nn.functional.linear(x, w)
            tensorlib.nn.functional.linear(x, w)
        assert len(casts) == 3
    finally:
        tensorlib.Tensor.to = original


def test_backward_runs_in_forward_dtypes_and_matches_torch():
    g = np.random.default_rng(1)
    xs, ws = g.standard_normal((8, 16)).astype(np.float32), \
        g.standard_normal((4, 16)).astype(np.float32)
    grads = []
    for lib in (tensorlib, torch):
        x = lib.tensor(xs, requires_grad=True)
        w = lib.tensor(ws, requires_grad=True)
        with lib.autocast("cpu"):
            y = lib.nn.functional.linear(x, w)
            seen = []
            y.register_hook(lambda grad: seen.append(str(grad.dtype).split(".")[-1]))
            loss = lib.nn.functional.mse_loss(y, lib.zeros_like(y))
        loss.backward()
        assert seen == ["bfloat16"]
        assert w.grad.dtype is lib.float32
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=2e-2, atol=2e-2)


def test_gpu_policy_on_opencl():
    """On GPU backends CUDA's lists apply: matmul in float16, softmax in float32."""
    if tensorlib.backends.why_unavailable("opencl"):
        pytest.skip("opencl unavailable")
    x = tensorlib.randn(4, 4, device="opencl")
    with tensorlib.autocast("opencl"):
        assert tensorlib.get_autocast_dtype("opencl") is tensorlib.float16
        y = tensorlib.matmul(x, x)
        assert y.dtype is tensorlib.float16
        assert tensorlib.softmax(y, 1).dtype is tensorlib.float32
        assert tensorlib.matmul(tensorlib.randn(2, 2), tensorlib.randn(2, 2)).dtype \
            is tensorlib.float32            # a cpu tensor is outside an opencl region
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            tensorlib.nn.functional.binary_cross_entropy(y.sigmoid(), y.sigmoid())


def test_cached_cast_follows_in_place_updates():
    w = tensorlib.nn.Parameter(tensorlib.ones(2, 2))
    x = tensorlib.ones(1, 2)
    with tensorlib.autocast("cpu"):
        assert tensorlib.nn.functional.linear(x, w).tolist() == [[2.0, 2.0]]
        with tensorlib.no_grad():
            w.mul_(3)
        assert tensorlib.nn.functional.linear(x, w).tolist() == [[6.0, 6.0]]


def test_bfloat16_matmul_matches_torch():
    g = np.random.default_rng(2)
    a, b = g.standard_normal((2, 16, 32)).astype(np.float32), \
        g.standard_normal((2, 32, 8)).astype(np.float32)
    ours = tensorlib.matmul(tensorlib.tensor(a).to(tensorlib.bfloat16),
                            tensorlib.tensor(b).to(tensorlib.bfloat16)).float().numpy()
    theirs = torch.matmul(torch.tensor(a).bfloat16(), torch.tensor(b).bfloat16()).float()
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("lib_name", ["tensorlib", "torch"])
def test_a_region_is_per_thread(lib_name):
    """Autocast is per thread, as torch's: another thread's products stay float32 while a
    region is open here, that thread's own region casts, and a new thread starts without
    one."""
    import threading
    lib = tensorlib if lib_name == "tensorlib" else torch
    a, b = lib.ones(4, 4), lib.ones(4, 4)
    opened, done = threading.Event(), threading.Event()
    seen = {}

    def other():
        opened.wait(10)
        seen["other"] = lib.mm(a, b).dtype
        seen["other enabled"] = lib.is_autocast_enabled("cpu")
        with lib.autocast("cpu"):
            seen["other, own region"] = lib.mm(a, b).dtype
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with lib.autocast("cpu"):
        opened.set()
        done.wait(10)
        seen["here"] = lib.mm(a, b).dtype
    t.join()
    seen["after"] = lib.mm(a, b).dtype
    assert seen == {"other": lib.float32, "other enabled": False,
                    "other, own region": lib.bfloat16, "here": lib.bfloat16,
                    "after": lib.float32}


def test_a_thread_ending_inside_a_region_takes_the_hook_with_it():
    """A thread that ends without leaving its region no longer keeps the ops' autocast hook
    installed (it cost every op call in every thread a check)."""
    import threading
    from tensorlib.amp import autocast_mode
    from tensorlib.ops import _autocast
    assert autocast_mode._active_threads == 0 and not _autocast.active

    def leaves_it_open():
        tensorlib.autocast("cpu").__enter__()
        assert _autocast.active and autocast_mode._active_threads == 1

    t = threading.Thread(target=leaves_it_open)
    t.start()
    t.join()
    assert autocast_mode._active_threads == 0 and not _autocast.active
    a = tensorlib.ones(4, 4)
    assert tensorlib.mm(a, a).dtype == tensorlib.float32
