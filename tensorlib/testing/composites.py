"""A driver per optional composite kernel (tensorlib.backends.interface.COMPOSITES): a small
forward and backward on a device whose results a backend's kernel and the framework's reference
path must both give. `compare_with_reference` runs a driver with the kernel, then without it
(removed from the device's table for the call), and compares; the conformance suite runs it for
every composite a backend registers, tests/backends/test_composites.py for the first-party
ones."""
import numpy as np

import tensorlib
import tensorlib.nn.functional as F
from tensorlib.backends.interface import COMPOSITES

__all__ = ["DRIVERS", "BY_NAME", "NO_REFERENCE", "compare_with_reference"]


def _leaf(shape, seed, device, positive=False):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return tensorlib.tensor(np.abs(a) + 0.5 if positive else a, device=device,
                            requires_grad=True)


def _grads(out, *leaves):
    out.sum().backward() if out.dim() else out.backward()
    return [out] + [t.grad for t in leaves]


def _pointwise(fn):
    def run(d):
        x = _leaf((5, 7), 0, d)
        return _grads(fn(x) * tensorlib.arange(7.0, device=d), x)
    return run


def _float_checks(d):
    x = tensorlib.tensor([[0.5, -0.0, float("nan"), float("inf")], [-2.0, 0.0, -float("inf"), 3.0]],
                         device=d)
    return [tensorlib.sign(x), tensorlib.nan_to_num(x), tensorlib.nan_to_num(x, 1.0, 2.0, -2.0)]


def _blends(d):
    a, b, c = (_leaf((6, 5), seed, d).detach() for seed in (16, 17, 18))
    w = _leaf((6, 5), 19, d).detach().sigmoid()
    return [a.lerp(b, 0.25), a.lerp(b, 0.75), a.lerp(b, w), tensorlib.addcmul(a, b, c, value=0.3),
            tensorlib.addcdiv(a, b, c.abs() + 0.5, value=-2.0)]


def _regression_losses(d):
    x, y = _leaf((7, 9), 20, d), _leaf((7, 9), 21, d)
    loss = (F.l1_loss(x, y) + F.mse_loss(x, y, reduction="sum") + F.smooth_l1_loss(x, y, beta=0.5)
            + F.huber_loss(x, y, delta=0.7))
    return _grads(loss, x, y)


def _masks(d):
    x = _leaf((6, 7), 22, d).detach()
    return [tensorlib.nonzero(x > 0.3), x[x < -0.2], x.masked_select(x > 0),
            tensorlib.nonzero(x[:, 1:] > 0), *tensorlib.nonzero(x > 0.5, as_tuple=True),
            x[x[:, 0] > 0], tensorlib.nonzero(x[0, 0] > 0),
            tensorlib.nonzero(_leaf((300, 300), 24, d).detach() > 0),     # threaded
            _leaf((300, 300), 25, d)[_leaf((300, 300), 26, d).detach() > 0],
            x.double()[x < 0], x.half()[x > 0], (x > 0)[x < 0.1]]


def _medians(d):
    """Rows with NaN, an all-NaN row, ties (-0.0 with 0.0), a middle dim and float64."""
    x = _leaf((5, 9), 27, d).detach()
    x[1, 2] = x[1, 5] = float("nan")
    x[2] = float("nan")
    x[3, :4] = 0.0
    x[3, 4:6] = -0.0
    y = _leaf((3, 4, 5), 28, d).detach().double()
    return [v for r in (tensorlib.median(x, 1), tensorlib.nanmedian(x, 1),
                        tensorlib.median(x, 0, True), tensorlib.median(y, 1),
                        tensorlib.nanmedian(y, -1)) for v in r]


def _triangles(d):
    x = _leaf((2, 5, 6), 23, d)
    return _grads(x.tril() + x.triu(2) + x.tril(-7) + x.triu(-1), x) + [
        tensorlib.ones(4, 4, dtype=tensorlib.bool, device=d).tril(),
        tensorlib.arange(12, device=d).view(3, 4).triu(1)]


