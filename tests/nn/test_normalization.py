"""Normalization layers and functions against PyTorch (float64): batch/instance/layer/group/
RMS/local-response norms and F.normalize; running statistics over several steps, eval mode,
state_dict keys, repr, gradcheck and PyTorch's errors."""
import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(11)


def randn(*shape):
    return RNG.standard_normal(shape) * 2 + 0.5


def t64(a, grad=False):
    return tensorlib.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def th64(a, grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def close(a, b, rtol=1e-10, atol=1e-12):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def copy_params(mine, ref):
    """Give `mine` the parameters and buffers of the torch module `ref`."""
    state = {k: tensorlib.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()}
    mine.load_state_dict(state)


# ---- functional forward ---------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 6), (2, 3, 4, 5), (2, 3, 2, 2, 3)])
@pytest.mark.parametrize("affine", [False, True])
def test_batch_norm_functional(shape, affine):
    x = randn(*shape)
    c = shape[1]
    w, b = (randn(c), randn(c)) if affine else (None, None)
    rm, rv = randn(c), np.abs(randn(c)) + 0.5
    for training in (True, False):
        mine_rm, mine_rv = t64(rm), t64(rv)
        ref_rm, ref_rv = th64(rm), th64(rv)
        out = F.batch_norm(t64(x), mine_rm, mine_rv, None if w is None else t64(w),
                           None if b is None else t64(b), training, 0.3, 1e-3)
        ref = TF.batch_norm(th64(x), ref_rm, ref_rv, None if w is None else th64(w),
                            None if b is None else th64(b), training, 0.3, 1e-3)
        close(out, ref)
        close(mine_rm, ref_rm)
        close(mine_rv, ref_rv)
    # training without running stats
    close(F.batch_norm(t64(x), None, None, training=True),
          TF.batch_norm(th64(x), None, None, training=True))


@pytest.mark.parametrize("normalized", [(6,), (4, 6), 6])
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_layer_norm_functional(normalized, affine):
    x = randn(3, 4, 6)
    shape = (normalized,) if isinstance(normalized, int) else normalized
    w = randn(*shape) if affine != "none" else None
    b = randn(*shape) if affine == "both" else None
    out = F.layer_norm(t64(x), normalized, None if w is None else t64(w),
                       None if b is None else t64(b), eps=1e-4)
    ref = TF.layer_norm(th64(x), list(shape), None if w is None else th64(w),
                        None if b is None else th64(b), eps=1e-4)
    close(out, ref)


@pytest.mark.parametrize("shape,groups", [((4, 6), 3), ((2, 6, 5), 2), ((2, 4, 3, 3), 4),
                                          ((3, 4, 2, 5), 1)])
def test_group_norm_functional(shape, groups):
    x = randn(*shape)
    c = shape[1]
    w, b = randn(c), randn(c)
    close(F.group_norm(t64(x), groups, t64(w), t64(b), 1e-3),
          TF.group_norm(th64(x), groups, th64(w), th64(b), 1e-3))
    close(F.group_norm(t64(x), groups), TF.group_norm(th64(x), groups))


@pytest.mark.parametrize("shape", [(2, 3, 5), (3, 2, 4, 3)])
def test_instance_norm_functional(shape, ):
    x = randn(*shape)
    c = shape[1]
    w, b = randn(c), randn(c)
    rm, rv = randn(c), np.abs(randn(c)) + 0.5
    for use_input_stats in (True, False):
        mine_rm, mine_rv, ref_rm, ref_rv = t64(rm), t64(rv), th64(rm), th64(rv)
        out = F.instance_norm(t64(x), mine_rm, mine_rv, t64(w), t64(b), use_input_stats, 0.2,
                              1e-4)
        ref = TF.instance_norm(th64(x), ref_rm, ref_rv, th64(w), th64(b), use_input_stats, 0.2,
                               1e-4)
        close(out, ref)
        close(mine_rm, ref_rm)
        close(mine_rv, ref_rv)
    close(F.instance_norm(t64(x)), TF.instance_norm(th64(x)))


@pytest.mark.parametrize("eps", [None, 1e-3])
def test_rms_norm_functional(eps):
    x = randn(3, 4, 5)
    w = randn(4, 5)
    close(F.rms_norm(t64(x), (4, 5), t64(w), eps), TF.rms_norm(th64(x), (4, 5), th64(w), eps))
    close(F.rms_norm(t64(x), [5], eps=eps), TF.rms_norm(th64(x), [5], eps=eps))
    x32 = RNG.standard_normal((3, 5)).astype(np.float32) * 1e-4
    close(F.rms_norm(tensorlib.tensor(x32), [5]), TF.rms_norm(torch.tensor(x32), [5]),
          rtol=1e-5)


@pytest.mark.parametrize("shape", [(2, 5, 4), (2, 6, 3, 2), (1, 4, 2, 2, 2)])
@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_local_response_norm(shape, size):
    x = randn(*shape)
    close(F.local_response_norm(t64(x), size, alpha=0.1, beta=0.6, k=1.5),
          TF.local_response_norm(th64(x), size, alpha=0.1, beta=0.6, k=1.5))


@pytest.mark.parametrize("p", [1, 2, 3.0, float("inf")])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_normalize(p, dim):
    x = randn(3, 4, 2)
    close(F.normalize(t64(x), p, dim), TF.normalize(th64(x), p, dim))
    z = np.zeros((2, 3))
    close(F.normalize(t64(z)), TF.normalize(th64(z)))


# ---- gradients ------------------------------------------------------------------------------
def gc(fn, *arrays):
    ts = tuple(t64(a, True) for a in arrays)
    assert gradcheck(fn, ts)


def test_norm_gradchecks():
    x = randn(4, 3, 2)
    w, b = randn(3), randn(3)
    gc(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), x, w, b)
    rm, rv = t64(randn(3)), t64(np.abs(randn(3)) + 0.5)
    gc(lambda x, w, b: F.batch_norm(x, rm, rv, w, b, training=False), x, w, b)
    gc(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), x, w, b)
    gc(lambda x, w, b: F.layer_norm(x, (3, 2), w, b), x, randn(3, 2), randn(3, 2))
    gc(lambda x, w, b: F.group_norm(x, 3, w, b), randn(2, 6, 2), randn(6), randn(6))
    gc(lambda x, w: F.rms_norm(x, [2], w), x, randn(2))
    gc(lambda x: F.local_response_norm(x, 3, alpha=0.5), x)
    gc(lambda x: F.normalize(x, 3, dim=1), x)


