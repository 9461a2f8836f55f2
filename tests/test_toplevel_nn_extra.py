"""The top-level nn natives in their native signatures against torch: values (and tuples'
parts), gradients where they have them, the int reductions, on every test device."""
import numpy as np
import pytest

import tensorlib

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def arr(*shape, positive=False):
    a = RNG.standard_normal(shape)
    return np.abs(a) + 0.1 if positive else a


# how many leading arguments take a gradient in torch (the rest: weights, running stats)
GRAD_ARGS = {"binary_cross_entropy_with_logits": 1, "batch_norm": 3, "native_batch_norm": 3}


def _run(name, arrays, extra, device, lib, grad=True):
    kw = {} if lib is torch else {"device": device}
    graded = GRAD_ARGS.get(name, len(arrays))
    tensors = [lib.tensor(a, requires_grad=grad and i < graded and
                          np.issubdtype(np.asarray(a).dtype, np.floating), **kw)
               if isinstance(a, np.ndarray) else a for i, a in enumerate(arrays)]
    out = getattr(lib, name)(*tensors, *extra)
    outs = out if isinstance(out, tuple) else (out,)
    first = outs[0]
    if grad and first.requires_grad:
        (first.double() * first.double()).sum().backward()
    grads = [t.grad for t in tensors if hasattr(t, "grad") and t.grad is not None]
    return [o.detach().cpu().numpy() for o in outs], [g.cpu().numpy() for g in grads]


def _compare(name, arrays, extra, device, grad=True, rtol=1e-8):
    ours = _run(name, arrays, extra, device, tensorlib, grad)
    want = _run(name, arrays, extra, device, torch, grad)
    assert len(ours[0]) == len(want[0]) and len(ours[1]) == len(want[1]), name
    for a, b in zip(ours[0] + ours[1], want[0] + want[1]):
        assert a.shape == b.shape, name
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-10, err_msg=name)


x4 = arr(2, 3, 4, 5)
target01 = RNG.uniform(0, 1, (3, 4))
sign = np.sign(arr(5)) + (np.sign(arr(5)) == 0)

