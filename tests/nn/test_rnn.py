"""RNN, LSTM, GRU and their cells against PyTorch: torch weights loaded through state_dict,
outputs, final states and every gradient compared in float64, for each configuration
(layers, directions, batch_first, bias, projections, initial states, unbatched input);
gradcheck on the cells; PyTorch's errors."""
import math
import warnings

import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
from tensorlib.autograd import gradcheck

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
TOL = dict(rtol=1e-9, atol=1e-11)


def npy(t):
    return t.detach().numpy()


def pair(shape, requires_grad=True):
    """The same float64 values as a torch tensor and a tensorlib tensor."""
    a = RNG.standard_normal(shape)
    return (torch.tensor(a, requires_grad=requires_grad),
            tensorlib.tensor(a, requires_grad=requires_grad))


def load_from_torch(tm, m):
    assert list(m.state_dict()) == list(tm.state_dict())
    m.load_state_dict({k: tensorlib.tensor(v.detach().numpy())
                       for k, v in tm.state_dict().items()})


def make(cls, *args, **kwargs):
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(*args, **kwargs).double()
    m = getattr(nn, cls)(*args, **kwargs).double()
    load_from_torch(tm, m)
    return tm, m


def assert_close(a, b):
    np.testing.assert_allclose(npy(b), npy(a), **TOL)


def assert_param_grads(tm, m):
    tp = dict(tm.named_parameters())
    for name, p in m.named_parameters():
        assert p.grad is not None, name
        np.testing.assert_allclose(npy(p.grad), npy(tp[name].grad), err_msg=name, **TOL)


# ---- layers --------------------------------------------------------------------------------
CONFIGS = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("RNN", {"bidirectional": True, "batch_first": True}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 3, "num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {"bias": False, "batch_first": True}),
    ("GRU", {}),
    ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("GRU", {"bias": False, "num_layers": 2}),
]


def _ids(c):
    return c[0] + "-" + "-".join(f"{k}={v}" for k, v in c[1].items())


@pytest.mark.parametrize("cls,kwargs", CONFIGS, ids=[_ids(c) for c in CONFIGS])
@pytest.mark.parametrize("with_h0", [False, True])
def test_layer_matches_torch(cls, kwargs, with_h0):
    tm, m = make(cls, 5, 6, **kwargs)
    L, N = 4, 3
    shape = (N, L, 5) if kwargs.get("batch_first") else (L, N, 5)
    x_t, x = pair(shape)
    D = 2 if kwargs.get("bidirectional") else 1
    layers = kwargs.get("num_layers", 1)
    h_out = kwargs.get("proj_size") or 6
    hx_t = hx = None
    if with_h0:
        h0_t, h0 = pair((D * layers, N, h_out))
        if cls == "LSTM":
            c0_t, c0 = pair((D * layers, N, 6))
            hx_t, hx = (h0_t, c0_t), (h0, c0)
        else:
            hx_t, hx = h0_t, h0
    out_t, hid_t = tm(x_t, hx_t)
    out, hid = m(x, hx)
    assert tuple(out.shape) == tuple(out_t.shape)
    assert_close(out_t, out)
    if cls == "LSTM":
        assert isinstance(hid, tuple) and len(hid) == 2
        assert tuple(hid[0].shape) == tuple(hid_t[0].shape)
        assert tuple(hid[1].shape) == tuple(hid_t[1].shape)
        assert_close(hid_t[0], hid[0])
        assert_close(hid_t[1], hid[1])
        loss_t = (out_t * out_t).sum() + hid_t[0].sum() + (hid_t[1] * 2).sum()
        loss = (out * out).sum() + hid[0].sum() + (hid[1] * 2).sum()
    else:
        assert tuple(hid.shape) == tuple(hid_t.shape)
        assert_close(hid_t, hid)
        loss_t = (out_t * out_t).sum() + hid_t.sum()
        loss = (out * out).sum() + hid.sum()
    loss_t.backward()
    loss.backward()
    assert_close(x_t.grad, x.grad)
    if with_h0:
        if cls == "LSTM":
            assert_close(hx_t[0].grad, hx[0].grad)
            assert_close(hx_t[1].grad, hx[1].grad)
        else:
            assert_close(hx_t.grad, hx.grad)
    assert_param_grads(tm, m)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_unbatched_input(cls, batch_first):
    tm, m = make(cls, 3, 4, num_layers=2, bidirectional=True, batch_first=batch_first)
    x_t, x = pair((5, 3))
    if cls == "LSTM":
        h_t, h = pair((4, 4))
        c_t, c = pair((4, 4))
        out_t, (hn_t, cn_t) = tm(x_t, (h_t, c_t))
        out, (hn, cn) = m(x, (h, c))
        assert_close(cn_t, cn)
    else:
        h_t, h = pair((4, 4))
        out_t, hn_t = tm(x_t, h_t)
        out, hn = m(x, h)
    assert tuple(out.shape) == (5, 8) and tuple(hn.shape) == (4, 4)
    assert_close(out_t, out)
    assert_close(hn_t, hn)
    out_t.sum().backward()
    out.sum().backward()
    assert_close(x_t.grad, x.grad)
    assert_close(h_t.grad, h.grad)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_state_dict_keys_and_shapes_match_torch(cls):
    kw = {"proj_size": 2} if cls == "LSTM" else {}
    tm = getattr(torch.nn, cls)(3, 5, num_layers=2, bidirectional=True, **kw)
    m = getattr(nn, cls)(3, 5, num_layers=2, bidirectional=True, **kw)
    sd_t, sd = tm.state_dict(), m.state_dict()
    assert list(sd) == list(sd_t)
    for k in sd:
        assert tuple(sd[k].shape) == tuple(sd_t[k].shape), k
    assert [[n for n in names] for names in m._all_weights] == tm._all_weights
    assert len(m.all_weights) == 4 and m.all_weights[1][0] is m.weight_ih_l0_reverse
    # torch's state_dict loads one to one, and the other way round
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in sd.items()})
    if cls == "LSTM":
        assert "weight_hr_l1_reverse" in sd