def test_norm_gradients_match_torch():
    x = randn(4, 3, 5)
    w, b = randn(3), randn(3)
    cases = [
        (lambda x, w, b, f: f.batch_norm(x, None, None, w, b, True), (x, w, b)),
        (lambda x, w, b, f: f.group_norm(x, 3, w, b), (x, w, b)),
        (lambda x, w, b, f: f.layer_norm(x, [5], w, b), (x, randn(5), randn(5))),
        (lambda x, w, b, f: f.instance_norm(x, None, None, w, b), (x, w, b)),
    ]
    for fn, arrays in cases:
        mine = [t64(a, True) for a in arrays]
        ref = [th64(a, True) for a in arrays]
        g = randn(*x.shape)
        (fn(*mine, F) * t64(g)).sum().backward()
        (fn(*ref, TF) * th64(g)).sum().backward()
        for m, r in zip(mine, ref):
            close(m.grad, r.grad, rtol=1e-9, atol=1e-11)


# ---- BatchNorm modules ----------------------------------------------------------------------
@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (4, 3, 5)),
                                       ("BatchNorm2d", (3, 3, 4, 2)),
                                       ("BatchNorm3d", (2, 3, 2, 2, 2))])
@pytest.mark.parametrize("momentum", [0.1, 0.5, None])
def test_batchnorm_running_stats_over_steps(cls, shape, momentum):
    mine = getattr(nn, cls)(3, momentum=momentum, eps=1e-4).double()
    ref = getattr(torch.nn, cls)(3, momentum=momentum, eps=1e-4).double()
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(randn(3)))
        ref.bias.copy_(torch.tensor(randn(3)))
    copy_params(mine, ref)
    for _ in range(4):
        x = randn(*shape)
        close(mine(t64(x)), ref(th64(x)))
        close(mine.running_mean, ref.running_mean)
        close(mine.running_var, ref.running_var)
        assert mine.num_batches_tracked.item() == ref.num_batches_tracked.item()
    mine.eval()
    ref.eval()
    x = randn(*shape)
    close(mine(t64(x)), ref(th64(x)))
    assert mine.num_batches_tracked.item() == 4


