"""quantize_dynamic with per-channel weight observers (per_channel_dynamic_qconfig,
default_per_channel_qconfig): one scale per output channel, the int8 weights and scales
equal to PyTorch's, the outputs equal within float rounding, state_dict round trips (also
into a module built per tensor); the same for the LSTM."""
import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn

CONFIGS = ("per_channel_dynamic_qconfig", "default_per_channel_qconfig")


def _linear_pair(torch, sizes=(70, 40, 10)):
    torch.manual_seed(0)
    mt = torch.nn.Sequential(torch.nn.Linear(sizes[0], sizes[1]), torch.nn.ReLU(),
                             torch.nn.Linear(sizes[1], sizes[2]))
    ml = nn.Sequential(nn.Linear(sizes[0], sizes[1]), nn.ReLU(), nn.Linear(sizes[1], sizes[2]))
    ml.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in mt.state_dict().items()})
    return mt, ml


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("batch", [1, 33])
def test_linear_matches_torch(config, batch):
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", message=".*deprecated.*")
    mt, ml = _linear_pair(torch)
    qt = torch.ao.quantization.quantize_dynamic(
        mt, {torch.nn.Linear: getattr(torch.ao.quantization, config)})
    ql = tl.ao.quantization.quantize_dynamic(
        ml, {nn.Linear: getattr(tl.ao.quantization, config)})
    assert repr(ql) == repr(qt).replace("torch.", "tensorlib.")
    for i in (0, 2):
        wt, wl = qt[i].weight(), ql[i].weight()
        assert wl.qscheme() is tl.per_channel_affine and wl.q_per_channel_axis() == 0
        np.testing.assert_array_equal(wl.int_repr().numpy(), wt.int_repr().numpy())
        np.testing.assert_array_equal(wl.q_per_channel_scales().numpy(),
                                      wt.q_per_channel_scales().numpy())
        np.testing.assert_array_equal(wl.q_per_channel_zero_points().numpy(),
                                      wt.q_per_channel_zero_points().numpy())
    x = torch.randn(batch, 70) * 2
    ours, ref = ql(tl.tensor(x.numpy())).numpy(), qt(x).detach().numpy()
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5)
    assert np.abs(ours - mt(x).detach().numpy()).max() < 0.1       # near the float model
    # each output channel's weights round to its own step: within half of it
    w = ml[0].weight.detach().numpy()
    deq = ql[0].weight().dequantize().numpy()
    steps = ql[0].weight().q_per_channel_scales().numpy()[:, None]
    assert (np.abs(deq - w) <= steps * 0.501).all()     # the top end clips at 127


def test_state_dict_round_trip_into_a_per_tensor_module():
    ml = nn.Sequential(nn.Linear(9, 6), nn.ReLU(), nn.Linear(6, 3))
    spec = {nn.Linear: tl.ao.quantization.per_channel_dynamic_qconfig}
    q1 = tl.ao.quantization.quantize_dynamic(ml, spec)
    q2 = tl.ao.quantization.quantize_dynamic(
        nn.Sequential(nn.Linear(9, 6), nn.ReLU(), nn.Linear(6, 3)), {nn.Linear})
    state = q1.state_dict()
    assert tuple(state["0._packed_params.weight_scale"].shape) == (6,)
    q2.load_state_dict(state)
    assert q2[0].weight().qscheme() is tl.per_channel_affine
    x = tl.randn(4, 9)
    np.testing.assert_array_equal(q1(x).numpy(), q2(x).numpy())


def test_per_channel_without_onednn_is_the_same():
    from tensorlib_cpu import onednn
    ml = nn.Sequential(nn.Linear(130, 21))
    q = tl.ao.quantization.quantize_dynamic(
        ml, {nn.Linear: tl.ao.quantization.per_channel_dynamic_qconfig})
    x = tl.randn(17, 130) * 4
    with_dnnl = q(x).numpy()
    was = onednn.library() is not None
    onednn.use(False)
    try:
        without = q(x).numpy()
    finally:
        onednn.use(was)
    np.testing.assert_array_equal(with_dnnl, without)


def test_asymmetric_per_channel_weights_are_refused():
    from tensorlib.ao.nn.quantized.dynamic import Linear
    w = tl.quantize_per_channel(tl.randn(3, 4), tl.tensor([0.1, 0.2, 0.3]), tl.tensor([0, 1, 0]),
                                0, tl.qint8)
    with pytest.raises(RuntimeError, match="zero points 0"):
        Linear(4, 3).set_weight_bias(w, None)


def test_lstm_matches_torch():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", message=".*deprecated.*")
    torch.manual_seed(0)
    mt = torch.nn.LSTM(6, 5, num_layers=2, bidirectional=True)
    ml = nn.LSTM(6, 5, num_layers=2, bidirectional=True)
    ml.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in mt.state_dict().items()})
    spec = {torch.nn.LSTM: torch.ao.quantization.per_channel_dynamic_qconfig}
    qt = torch.ao.quantization.quantize_dynamic(torch.nn.Sequential(mt), spec)[0]
    ql = tl.ao.quantization.quantize_dynamic(
        nn.Sequential(ml), {nn.LSTM: tl.ao.quantization.per_channel_dynamic_qconfig})[0]
    for name, w in qt.get_weight().items():
        mine = ql.get_weight()[name]
        assert mine.qscheme() is tl.per_channel_affine
        np.testing.assert_array_equal(mine.int_repr().numpy(), w.int_repr().numpy())
        np.testing.assert_array_equal(mine.q_per_channel_scales().numpy(),
                                      w.q_per_channel_scales().numpy())
    x = np.random.default_rng(1).standard_normal((7, 3, 6)).astype(np.float32)
    out, (h, c) = ql(tl.tensor(x))
    want, (wh, wc) = qt(torch.tensor(x))
    for a, b in ((out, want), (h, wh), (c, wc)):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    fresh = tl.ao.quantization.quantize_dynamic(
        nn.Sequential(nn.LSTM(6, 5, num_layers=2, bidirectional=True)), {nn.LSTM})[0]
    fresh.load_state_dict(ql.state_dict())
    np.testing.assert_array_equal(fresh(tl.tensor(x))[0].numpy(), out.numpy())