def test_lstm_gate_order_is_ifgo():
    """With all weights zero, only the biases set the gates: i, f, g, o in that order."""
    m = nn.LSTM(1, 1).double()
    with tensorlib.no_grad():
        for p in m.parameters():
            p.zero_()
        # i = sigmoid(big) = 1, f = sigmoid(-big) = 0, g = tanh(1), o = sigmoid(big) = 1
        m.bias_ih_l0.copy_(tensorlib.tensor([30.0, -30.0, 1.0, 30.0], dtype=tensorlib.float64))
    out, (h, c) = m(tensorlib.zeros((1, 1, 1), dtype=tensorlib.float64))
    np.testing.assert_allclose(npy(c).ravel(), [math.tanh(1.0)], rtol=1e-12)
    np.testing.assert_allclose(npy(h).ravel(), [math.tanh(math.tanh(1.0))], rtol=1e-12)


def test_default_init_bounds():
    m = nn.GRU(10, 16, num_layers=2)
    bound = 1 / math.sqrt(16)
    for name, p in m.named_parameters():
        a = np.abs(npy(p))
        assert a.max() <= bound and a.max() > 0.5 * bound, name
    c = nn.LSTMCell(4, 9)
    assert np.abs(npy(c.weight_hh)).max() <= 1 / 3


def test_float32_default_dtype_and_extra_repr():
    m = nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True, proj_size=2)
    assert m.weight_ih_l0.dtype == tensorlib.float32
    out, (h, c) = m(tensorlib.randn(2, 5, 3))
    assert tuple(out.shape) == (2, 5, 4) and tuple(h.shape) == (4, 2, 2)
    assert tuple(c.shape) == (4, 2, 4)
    tm = torch.nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True, proj_size=2)
    assert repr(m) == repr(tm)
    assert repr(nn.RNN(2, 3, nonlinearity="relu", dropout=0.5, num_layers=2)) == \
        repr(torch.nn.RNN(2, 3, nonlinearity="relu", dropout=0.5, num_layers=2))


def test_dropout_between_layers():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="non-zero dropout expects num_layers greater"):
            nn.GRU(3, 4, dropout=0.5)
    tm, m = make("LSTM", 3, 4, num_layers=2, dropout=0.5)
    x_t, x = pair((6, 2, 3), requires_grad=False)
    # eval: no dropout, equals torch
    m.eval()
    tm.eval()
    assert_close(tm(x_t)[0], m(x)[0])
    # train: layer 1's input is dropped, so outputs differ run to run and from eval
    m.train()
    tensorlib.manual_seed(0)
    a = npy(m(x)[0])
    b = npy(m(x)[0])
    m.eval()
    c = npy(m(x)[0])
    assert not np.allclose(a, b) and not np.allclose(a, c)
    # dropout=1: layer 2 sees zeros, i.e. the output of a 1-layer LSTM on zeros
    m2 = nn.LSTM(3, 4, num_layers=2, dropout=1.0).double()
    single = nn.LSTM(4, 4).double()
    with tensorlib.no_grad():
        for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(single, n + "_l0").copy_(getattr(m2, n + "_l1"))
    np.testing.assert_allclose(npy(m2(x)[0]), npy(single(tensorlib.zeros((6, 2, 4),
                                                                         dtype=x.dtype))[0]),
                               rtol=1e-12)


