"""RNN, LSTM and GRU on PackedSequence input against PyTorch with the same weights: the
packed output, h_n/c_n (each sequence's last valid step, in the caller's batch order) and
every gradient, for multi-layer and bidirectional layers, with and without an initial
state, on every device."""
import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
from tensorlib.nn.utils import rnn

torch = pytest.importorskip("torch")
trnn = torch.nn.utils.rnn

RNG = np.random.default_rng(11)


def npy(t):
    return t.detach().cpu().numpy()


def copy_weights(tm, m, device):
    m.load_state_dict({k: tensorlib.tensor(v.detach().numpy())
                       for k, v in tm.state_dict().items()})
    m.to(device)


def combine(hidden):
    """One flat tensor from h_n or (h_n, c_n), so both are checked."""
    if isinstance(hidden, tuple):
        lib = torch if isinstance(hidden[0], torch.Tensor) else tensorlib
        return lib.cat([hidden[0].reshape(-1), hidden[1].reshape(-1) * 3])
    return hidden


@pytest.mark.parametrize("mode, kwargs", [
    ("RNN", dict(num_layers=2, bidirectional=True)),
    ("RNN", dict(nonlinearity="relu", batch_first=True)),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(proj_size=2)),
    ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True)),
])
@pytest.mark.parametrize("with_hx", [False, True])
def test_packed_input_matches_torch(device, mode, kwargs, with_hx):
    torch.manual_seed(0)
    tm = getattr(torch.nn, mode)(3, 4, **kwargs).double()
    m = getattr(nn, mode)(3, 4, **kwargs).double()
    copy_weights(tm, m, device)
    batch_first = kwargs.get("batch_first", False)
    lengths = [3, 5, 1, 4]
    x = RNG.standard_normal((4, 5, 3) if batch_first else (5, 4, 3))
    tx = torch.tensor(x, requires_grad=True)
    xx = tensorlib.tensor(x, device=device, requires_grad=True)
    hx = thx = None
    if with_hx:
        layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
        h = RNG.standard_normal((layers, 4, kwargs.get("proj_size") or 4))
        thx = torch.tensor(h, requires_grad=True)
        hx = tensorlib.tensor(h, device=device, requires_grad=True)
        if mode == "LSTM":
            c = RNG.standard_normal((layers, 4, 4))
            thx, hx = (thx, torch.tensor(c)), (hx, tensorlib.tensor(c, device=device))
    tout, thidden = tm(trnn.pack_padded_sequence(tx, lengths, batch_first=batch_first,
                                                 enforce_sorted=False), thx)
    out, hidden = m(rnn.pack_padded_sequence(xx, lengths, batch_first=batch_first,
                                             enforce_sorted=False), hx)
    assert isinstance(out, rnn.PackedSequence)
    np.testing.assert_allclose(npy(out.data), tout.data.detach().numpy(), rtol=1e-7,
                               atol=1e-9)
    np.testing.assert_array_equal(npy(out.sorted_indices), tout.sorted_indices.numpy())
    assert isinstance(hidden, tuple) == isinstance(thidden, tuple)
    np.testing.assert_allclose(npy(combine(hidden)), combine(thidden).detach().numpy(),
                               rtol=1e-7, atol=1e-9)

    tpad = trnn.pad_packed_sequence(tout, batch_first=batch_first)[0]
    pad = rnn.pad_packed_sequence(out, batch_first=batch_first)[0]
    ((tpad ** 2).sum() + (combine(thidden) ** 3).sum()).backward()
    ((pad ** 2).sum() + (combine(hidden) ** 3).sum()).backward()
    np.testing.assert_allclose(npy(xx.grad), tx.grad.numpy(), rtol=1e-7, atol=1e-9)
    if with_hx:
        h, th = (hx[0], thx[0]) if mode == "LSTM" else (hx, thx)
        np.testing.assert_allclose(npy(h.grad), th.grad.numpy(), rtol=1e-7, atol=1e-9)
    for name, p in tm.named_parameters():
        np.testing.assert_allclose(npy(getattr(m, name).grad), p.grad.numpy(), rtol=1e-7,
                                   atol=1e-9, err_msg=name)


def test_packed_sorted_input_and_errors():
    torch.manual_seed(0)
    tm, m = torch.nn.GRU(2, 3).double(), nn.GRU(2, 3).double()
    copy_weights(tm, m, "cpu")
    x = RNG.standard_normal((3, 2, 2))
    out, h = m(rnn.pack_padded_sequence(tensorlib.tensor(x), [3, 2]))
    tout, th = tm(trnn.pack_padded_sequence(torch.tensor(x), [3, 2]))
    assert out.sorted_indices is None
    np.testing.assert_allclose(npy(h), th.detach().numpy(), rtol=1e-9)
    packed = rnn.pack_padded_sequence(tensorlib.tensor(x), [3, 2])
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 3\), got \[1, 3, 3\]"):
        m(packed, tensorlib.zeros(1, 3, 3, dtype=tensorlib.float64))
    with pytest.raises(RuntimeError, match="hx should also be 3-D but got 2-D"):
        m(packed, tensorlib.zeros(2, 3, dtype=tensorlib.float64))