def _resampling(d):
    x = _leaf((2, 3, 5, 6), 24, d)
    out = F.interpolate(x, scale_factor=2, mode="bilinear") + F.interpolate(
        x, size=(4, 9), mode="bilinear", align_corners=True).sum()
    return _grads(out, x) + [F.interpolate(x.detach()[0], size=11, mode="linear")]


def _softmax(fn):
    def run(d):
        x = _leaf((4, 6), 1, d)
        return _grads(fn(x, 1) * tensorlib.arange(6.0, device=d), x)
    return run


def _linear(d):
    x, w, b = _leaf((6, 5), 2, d), _leaf((3, 5), 3, d), _leaf((3,), 4, d)
    return _grads(F.linear(x, w, b), x, w, b) + [tensorlib.mm(x.detach(), w.detach().T)]


def _feed_forward(d):
    """A Transformer layer's relu feed-forward in inference, 256 rows of 32 -> 160 (large
    enough for the CPU's fused product)."""
    tensorlib.manual_seed(11)
    layer = tensorlib.nn.TransformerEncoderLayer(32, 4, 160, dropout=0.0, batch_first=True)
    layer = layer.to(d).eval()
    with tensorlib.no_grad():
        return [layer(_leaf((8, 32, 32), 12, d))]


def _conv(nd):
    def run(d):
        x, w, b = _leaf((2, 4) + (6,) * nd, 5, d), _leaf((6, 2) + (3,) * nd, 6, d), \
            _leaf((6,), 7, d)
        conv = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
        return _grads(conv(x, w, b, padding=1, groups=2), x, w, b)
    return run


def _conv_transpose(nd):
    def run(d):
        x, w = _leaf((2, 4) + (5,) * nd, 8, d), _leaf((4, 3) + (3,) * nd, 9, d)
        tconv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
        return _grads(tconv(x, w, stride=2), x, w)
    return run


def _max_pool(d):
    x = _leaf((2, 3, 7, 7), 10, d)
    return _grads(F.max_pool2d(x, 3, stride=2, padding=1), x)


def _grid_sample(d):
    x, grid = _leaf((2, 3, 5, 6), 11, d), _leaf((2, 4, 3, 2), 12, d)
    return _grads(F.grid_sample(x, grid * 0.5, align_corners=False), x, grid)


def _norms(d):
    x, w, b = _leaf((4, 8), 13, d), _leaf((8,), 14, d), _leaf((8,), 15, d)
    out = _grads(F.layer_norm(x, (8,), w, b), x, w, b)
    x.grad = w.grad = None
    out += _grads(F.rms_norm(x * 3, (8,), w), x, w)
    with tensorlib.no_grad():
        mean, var = tensorlib.zeros(8, device=d), tensorlib.ones(8, device=d)
        out += [F.layer_norm(x, (8,), w, b), F.rms_norm(x, (8,), w),
                F.batch_norm(x, mean, var, w, b, training=False)]
    return out


def _group_norm(d):
    x, w, b = _leaf((3, 6, 4, 5), 27, d), _leaf((6,), 28, d), _leaf((6,), 29, d)
    out = _grads(F.group_norm(x * 2 + 1, 3, w, b) * tensorlib.arange(5.0, device=d), x, w, b)
    x.grad = None
    out += _grads(F.group_norm(x, 2) ** 2, x)
    with tensorlib.no_grad():
        out.append(F.group_norm(x, 6, w, b))
    return out


def _cross_entropy(d):
    x = _leaf((6, 5), 16, d)
    target = tensorlib.tensor([0, 4, 2, 1, 3, 2], device=d)
    return _grads(F.cross_entropy(x, target), x)


def _attention(d):
    q, k, v = _leaf((2, 2, 5, 4), 17, d), _leaf((2, 2, 6, 4), 18, d), _leaf((2, 2, 6, 4), 19, d)
    return _grads(F.scaled_dot_product_attention(q, k, v), q, k, v)


def _lstm(d):
    tensorlib.manual_seed(0)
    cell = tensorlib.nn.LSTMCell(4, 3).to(d)
    x = _leaf((5, 4), 20, d)
    h, c = cell(x)
    return _grads(h.sum() + c.sum(), x) + [p.grad for p in cell.parameters()]