def test_batchnorm_variants():
    x = randn(5, 3, 4)
    for kwargs in ({"affine": False}, {"track_running_stats": False},
                   {"affine": False, "track_running_stats": False}):
        mine = nn.BatchNorm1d(3, **kwargs).double()
        ref = torch.nn.BatchNorm1d(3, **kwargs).double()
        assert list(mine.state_dict()) == list(ref.state_dict())
        assert repr(mine) == repr(ref)
        close(mine(t64(x)), ref(th64(x)))
        mine.eval()
        ref.eval()
        close(mine(t64(x)), ref(th64(x)))      # no running stats: batch statistics


def test_batchnorm_state_dict_and_repr():
    mine, ref = nn.BatchNorm2d(4), torch.nn.BatchNorm2d(4)
    sd = mine.state_dict()
    assert list(sd) == list(ref.state_dict()) == ["weight", "bias", "running_mean",
                                                  "running_var", "num_batches_tracked"]
    assert sd["num_batches_tracked"].dtype == tensorlib.int64
    assert sd["num_batches_tracked"].shape == ()
    assert repr(mine) == repr(ref)
    np.testing.assert_array_equal(mine.weight.detach().numpy(), np.ones(4))
    np.testing.assert_array_equal(mine.bias.detach().numpy(), np.zeros(4))
    np.testing.assert_array_equal(mine.running_var.numpy(), np.ones(4))
    assert [n for n, _ in mine.named_parameters()] == ["weight", "bias"]
    mine.train()
    mine(tensorlib.randn(2, 4, 3, 3))
    mine.reset_running_stats()
    assert mine.num_batches_tracked.item() == 0
    np.testing.assert_array_equal(mine.running_mean.numpy(), np.zeros(4))


def test_batchnorm_loads_old_checkpoint_without_num_batches_tracked():
    bn = nn.BatchNorm1d(2)
    sd = bn.state_dict()
    del sd["num_batches_tracked"]
    sd._metadata[""]["version"] = 1
    result = bn.load_state_dict(sd)
    assert not result.missing_keys


def test_batchnorm_errors():
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(tensorlib.randn(2, 3, 4, 4))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(tensorlib.randn(2, 3, 4))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(3)(tensorlib.randn(1, 3))
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        F.batch_norm(tensorlib.randn(2, 3), tensorlib.zeros(4), tensorlib.ones(4), training=True)
    bn = nn.BatchNorm1d(3).eval()
    assert bn(tensorlib.randn(1, 3)).shape == (1, 3)        # eval: one sample is fine


def test_batchnorm_backward_through_module():
    bn = nn.BatchNorm1d(3).double()
    x = t64(randn(4, 3), True)
    bn(x).pow(2).sum().backward()
    assert x.grad is not None and bn.weight.grad is not None and bn.bias.grad is not None
    assert not bn.running_mean.requires_grad


# ---- InstanceNorm ---------------------------------------------------------------------------
@pytest.mark.parametrize("cls,shape", [("InstanceNorm1d", (3, 4, 5)),
                                       ("InstanceNorm1d", (4, 5)),
                                       ("InstanceNorm2d", (2, 4, 3, 3)),
                                       ("InstanceNorm2d", (4, 3, 3)),
                                       ("InstanceNorm3d", (2, 4, 2, 2, 2))])
@pytest.mark.parametrize("kwargs", [{}, {"affine": True},
                                    {"track_running_stats": True, "momentum": 0.3},
                                    {"affine": True, "track_running_stats": True}])
def test_instancenorm_modules(cls, shape, kwargs):
    mine = getattr(nn, cls)(4, **kwargs).double()
    ref = getattr(torch.nn, cls)(4, **kwargs).double()
    if kwargs.get("affine"):
        with torch.no_grad():
            ref.weight.copy_(torch.tensor(randn(4)))
            ref.bias.copy_(torch.tensor(randn(4)))
        copy_params(mine, ref)
    assert list(mine.state_dict()) == list(ref.state_dict())
    assert repr(mine) == repr(ref)
    for _ in range(3):
        x = randn(*shape)
        close(mine(t64(x)), ref(th64(x)))
    if kwargs.get("track_running_stats"):
        close(mine.running_mean, ref.running_mean)
        close(mine.running_var, ref.running_var)
    mine.eval()
    ref.eval()
    x = randn(*shape)
    close(mine(t64(x)), ref(th64(x)))