CASES = [
    ("kl_div", [arr(3, 4), arr(3, 4)], (1,)), ("kl_div", [arr(3, 4), arr(3, 4)], (2,)),
    ("kl_div", [arr(3, 4), arr(3, 4)], (0,)),
    ("binary_cross_entropy_with_logits", [arr(3, 4), target01, arr(4, positive=True),
                                          arr(4, positive=True)], (1,)),
    ("cosine_embedding_loss", [arr(5, 3), arr(5, 3), sign], (0.1, 2)),
    ("hinge_embedding_loss", [arr(5), sign], (0.5, 1)),
    ("margin_ranking_loss", [arr(5), arr(5), sign], (0.2, 0)),
    ("poisson_nll_loss", [arr(3, 4), arr(3, 4, positive=True)], (True, False, 1e-8, 1)),
    ("poisson_nll_loss", [arr(3, 4, positive=True), arr(3, 4, positive=True)],
     (False, True, 1e-8, 2)),
    ("triplet_margin_loss", [arr(4, 3), arr(4, 3), arr(4, 3)], (1.0, 2, 1e-6, True, 1)),
    ("batch_norm", [x4, arr(3), arr(3), np.zeros(3), np.ones(3)], (True, 0.1, 1e-5, False)),
    ("instance_norm", [x4, arr(3), arr(3), None, None], (True, 0.1, 1e-5, False)),
    ("native_layer_norm", [x4, [4, 5], arr(4, 5), arr(4, 5)], (1e-5,)),
    ("native_batch_norm", [x4, arr(3), arr(3), np.zeros(3), np.ones(3)], (True, 0.1, 1e-5)),
    ("native_group_norm", [arr(2, 6, 5), arr(6), arr(6), 2, 6, 5, 3], (1e-5,)),
    ("norm_except_dim", [arr(4, 3, 2)], (2, 0)), ("norm_except_dim", [arr(4, 3, 2)], (3, 1)),
    ("norm_except_dim", [arr(4, 3)], (2, -1)),
    ("channel_shuffle", [arr(2, 6, 3)], (3,)), ("native_channel_shuffle", [arr(2, 6, 3)], (2,)),
    ("convolution", [arr(2, 4, 6), arr(6, 2, 3), arr(6)], ((1,), (1,), (1,), False, (0,), 2)),
    ("convolution", [arr(1, 2, 4, 4), arr(2, 3, 3, 3), arr(3)],
     ((2, 2), (1, 1), (1, 1), True, (1, 1), 1)),
    ("conv_tbc", [arr(7, 2, 3), arr(3, 3, 4), arr(4)], (1,)),
    ("grid_sampler", [arr(1, 2, 4, 4), RNG.uniform(-1, 1, (1, 3, 3, 2))], (0, 1, False)),
    ("grid_sampler", [arr(1, 2, 4, 4), RNG.uniform(-1, 1, (1, 3, 3, 2))], (1, 0, True)),
    ("affine_grid_generator", [arr(2, 2, 3)], ((2, 1, 3, 4), False)),
    ("adaptive_max_pool1d", [arr(2, 3, 7)], ((3,),)),
    ("max_pool1d_with_indices", [arr(2, 3, 9)], ((3,), (2,), (1,), (1,), True)),
    ("rnn_tanh_cell", [arr(3, 4), arr(3, 5), arr(5, 4), arr(5, 5), arr(5), arr(5)], ()),
    ("rnn_relu_cell", [arr(3, 4), arr(3, 5), arr(5, 4), arr(5, 5)], ()),
    ("gru_cell", [arr(3, 4), arr(3, 5), arr(15, 4), arr(15, 5), arr(15), arr(15)], ()),
]