def _optimizer(make):
    def run(d):
        params = [_leaf((4, 3), 21, d), _leaf((3,), 22, d)]
        opt = make(params)
        for _ in range(2):
            opt.zero_grad()
            sum((p * p).sum() for p in params).backward()
            opt.step()
        return [p.detach() for p in params]
    return run


def _join(d):
    a, b = _leaf((2, 3), 23, d), _leaf((2, 3), 24, d)
    return [tensorlib.cat([a, b], 1), tensorlib.stack([a, b], 0)]


def _pad_flip(d):
    x = _leaf((2, 3, 4, 5), 30, d)
    weights = tensorlib.arange(2 * 3 * 6 * 7.0, device=d).reshape(2, 3, 6, 7)
    out = _grads(F.pad(x, (1, 1, 1, 1), value=0.5) * weights, x)
    for mode in ("reflect", "replicate", "circular"):
        x.grad = None
        out += _grads(F.pad(x, (1, 1, 1, 1), mode=mode) * weights, x)
    x.grad = None
    out += _grads(F.pad(x, (-1, 2, 0, -2)).sum() + (x.flip(0, 3) * x.detach()).sum(), x)
    return out + [x.detach().flip(1), x.detach().flip(2)[:, 1:].flip(0)]


def _vector_norms(d):
    x = _leaf((3, 4, 5), 31, d)
    out = _grads(tensorlib.linalg.vector_norm(x) + x.norm(dim=(1, 2)).sum()
                 + tensorlib.linalg.vector_norm(x, 2, -1, keepdim=True).sum()
                 + tensorlib.linalg.vector_norm(x, 2, 0).sum(), x)
    return out + [tensorlib.linalg.vector_norm(x.detach() * 0, 2, -1)]


def _topk(d):
    x = _leaf((6, 40), 25, d)
    x.detach()[0, 3] = float("nan")
    large, small = x.topk(4, 1), x.topk(3, 0, largest=False)
    return _grads(large.values * tensorlib.arange(4.0, device=d), x) + [
        large.indices, small.values, small.indices]


def _cumsum(d):
    x = _leaf((5, 300), 26, d)
    return _grads((x.cumsum(1) * x.detach().cumsum(0)).cumsum(0), x)


def _sparse_mm(d):
    s = tensorlib.sparse_coo_tensor(tensorlib.tensor([[0, 1, 1], [2, 0, 2]]),
                                    tensorlib.tensor([1.0, 2.0, 3.0]), (2, 3)).to(d)
    return [tensorlib.sparse.mm(s, tensorlib.ones(3, 4, device=d))]