def test_instancenorm_errors_and_warning():
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.InstanceNorm1d(3)(tensorlib.randn(2, 3, 4, 4))
    with pytest.raises(ValueError, match="to match num_features"):
        nn.InstanceNorm1d(3, affine=True)(tensorlib.randn(2, 4, 5))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(3)(tensorlib.randn(2, 4, 5))
    with pytest.raises(ValueError, match="Expected more than 1 spatial element"):
        nn.InstanceNorm1d(3)(tensorlib.randn(2, 3, 1))


# ---- LayerNorm / GroupNorm / RMSNorm / LocalResponseNorm ------------------------------------
def _check_module(mine, ref, x, rtol=1e-10):
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.tensor(randn(*p.shape)))
    copy_params(mine, ref)
    assert list(mine.state_dict()) == list(ref.state_dict())
    assert repr(mine) == repr(ref)
    xm, xr = t64(x, True), th64(x, True)
    out, exp = mine(xm), ref(xr)
    close(out, exp, rtol=rtol)
    g = randn(*x.shape)
    (out * t64(g)).sum().backward()
    (exp * th64(g)).sum().backward()
    close(xm.grad, xr.grad, rtol=1e-8, atol=1e-10)
    for (name, p), (_, q) in zip(mine.named_parameters(), ref.named_parameters()):
        close(p.grad, q.grad, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("kwargs", [{}, {"elementwise_affine": False}, {"bias": False},
                                    {"eps": 1e-3}])
def test_layernorm_module(kwargs):
    _check_module(nn.LayerNorm([3, 4], **kwargs).double(),
                  torch.nn.LayerNorm([3, 4], **kwargs).double(), randn(2, 3, 4))
    m = nn.LayerNorm(5)
    assert m.normalized_shape == (5,)


@pytest.mark.parametrize("kwargs", [{}, {"affine": False}, {"eps": 1e-2}])
def test_groupnorm_module(kwargs):
    _check_module(nn.GroupNorm(2, 4, **kwargs).double(),
                  torch.nn.GroupNorm(2, 4, **kwargs).double(), randn(3, 4, 5))
    with pytest.raises(ValueError, match="num_channels must be divisible by num_groups"):
        nn.GroupNorm(3, 4)


@pytest.mark.parametrize("kwargs", [{}, {"elementwise_affine": False}, {"eps": 1e-3}])
def test_rmsnorm_module(kwargs):
    _check_module(nn.RMSNorm([4], **kwargs).double(),
                  torch.nn.RMSNorm([4], **kwargs).double(), randn(2, 3, 4))


def test_local_response_norm_module():
    _check_module(nn.LocalResponseNorm(3, alpha=0.1), torch.nn.LocalResponseNorm(3, alpha=0.1),
                  randn(2, 5, 3))


def test_norm_errors():
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with "
                                           r"shape \[\*, 4\], but got input of size\[2, 3\]"):
        F.layer_norm(tensorlib.randn(2, 3), [4])
    with pytest.raises(RuntimeError, match="Expected weight to be of same shape as "
                                           "normalized_shape"):
        F.layer_norm(tensorlib.randn(2, 3), [3], weight=tensorlib.ones(4))
    with pytest.raises(RuntimeError, match=r"Expected number of channels in input to be "
                                           r"divisible by num_groups, but got input of shape "
                                           r"\[2, 5, 3\] and num_groups=2"):
        F.group_norm(tensorlib.randn(2, 5, 3), 2)
    with pytest.raises(ValueError, match=r"Expected 3D or higher dimensionality input \(got 2 "
                                         r"dimensions\)"):
        F.local_response_norm(tensorlib.randn(2, 3), 2)
    with pytest.raises(RuntimeError, match="normalized_shape"):
        F.rms_norm(tensorlib.randn(2, 3), [2])