@pytest.mark.parametrize("name,arrays,extra", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(device, name, arrays, extra):
    # torch has no derivative of native_channel_shuffle (tensorlib's is channel_shuffle's)
    _compare(name, arrays, extra, device, grad=name != "native_channel_shuffle")


def test_embedding_weight_first(device):
    w = arr(6, 3)
    idx = np.array([[0, 2], [5, 2]])
    for padding in (-1, 2):
        ours = tensorlib.embedding(tensorlib.tensor(w, device=device),
                                   tensorlib.tensor(idx, device=device), padding)
        want = torch.embedding(torch.tensor(w), torch.tensor(idx), padding)
        np.testing.assert_array_equal(ours.cpu().numpy(), want.numpy())


def test_lstm_cell(device):
    parts = [arr(3, 4), arr(3, 5), arr(3, 5), arr(20, 4), arr(20, 5), arr(20), arr(20)]
    ours = tensorlib.lstm_cell(tensorlib.tensor(parts[0], device=device),
                               (tensorlib.tensor(parts[1], device=device),
                                tensorlib.tensor(parts[2], device=device)),
                               *[tensorlib.tensor(p, device=device) for p in parts[3:]])
    want = torch.lstm_cell(torch.tensor(parts[0]), (torch.tensor(parts[1]), torch.tensor(parts[2])),
                           *[torch.tensor(p) for p in parts[3:]])
    for a, b in zip(ours, want):
        np.testing.assert_allclose(a.cpu().numpy(), b.numpy(), rtol=1e-10)


def test_native_batch_norm_eval_and_dropouts(device):
    x = tensorlib.tensor(x4, device=device)
    stats = (tensorlib.zeros(3, dtype=tensorlib.float64, device=device),
             tensorlib.ones(3, dtype=tensorlib.float64, device=device))
    out, mean, invstd = tensorlib.native_batch_norm(x, None, None, *stats, False, 0.1, 1e-5)
    want = torch.native_batch_norm(torch.tensor(x4), None, None,
                                   torch.zeros(3, dtype=torch.float64),
                                   torch.ones(3, dtype=torch.float64), False, 0.1, 1e-5)
    np.testing.assert_allclose(out.cpu().numpy(), want[0].numpy(), rtol=1e-10)
    assert tuple(mean.shape) == tuple(want[1].shape) and tuple(invstd.shape) == tuple(want[2].shape)
    y = tensorlib.ones(2000, device=device)
    dropped, mask = tensorlib.native_dropout(y, 0.25, True)
    assert mask.dtype is tensorlib.bool and abs(mask.float().mean().item() - 0.75) < 0.05
    values = dropped.unique().tolist()
    assert len(values) == 2 and values[0] == 0 and abs(values[1] - 1 / 0.75) < 1e-6
    kept, mask = tensorlib.native_dropout(y, 0.25, False)
    assert tensorlib.equal(kept, y) and bool(mask.all())
    f = tensorlib.feature_dropout(tensorlib.ones(50, 40, 3, device=device), 0.5, True)
    per_channel = f.amax(-1) - f.amin(-1)
    assert per_channel.abs().max().item() == 0       # whole channels kept or dropped
    assert set(f.unique().tolist()) <= {0.0, 2.0}
    assert tensorlib.feature_dropout(y, 0.5, False) is y
    r = tensorlib.rrelu(tensorlib.tensor([-1.0, 2.0], device=device))
    assert r.tolist() == torch.rrelu(torch.tensor([-1.0, 2.0])).tolist()


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_ctc_loss(device, reduction):
    """Gradients compared through log_softmax, as programs compute them (torch's gradient
    with respect to the log-probabilities themselves assumes they are normalised)."""
    logits = RNG.standard_normal((6, 2, 4))
    targets, lengths, target_lengths = np.array([[1, 2, 2], [3, 1, 0]]), [6, 5], [3, 2]
    ours_in = tensorlib.tensor(logits, device=device, requires_grad=True)
    want_in = torch.tensor(logits, requires_grad=True)
    ours = tensorlib.ctc_loss(ours_in.log_softmax(-1), tensorlib.tensor(targets, device=device),
                              lengths, target_lengths, 0, reduction)
    want = torch.ctc_loss(want_in.log_softmax(-1), torch.tensor(targets), lengths,
                          target_lengths, 0, reduction)
    np.testing.assert_allclose(ours.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-8)
    ours.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(ours_in.grad.cpu().numpy(), want_in.grad.numpy(), rtol=1e-7,
                               atol=1e-10)


def test_int_reduction_is_checked():
    with pytest.raises(ValueError):
        tensorlib.kl_div(tensorlib.ones(2), tensorlib.ones(2), 5)


@pytest.mark.parametrize("name,arrays", [
    ("kl_div", [arr(3, 4), arr(3, 4, positive=True)]),
    ("binary_cross_entropy_with_logits", [arr(3, 4), arr(3, 4, positive=True)]),
    ("cosine_embedding_loss", [arr(3, 4), arr(3, 4), np.array([1.0, -1.0, 1.0])]),
    ("hinge_embedding_loss", [arr(3, 4), np.sign(arr(3, 4))]),
    ("margin_ranking_loss", [arr(3, 4), arr(3, 4), np.sign(arr(3, 4))]),
    ("triplet_margin_loss", [arr(3, 4), arr(3, 4), arr(3, 4)])])
def test_left_out_reduction_is_none_as_in_torch(name, arrays):
    """PyTorch's binding reads the natives' `reduction=Mean` default as 0: leaving it out
    gives the unreduced loss (an Inception Score written with torch.kl_div relies on it)."""
    ours = getattr(tensorlib, name)(*[tensorlib.tensor(a) for a in arrays])
    want = getattr(torch, name)(*[torch.tensor(a) for a in arrays])
    assert tuple(ours.shape) == tuple(want.shape) and want.dim() > 0
    np.testing.assert_allclose(ours.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