def test_rnn_errors_match_torch():
    m = nn.LSTM(3, 4, num_layers=2)
    with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size. "
                                           r"Expected 3, got 5"):
        m(tensorlib.randn(5, 2, 5))
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D"):
        m(tensorlib.randn(4, 5, 2, 3))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(2, 2, 4\), got "
                                           r"\[2, 3, 4\]"):
        m(tensorlib.randn(5, 2, 3), (tensorlib.randn(2, 3, 4), tensorlib.randn(2, 2, 4)))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(2, 2, 4\), got "
                                           r"\[2, 2, 5\]"):
        m(tensorlib.randn(5, 2, 3), (tensorlib.randn(2, 2, 4), tensorlib.randn(2, 2, 5)))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx and cx should also be "
                                           "3-D but got"):
        m(tensorlib.randn(5, 2, 3), (tensorlib.randn(2, 4), tensorlib.randn(2, 4)))
    g = nn.GRU(3, 4)
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[1, 3, 4\]"):
        g(tensorlib.randn(5, 2, 3), tensorlib.randn(1, 3, 4))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D"):
        g(tensorlib.randn(5, 3), tensorlib.randn(1, 1, 4))
    with pytest.raises(ValueError, match="RNN input dtype"):
        g(tensorlib.randn(5, 2, 3, dtype=tensorlib.float64))
    with pytest.raises(ValueError, match="RNN: Expected input to be 2D or 3D"):
        nn.RNN(3, 4)(tensorlib.randn(3))
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sigmoid'"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.RNN(3, 4, dropout=1.5)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.LSTM(3, 0)
    with pytest.raises(ValueError, match="num_layers must be greater than zero"):
        nn.LSTM(3, 2, num_layers=0)


# ---- cells ---------------------------------------------------------------------------------
@pytest.mark.parametrize("cls,kwargs", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                        ("LSTMCell", {}), ("GRUCell", {}),
                                        ("GRUCell", {"bias": False}),
                                        ("LSTMCell", {"bias": False})])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_h0", [True, False])
def test_cell_matches_torch(cls, kwargs, batched, with_h0):
    tm, m = make(cls, 4, 5, **kwargs)
    lead = (3,) if batched else ()
    x_t, x = pair(lead + (4,))
    hx_t = hx = None
    if with_h0:
        h_t, h = pair(lead + (5,))
        if cls == "LSTMCell":
            c_t, c = pair(lead + (5,))
            hx_t, hx = (h_t, c_t), (h, c)
        else:
            hx_t, hx = h_t, h
    out_t, out = tm(x_t, hx_t), m(x, hx)
    if cls == "LSTMCell":
        assert_close(out_t[0], out[0])
        assert_close(out_t[1], out[1])
        (out_t[0].sum() + (out_t[1] * 3).sum()).backward()
        (out[0].sum() + (out[1] * 3).sum()).backward()
    else:
        assert tuple(out.shape) == lead + (5,)
        assert_close(out_t, out)
        (out_t * out_t).sum().backward()
        (out * out).sum().backward()
    assert_close(x_t.grad, x.grad)
    assert_param_grads(tm, m)


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_gradcheck(cls):
    m = getattr(nn, cls)(3, 2).double()
    x = tensorlib.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    h = tensorlib.tensor(RNG.standard_normal((2, 2)), requires_grad=True)
    if cls == "LSTMCell":
        c = tensorlib.tensor(RNG.standard_normal((2, 2)), requires_grad=True)
        params = [m.weight_ih, m.weight_hh, m.bias_ih, m.bias_hh]

        def fn(x, h, c, *ps):
            return tensorlib.stack(m(x, (h, c)))
        assert gradcheck(fn, (x, h, c, *params))
    else:
        params = [m.weight_ih, m.weight_hh, m.bias_ih, m.bias_hh]
        assert gradcheck(lambda x, h, *ps: m(x, h), (x, h, *params))


def test_lstm_layer_gradcheck():
    m = nn.LSTM(2, 3, num_layers=2, bidirectional=True, proj_size=2).double()
    x = tensorlib.tensor(RNG.standard_normal((3, 2, 2)), requires_grad=True)

    def fn(x, *ps):
        out, (h, c) = m(x)
        return out.sum() + (h * h).sum() + c.sum()
    assert gradcheck(fn, (x, m.weight_hr_l1_reverse, m.weight_ih_l1))


def test_cell_errors_match_torch():
    c = nn.LSTMCell(3, 4)
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 5 "
                                           "expected 3"):
        c(tensorlib.randn(2, 5))
    with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden0 batch "
                                           "size 3"):
        c(tensorlib.randn(2, 3), (tensorlib.randn(3, 4), tensorlib.randn(3, 4)))
    with pytest.raises(RuntimeError, match="hidden1 has inconsistent hidden_size: got 5, "
                                           "expected 4"):
        c(tensorlib.randn(2, 3), (tensorlib.randn(2, 4), tensorlib.randn(2, 5)))
    with pytest.raises(ValueError, match="LSTMCell: Expected input to be 1D or 2D, got 3D"):
        c(tensorlib.randn(1, 2, 3))
    with pytest.raises(ValueError, match="GRUCell: Expected hidden to be 1D or 2D, got 3D"):
        nn.GRUCell(3, 4)(tensorlib.randn(2, 3), tensorlib.randn(1, 2, 4))
    with pytest.raises(RuntimeError, match="Unknown nonlinearity: gelu"):
        nn.RNNCell(3, 4, nonlinearity="gelu")(tensorlib.randn(2, 3))
    assert list(nn.RNNCell(3, 4, bias=False).state_dict()) == ["weight_ih", "weight_hh"]
