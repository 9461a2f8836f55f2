"""The dynamically quantized LSTM against PyTorch's: the same float LSTM quantized by both
gives the same int8 weights and the same outputs and states (fbgemm's per-sequence input
projection and per-step hidden projection) within float rounding; state_dict round trips;
PyTorch's errors."""
import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.ao.nn.quantized import dynamic as nnqd

CONFIGS = [dict(), dict(num_layers=2, bidirectional=True, batch_first=True),
           dict(num_layers=3, dropout=0.25), dict(bidirectional=True)]


def _pair(torch, config):
    torch.manual_seed(0)
    mt = torch.nn.LSTM(6, 5, **config)
    ml = nn.LSTM(6, 5, **config)
    ml.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in mt.state_dict().items()})
    warnings.filterwarnings("ignore", message=".*deprecated.*")
    qt = torch.ao.quantization.quantize_dynamic(torch.nn.Sequential(mt), {torch.nn.LSTM},
                                                dtype=torch.qint8)[0]
    ql = tl.ao.quantization.quantize_dynamic(nn.Sequential(ml), {nn.LSTM})[0]
    return mt, qt, ql


def _close(ours, theirs):
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("config", CONFIGS)
def test_weights_outputs_and_states_match_torch(config):
    torch = pytest.importorskip("torch")
    mt, qt, ql = _pair(torch, config)
    assert isinstance(ql, nnqd.LSTM) and repr(ql) == repr(qt)
    for name, w in qt.get_weight().items():
        mine = ql.get_weight()[name]
        assert mine.q_scale() == pytest.approx(w.q_scale(), rel=1e-12)
        np.testing.assert_array_equal(mine.int_repr().numpy(), w.int_repr().numpy())
    shape = (4, 9, 6) if config.get("batch_first") else (9, 4, 6)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    out, (h, c) = ql(tl.tensor(x))
    want, (wh, wc) = qt(torch.tensor(x))
    _close(out, want)
    _close(h, wh)
    _close(c, wc)
    float_out = mt(torch.tensor(x))[0].detach().numpy()
    assert np.abs(out.numpy() - float_out).max() < 0.1       # near the float model


def test_given_state_matches_torch():
    torch = pytest.importorskip("torch")
    _, qt, ql = _pair(torch, dict(num_layers=2))
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 3, 6)).astype(np.float32)
    h0, c0 = (rng.standard_normal((2, 3, 5)).astype(np.float32) for _ in range(2))
    out, (h, c) = ql(tl.tensor(x), (tl.tensor(h0), tl.tensor(c0)))
    want, (wh, wc) = qt(torch.tensor(x), (torch.tensor(h0), torch.tensor(c0)))
    _close(out, want)
    _close(h, wh)
    _close(c, wc)


def test_state_dict_round_trip():
    torch = pytest.importorskip("torch")
    _, _, ql = _pair(torch, dict(bidirectional=True))
    fresh = tl.ao.quantization.quantize_dynamic(nn.Sequential(nn.LSTM(6, 5, bidirectional=True)),
                                                {nn.LSTM})[0]
    fresh.load_state_dict(ql.state_dict())
    x = tl.randn(4, 2, 6)
    np.testing.assert_array_equal(fresh(x)[0].numpy(), ql(x)[0].numpy())


def test_default_spec_quantizes_linear_and_lstm():
    model = nn.Sequential(nn.LSTM(3, 4), nn.Linear(4, 2))
    q = tl.ao.quantization.quantize_dynamic(model)
    assert isinstance(q[0], nnqd.LSTM) and isinstance(q[1], nnqd.Linear)
    assert isinstance(model[0], nn.LSTM)                      # the original is untouched


def test_errors_as_torch():
    with pytest.raises(AssertionError, match="bias must be True"):
        tl.ao.quantization.quantize_dynamic(nn.Sequential(nn.LSTM(3, 4, bias=False)), {nn.LSTM})
    ql = tl.ao.quantization.quantize_dynamic(nn.Sequential(nn.LSTM(3, 4)), {nn.LSTM})[0]
    with pytest.raises(RuntimeError, match="input must have 3 dimensions, got 2"):
        ql(tl.randn(5, 3))
    with pytest.raises(RuntimeError, match="input_size"):
        ql(tl.randn(5, 2, 7))
    with pytest.raises(RuntimeError, match="hidden size"):
        ql(tl.randn(5, 2, 3), (tl.zeros(1, 3, 4), tl.zeros(1, 3, 4)))
    packed = nn.utils.rnn.pack_padded_sequence(tl.randn(5, 2, 3), [5, 3])
    with pytest.raises(NotImplementedError, match="PackedSequence"):
        ql(packed)
    with pytest.raises(ValueError, match="Unsupported dtype"):
        nnqd.LSTM(3, 4, dtype=tl.quint8)
