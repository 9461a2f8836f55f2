"""The nn names added for real programs (issue #29): rrelu / RReLU, channel_shuffle /
ChannelShuffle, lp_pool3d / LPPool3d, nn.grad (also F.grad), SyncBatchNorm on one process,
Container, factory_kwargs, common_types, the conv weight memory-format helpers: values,
gradients and errors against PyTorch, on every test device."""
import warnings

import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
import tensorlib.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
RNG = np.random.default_rng(29)


def ours(a, device, requires_grad=False):
    return tensorlib.tensor(np.asarray(a), device=device, requires_grad=requires_grad)


def theirs(a, requires_grad=False):
    return torch.tensor(np.asarray(a), requires_grad=requires_grad)


def close(x, y, tol=1e-10):
    np.testing.assert_allclose(x.detach().cpu().numpy(), y.detach().numpy(), rtol=tol,
                               atol=tol)


def same_error(fn_ours, fn_theirs, message=True):
    with pytest.raises(Exception) as ref:
        fn_theirs()
    with pytest.raises(type(ref.value)) as got:
        fn_ours()
    assert not message or str(got.value) == str(ref.value)


# ---- rrelu ---------------------------------------------------------------------------------
def test_rrelu_eval_is_mean_slope_leaky_relu(device):
    a = RNG.standard_normal((3, 4))
    x, tx = ours(a, device, True), theirs(a, True)
    y, ty = F.rrelu(x, 0.1, 0.3), TF.rrelu(tx, 0.1, 0.3)
    close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    close(x.grad, tx.grad)


def test_rrelu_training_slopes_are_in_bounds_and_are_the_gradient(device):
    a = RNG.standard_normal(2000)
    x = ours(a, device, True)
    y = F.rrelu(x, 0.2, 0.4, training=True)
    y.sum().backward()
    out, grad = y.detach().cpu().numpy(), x.grad.cpu().numpy()
    neg = a <= 0
    np.testing.assert_array_equal(out[~neg], a[~neg])
    np.testing.assert_array_equal(grad[~neg], 1.0)
    slope = out[neg] / a[neg]
    assert (slope >= 0.2 - 1e-12).all() and (slope <= 0.4 + 1e-12).all()
    assert slope.std() > 0.03                       # a slope per element, not one slope
    np.testing.assert_allclose(grad[neg], slope, rtol=1e-12)


def test_rrelu_inplace_and_module(device):
    a = RNG.standard_normal((2, 5))
    x = ours(a, device)
    assert F.rrelu_(x) is x
    close(x, TF.rrelu(theirs(a)))
    m = nn.RReLU(0.1, 0.3, inplace=True)
    assert repr(m) == repr(torch.nn.RReLU(0.1, 0.3, inplace=True))
    m.eval()
    close(m(ours(a, device)), torch.nn.RReLU(0.1, 0.3).eval()(theirs(a)))


def test_rrelu_errors():
    same_error(lambda: F.rrelu(tensorlib.randn(3), 0.5, 0.1),
               lambda: TF.rrelu(torch.randn(3), 0.5, 0.1))
    same_error(lambda: F.rrelu(tensorlib.arange(3), training=True),
               lambda: TF.rrelu(torch.arange(3), training=True))
    same_error(lambda: F.rrelu(tensorlib.arange(3)), lambda: TF.rrelu(torch.arange(3)))


# ---- channel shuffle -----------------------------------------------------------------------
@pytest.mark.parametrize("shape,groups", [((2, 6, 3), 3), ((1, 4, 2, 3), 2), ((2, 8, 1, 2, 2), 4),
                                          ((1, 0, 2), 2), ((3, 5, 2), 1)])
def test_channel_shuffle_matches_torch(device, shape, groups):
    a = RNG.standard_normal(shape)
    x, tx = ours(a, device, True), theirs(a, True)
    y, ty = F.channel_shuffle(x, groups), TF.channel_shuffle(tx, groups)
    close(y, ty, 0)
    close(F.native_channel_shuffle(x, groups), TF.native_channel_shuffle(tx, groups), 0)
    close(nn.ChannelShuffle(groups)(x), torch.nn.ChannelShuffle(groups)(tx), 0)
    if not x.numel():
        return          # torch's backward of an empty channel_shuffle raises (its bug)
    w = RNG.standard_normal(shape)
    (y * ours(w, device)).sum().backward()
    (ty * theirs(w)).sum().backward()
    close(x.grad, tx.grad, 0)


@pytest.mark.parametrize("shape,groups", [((1, 4, 2), 3), ((4,), 2), ((1, 4), 2),
                                          ((1, 4, 2), 0), ((1, 4, 2), -2), ((1, 4, 2), 2.0)])
def test_channel_shuffle_errors(shape, groups):
    same_error(lambda: F.channel_shuffle(tensorlib.zeros(shape), groups),
               lambda: TF.channel_shuffle(torch.zeros(shape), groups))


def test_channel_shuffle_repr():
    assert repr(nn.ChannelShuffle(3)) == repr(torch.nn.ChannelShuffle(3))


# ---- lp_pool3d ------------------------------------------------------------------------------
@pytest.mark.parametrize("norm,kernel,stride,ceil", [(2, 2, None, False), (3, (2, 1, 2), 1, False),
                                                      (1.5, 2, (1, 2, 1), True)])
