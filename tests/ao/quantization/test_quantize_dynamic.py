"""quantize_dynamic against PyTorch: the same float model quantized by both gives the same
weights and outputs (PyTorch's fbgemm rounding) within float rounding, and near the float
model; state_dict round trips; the int8 product without oneDNN."""
import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn


def _pair(torch, sizes, bias=True):
    torch.manual_seed(0)
    layers_t, layers_l = [], []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers_t += [torch.nn.Linear(a, b, bias=bias)] + ([torch.nn.ReLU()] if i < len(sizes) - 2 else [])
        layers_l += [nn.Linear(a, b, bias=bias)] + ([nn.ReLU()] if i < len(sizes) - 2 else [])
    mt, ml = torch.nn.Sequential(*layers_t), nn.Sequential(*layers_l)
    ml.load_state_dict({k: tl.tensor(v.numpy()) for k, v in mt.state_dict().items()})
    return mt, ml


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch", [1, 7, 64])
def test_outputs_match_torch(bias, batch):
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", message=".*deprecated.*")
    mt, ml = _pair(torch, [48, 40, 10], bias)
    qt = torch.ao.quantization.quantize_dynamic(mt, {torch.nn.Linear}, dtype=torch.qint8)
    ql = tl.ao.quantization.quantize_dynamic(ml, {nn.Linear}, dtype=tl.qint8)
    x = torch.randn(batch, 48) * 3
    ref, ours = qt(x).detach().numpy(), ql(tl.tensor(x.numpy())).numpy()
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5)
    assert np.abs(ours - mt(x).detach().numpy()).max() < 0.1
    np.testing.assert_array_equal(ql[0].weight().int_repr().numpy(),
                                  qt[0].weight().int_repr().numpy())
    assert ql[0].weight().q_scale() == qt[0].weight().q_scale()
    assert repr(ql) == repr(qt).replace("torch.", "tensorlib.")
    assert isinstance(ml[0], nn.Linear)          # not inplace: the float model is kept


def test_spec_by_name_inplace_and_aliases():
    ml = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    spec = {"1": tl.ao.quantization.default_dynamic_qconfig}
    out = tl.quantization.quantize_dynamic(ml, spec, inplace=True)
    assert out is ml and isinstance(ml[0], nn.Linear)
    assert isinstance(ml[1], tl.nn.quantized.dynamic.Linear)
    assert tl.nn.quantized.dynamic.Linear is tl.ao.nn.quantized.dynamic.Linear


def test_state_dict_round_trip():
    ml = nn.Sequential(nn.Linear(8, 6), nn.ReLU(), nn.Linear(6, 3))
    q1 = tl.ao.quantization.quantize_dynamic(ml, {nn.Linear})
    q2 = tl.ao.quantization.quantize_dynamic(nn.Sequential(nn.Linear(8, 6), nn.ReLU(),
                                                           nn.Linear(6, 3)), {nn.Linear})
    q2.load_state_dict(q1.state_dict())
    x = tl.randn(5, 8)
    np.testing.assert_array_equal(q1(x).numpy(), q2(x).numpy())
    assert "0._packed_params.weight" in q1.state_dict()


def test_int8_product_without_onednn_is_the_same():
    from tensorlib_cpu import onednn
    ml = nn.Sequential(nn.Linear(33, 17))
    q = tl.ao.quantization.quantize_dynamic(ml, {nn.Linear})
    x = tl.randn(9, 33)
    with_dnnl = q(x).numpy()
    was = onednn.library() is not None      # use() returns the new state, not the old one
    onednn.use(False)
    try:
        without = q(x).numpy()
    finally:
        onednn.use(was)
    np.testing.assert_array_equal(with_dnnl, without)


def test_unsupported_requests_raise():
    ml = nn.Sequential(nn.LSTM(4, 4))
    with pytest.raises(ValueError):
        tl.ao.quantization.quantize_dynamic(ml, {nn.Linear}, dtype=tl.float16)
    with pytest.raises(NotImplementedError, match="static quantization"):
        tl.ao.quantization.prepare(ml)
    with pytest.raises(NotImplementedError, match="static quantization"):
        tl.quantization.convert(ml)


def test_observers_match_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).normal(size=(5, 7)).astype(np.float32)
    for name, kwargs in (("MinMaxObserver", {}), ("MinMaxObserver",
                          {"dtype": "qint8", "qscheme": "per_tensor_symmetric"}),
                         ("MinMaxObserver", {"reduce_range": True}),
                         ("PerChannelMinMaxObserver", {"dtype": "qint8",
                                                       "qscheme": "per_channel_symmetric"})):
        def args(mod):
            return {k: getattr(mod, v) if isinstance(v, str) else v for k, v in kwargs.items()}
        ours = getattr(tl.ao.quantization, name)(**args(tl))
        ref = getattr(torch.ao.quantization, name)(**args(torch))
        ours(tl.tensor(x)), ref(torch.tensor(x))
        for a, b in zip(ours.calculate_qparams(), ref.calculate_qparams()):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_devices(device):
    """Quantized tensors live on any device; the dynamic Linear runs on the CPU's int8 kernel
    and refuses other devices with NotImplementedError, as PyTorch's quantized engines do."""
    x = tl.tensor([[0.5, -1.0, 2.0, 0.25]], device=device)
    q = tl.quantize_per_tensor(x, 0.25, 8, tl.quint8)
    assert q.device == x.device
    np.testing.assert_array_equal(q.dequantize().cpu().numpy(), x.cpu().numpy())
    layer = tl.ao.quantization.quantize_dynamic(nn.Sequential(nn.Linear(4, 2)), {nn.Linear})
    if x.device.type == "cpu":
        assert layer(x).shape == (1, 2)
    else:
        with pytest.raises(NotImplementedError, match="linear_dynamic"):
            layer(x)