# ---- fused-kernel hook ----------------------------------------------------------------------
@pytest.fixture
def fake_kernels():
    """Register recording stand-ins for the fused kernels on the cpu, removed afterwards."""
    from tensorlib._C.dispatch import table
    calls = []
    kernels = {
        "layer_norm": lambda out, x, w, b, nd, eps: (
            calls.append("layer_norm"), out.fill_(7)),
        "rms_norm": lambda out, x, w, nd, eps: (
            calls.append("rms_norm"), out.fill_(7)),
        "batch_norm": lambda out, x, m, v, w, b, eps: (
            calls.append("batch_norm"), out.fill_(7)),
    }
    cpu = table("cpu")
    saved = {k: cpu.get(k) for k in kernels}
    cpu.update(kernels)
    try:
        yield calls
    finally:
        for k, v in saved.items():
            if v is None:
                cpu.pop(k, None)
            else:
                cpu[k] = v


def test_fused_kernels_used_only_without_grad(fake_kernels):
    x = t64(randn(2, 3, 4))
    assert np.all(F.layer_norm(x, [4]).numpy() == 7)
    assert np.all(F.rms_norm(x, [4]).numpy() == 7)
    assert np.all(F.batch_norm(x, t64(np.zeros(3)), t64(np.ones(3))).numpy() == 7)
    assert fake_kernels == ["layer_norm", "rms_norm", "batch_norm"]
    xg = t64(randn(2, 3, 4), True)
    ref = TF.layer_norm(th64(xg.detach().numpy()), [4])
    close(F.layer_norm(xg, [4]), ref)                  # decomposition (carries autograd)
    with tensorlib.no_grad():
        assert np.all(F.layer_norm(xg, [4]).numpy() == 7)
    assert F.batch_norm(x, None, None, training=True).numpy().max() != 7   # train: no kernel
    assert fake_kernels.count("layer_norm") == 2


# ---- every backend --------------------------------------------------------------------------
def _on(a, device, grad=False):
    return tensorlib.tensor(np.asarray(a, dtype=np.float32), device=device, requires_grad=grad)


@pytest.mark.parametrize("name", ["batch_norm", "layer_norm", "group_norm", "instance_norm",
                                  "rms_norm", "local_response_norm", "normalize"])
def test_norms_on_device_match_cpu(device, name):
    x, w, b = randn(4, 3, 5), randn(3), randn(3)
    calls = {
        "batch_norm": lambda x, w, b, d: F.batch_norm(x, _on(np.zeros(3), d),
                                                      _on(np.ones(3), d), w, b, True),
        "layer_norm": lambda x, w, b, d: F.layer_norm(x, [5]) * w.reshape(3, 1),
        "group_norm": lambda x, w, b, d: F.group_norm(x, 3, w, b),
        "instance_norm": lambda x, w, b, d: F.instance_norm(x, weight=w, bias=b),
        "rms_norm": lambda x, w, b, d: F.rms_norm(x, [3, 5], w.reshape(3, 1).expand(3, 5)),
        "local_response_norm": lambda x, w, b, d: F.local_response_norm(x, 2) + w.sum(),
        "normalize": lambda x, w, b, d: F.normalize(x) + w.sum(),
    }
    results = []
    for d in ("cpu", device):
        args = [_on(a, d, True) for a in (x, w, b)]
        out = calls[name](*args, d)
        (out * _on(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)), d)).sum() \
            .backward()
        results.append([out.detach().cpu().numpy()] +
                       [a.grad.cpu().numpy() if a.grad is not None else None for a in args])
    for a, b in zip(*results):
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


def test_batchnorm_module_holds_pytorchs_names():
    """torch.nn.modules.batchnorm has SyncBatchNorm and the lazy classes (timm looks them up
    there); ours are defined beside their own code and found through the module."""
    import tensorlib.nn.modules.batchnorm as batchnorm
    assert batchnorm.SyncBatchNorm is tensorlib.nn.SyncBatchNorm
    assert batchnorm.LazyBatchNorm2d is tensorlib.nn.LazyBatchNorm2d
    assert issubclass(batchnorm.SyncBatchNorm, batchnorm._BatchNorm)
    with pytest.raises(AttributeError, match="no attribute 'Missing'"):
        batchnorm.Missing