def test_lp_pool3d_matches_torch(device, norm, kernel, stride, ceil):
    a = np.abs(RNG.standard_normal((2, 2, 5, 4, 5))) + 0.1
    x, tx = ours(a, device, True), theirs(a, True)
    y, ty = F.lp_pool3d(x, norm, kernel, stride, ceil), TF.lp_pool3d(tx, norm, kernel, stride,
                                                                     ceil)
    close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    close(x.grad, tx.grad)
    m, tm = nn.LPPool3d(norm, kernel, stride, ceil), torch.nn.LPPool3d(norm, kernel, stride, ceil)
    assert repr(m) == repr(tm)
    close(m(x), tm(tx))


def test_lp_pool3d_error():
    same_error(lambda: F.lp_pool3d(tensorlib.zeros(2, 3, 3), 2, 2),
               lambda: TF.lp_pool3d(torch.zeros(2, 3, 3), 2, 2), message=False)


# ---- nn.grad ----------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3])
def test_conv_input_and_weight_gradients_match_torch(device, n):
    kw = dict(stride=2, padding=1, dilation=1, groups=2)
    a = RNG.standard_normal((2, 4) + (7,) * n)
    w = RNG.standard_normal((6, 2) + (3,) * n)
    out_shape = tuple(getattr(TF, f"conv{n}d")(theirs(a), theirs(w), None, **kw).shape)
    g = RNG.standard_normal(out_shape)
    for name in (f"conv{n}d_input", f"conv{n}d_weight"):
        ref = getattr(torch.nn.grad, name)
        fn = getattr(F.grad, name)
        assert fn is getattr(nn.grad, name)
        if name.endswith("input"):
            got, want = fn(a.shape, ours(w, device), ours(g, device), **kw), \
                ref(a.shape, theirs(w), theirs(g), **kw)
        else:
            got, want = fn(ours(a, device), w.shape, ours(g, device), **kw), \
                ref(theirs(a), w.shape, theirs(g), **kw)
        close(got, want, 1e-9)


# ---- SyncBatchNorm on one process -------------------------------------------------------------
def test_sync_batchnorm_single_process_is_batchnorm(device):
    a = RNG.standard_normal((4, 3, 2, 5))
    m, tm = nn.SyncBatchNorm(3).double().to(device), torch.nn.SyncBatchNorm(3).double()
    assert repr(m) == repr(tm)
    x, tx = ours(a, device, True), theirs(a, True)
    y, ty = m(x), tm(tx)
    close(y, ty)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    close(x.grad, tx.grad, 1e-9)
    close(m.running_var, tm.running_var)
    m.eval()
    tm.eval()
    close(m(x), tm(tx))


def test_convert_sync_batchnorm_shares_parameters_and_stats():
    model = nn.Sequential(nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4),
                          nn.Sequential(nn.BatchNorm1d(2, affine=False)))
    model[1].running_mean.fill_(0.5)
    bn = model[1]
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert type(converted[1]) is nn.SyncBatchNorm and type(converted[2][0]) is nn.SyncBatchNorm
    assert converted[1].weight is bn.weight and converted[1].running_mean is bn.running_mean
    assert converted[2][0].weight is None and type(converted[0]) is nn.Conv2d


def test_sync_batchnorm_errors():
    same_error(lambda: nn.SyncBatchNorm(3)(tensorlib.zeros(3)),
               lambda: torch.nn.SyncBatchNorm(3)(torch.zeros(3)))
    same_error(lambda: nn.SyncBatchNorm(0)(tensorlib.zeros(2, 0)),
               lambda: torch.nn.SyncBatchNorm(0)(torch.zeros(2, 0)))


# ---- the small names --------------------------------------------------------------------------
def test_container_warns_and_registers_children():
    with pytest.warns(FutureWarning, match="nn.Container"):
        c = nn.Container(fc=nn.Linear(2, 3))
    assert isinstance(c.fc, nn.Linear) and len(list(c.parameters())) == 2


def test_factory_kwargs_matches_torch():
    for kwargs in ({"dtype": 1, "device": 2}, {"factory_kwargs": {"dtype": 3}, "device": 2},
                   None):
        assert nn.factory_kwargs(kwargs) == torch.nn.factory_kwargs(kwargs)
    for bad in ({"bias": True}, {"dtype": 1, "factory_kwargs": {"dtype": 2}}):
        same_error(lambda: nn.factory_kwargs(bad), lambda: torch.nn.factory_kwargs(bad))


def test_common_types_names():
    import tensorlib.nn.common_types as ct
    public = {n for n in dir(torch.nn.common_types) if n.startswith("_") and n.endswith("_t")}
    assert public <= set(dir(ct))


def test_has_torch_function_reexports():
    import tensorlib.overrides as overrides
    for name in ("has_torch_function", "has_torch_function_unary",
                 "has_torch_function_variadic", "handle_torch_function"):
        assert getattr(F, name) is getattr(overrides, name)


@pytest.mark.parametrize("n", [2, 3])
def test_convert_conv_weight_memory_format(n):
    conv = getattr(nn, f"Conv{n}d")
    fmt = tensorlib.channels_last if n == 2 else tensorlib.channels_last_3d
    model = nn.Sequential(conv(2, 4, 2), nn.Sequential(conv(4, 2, 3)), nn.Linear(2, 2))
    before = [p.detach().clone() for p in model.parameters()]
    fn = getattr(nn.utils, f"convert_conv{n}d_weight_memory_format")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fn(model, fmt) is model
    assert model[0].weight.is_contiguous(memory_format=fmt)
    assert model[1][0].weight.is_contiguous(memory_format=fmt)
    for b, p in zip(before, model.parameters()):
        np.testing.assert_array_equal(b.numpy(), p.detach().numpy())