DRIVERS = {
    ("relu", "relu_backward"): _pointwise(tensorlib.relu),
    ("sigmoid", "sigmoid_backward"): _pointwise(tensorlib.sigmoid),
    ("tanh_backward",): _pointwise(tensorlib.tanh),
    ("silu", "silu_backward"): _pointwise(F.silu),
    ("hardtanh", "hardtanh_backward"): _pointwise(lambda x: F.hardtanh(x, -0.5, 0.7)),
    ("leaky_relu", "leaky_relu_backward"): _pointwise(lambda x: F.leaky_relu(x, 0.2)),
    ("hardsigmoid", "hardsigmoid_backward"): _pointwise(lambda x: F.hardsigmoid(x * 4)),
    ("hardswish", "hardswish_backward"): _pointwise(lambda x: F.hardswish(x * 4)),
    ("elu", "elu_backward"): _pointwise(
        lambda x: F.elu(x, 0.7) + F.celu(x * 2, 1.5) + F.selu(x)),
    ("softplus", "softplus_backward"): _pointwise(
        lambda x: F.softplus(x) + F.softplus(x * 8, 2.0, 3.0)),
    ("log_sigmoid", "log_sigmoid_backward"): _pointwise(lambda x: F.logsigmoid(x * 3)),
    ("mish", "mish_backward"): _pointwise(lambda x: F.mish(x * 3)),
    ("gelu", "gelu_backward"): _pointwise(lambda x: F.gelu(x) + F.gelu(x, approximate="tanh")),
    ("clamp",): _pointwise(lambda x: x.clamp(-0.5, 0.5) + x.clamp(min=0.2) + x.clamp(max=-0.1)),
    ("float_sign", "nan_to_num"): _float_checks,
    ("lerp", "addcmul", "addcdiv"): _blends,
    ("regression_loss", "regression_loss_backward"): _regression_losses,
    ("mask_positions", "nonzero", "mask_count", "masked_select"): _masks,
    ("tri",): _triangles,
    ("median",): _medians,
    ("linear_resample",): _resampling,
    ("softmax", "softmax_backward"): _softmax(tensorlib.softmax),
    ("log_softmax", "log_softmax_backward"): _softmax(tensorlib.log_softmax),
    ("mm", "addmm", "addmm_bias", "mm_pair"): _linear,
    ("addmm_bias_relu",): _feed_forward,
    ("sparse_coo_mm",): _sparse_mm,
    ("cat", "stack"): _join,
    ("pad", "flip", "pad_backward"): _pad_flip,
    ("vector_norm", "vector_norm_backward"): _vector_norms,
    ("topk",): _topk,
    ("reverse_cumsum",): _cumsum,
    ("conv1d", "conv1d_weight_grad", "conv_transpose1d"): _conv(1),
    ("conv2d", "conv2d_bias", "conv2d_backward", "conv2d_weight_grad"): _conv(2),
    ("conv_transpose2d",): _conv_transpose(2),
    ("conv3d", "conv3d_weight_grad", "conv_transpose3d"): _conv(3),
    ("max_pool", "max_pool_backward"): _max_pool,
    ("grid_sampler_2d", "grid_sampler_2d_backward"): _grid_sample,
    ("batch_norm", "rms_norm", "rms_norm_train", "rms_norm_backward", "layer_norm",
     "layer_norm_train", "layer_norm_backward", "layer_norm_backward_affine"): _norms,
    ("group_norm", "group_norm_backward"): _group_norm,
    ("cross_entropy", "cross_entropy_backward"): _cross_entropy,
    ("scaled_dot_product_attention", "scaled_dot_product_attention_backward"): _attention,
    ("lstm_cell", "lstm_cell_backward"): _lstm,
    ("sgd_update", "sgd_update_multi"): _optimizer(
        lambda p: tensorlib.optim.SGD(p, lr=0.1, momentum=0.9)),
    ("adam_update_multi",): _optimizer(lambda p: tensorlib.optim.Adam(p, lr=0.1)),
    ("adam_update_multi_capturable",): _optimizer(
        lambda p: tensorlib.optim.Adam(p, lr=0.1, capturable=True)),
}
BY_NAME = {name: run for names, run in DRIVERS.items() for name in names}
# declared kernels whose absence is an error, not a slower path: tested where they live
NO_REFERENCE = {"quantized_linear_dynamic": "tests/ao/quantization/test_quantize_dynamic.py",
                "mt19937": "tests/ops/test_random_torch_stream.py"}


def compare_with_reference(name, device, rtol=1e-4, atol=1e-5):
    """Assert that composite `name`'s kernel on `device` and the reference path agree."""
    if name not in COMPOSITES:
        raise KeyError(f"'{name}' is not a composite kernel declared in "
                       f"tensorlib.backends.interface.COMPOSITES")
    if name in NO_REFERENCE:
        raise ValueError(f"'{name}' has no reference path; it is tested in {NO_REFERENCE[name]}")
    run = BY_NAME[name]
    table = tensorlib.empty(1, device=device)._device._kernels
    with_kernel = [t.detach().cpu().numpy() for t in run(device)]
    kernel = table.pop(name, None)
    try:
        without = [t.detach().cpu().numpy() for t in run(device)]
    finally:
        if kernel is not None:
            table[name] = kernel
    assert len(with_kernel) == len(without)
    for a, b in zip(with_kernel, without):
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol,
                                   err_msg=f"composite '{name}' on {device}: kernel vs reference")
