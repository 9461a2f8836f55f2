"""Embedding, EmbeddingBag and one_hot: lookups and gradients against PyTorch/numpy, padding_idx
(zero row, no gradient), scale_grad_by_freq, max_norm, from_pretrained, bag modes, offsets,
per_sample_weights, errors, state_dict and repr."""
import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(5)


def t64(a, grad=False):
    return tensorlib.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def th64(a, grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def close(a, b, rtol=1e-12, atol=1e-12):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


# ---- embedding ------------------------------------------------------------------------------
@pytest.mark.parametrize("idx", [np.array(3), np.array([1, 4, 4, 0]),
                                 np.array([[1, 2, 9], [9, 0, 2]])])
def test_embedding_lookup_matches_numpy(idx):
    w = RNG.standard_normal((10, 3))
    out = F.embedding(tensorlib.tensor(idx), t64(w))
    close(out, w[idx])
    assert out.shape == idx.shape + (3,)
    out32 = F.embedding(tensorlib.tensor(idx.astype(np.int32), dtype=tensorlib.int32), t64(w))
    close(out32, w[idx])


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 2}, {"padding_idx": -1},
                                    {"scale_grad_by_freq": True},
                                    {"padding_idx": 0, "scale_grad_by_freq": True}])
def test_embedding_gradient_matches_torch(kwargs):
    w = RNG.standard_normal((6, 4))
    idx = np.array([[0, 2, 2, 5], [1, 2, 0, 0]])
    wm, wr = t64(w, True), th64(w, True)
    out = F.embedding(tensorlib.tensor(idx), wm, **kwargs)
    ref = TF.embedding(torch.tensor(idx), wr, **kwargs)
    close(out, ref)
    g = RNG.standard_normal(idx.shape + (4,))
    (out * t64(g)).sum().backward()
    (ref * th64(g)).sum().backward()
    close(wm.grad, wr.grad)


def test_embedding_module_padding_idx():
    m = nn.Embedding(5, 3, padding_idx=1)
    np.testing.assert_array_equal(m.weight.detach().numpy()[1], np.zeros(3))
    idx = tensorlib.tensor([[1, 2], [1, 4]])
    m(idx).sum().backward()
    np.testing.assert_array_equal(m.weight.grad.numpy()[1], np.zeros(3))
    np.testing.assert_array_equal(m.weight.grad.numpy()[2], np.ones(3))
    assert nn.Embedding(5, 3, padding_idx=-2).padding_idx == 3
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 3, padding_idx=5)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 3, padding_idx=-6)


def test_embedding_gradcheck():
    idx = tensorlib.tensor([[0, 2], [2, 3]])
    w = t64(RNG.standard_normal((4, 3)), True)
    assert gradcheck(lambda w: F.embedding(idx, w), (w,))
    assert gradcheck(lambda w: F.embedding(idx, w, max_norm=100.0), (w,))
    # padding_idx / scale_grad_by_freq change the gradient on purpose (not a derivative):
    # they are checked against PyTorch in test_embedding_gradient_matches_torch


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0])
def test_embedding_max_norm_renormalizes_in_place(norm_type):
    w = RNG.standard_normal((6, 4)) * 3
    idx = np.array([0, 3, 3, 5])
    wm, wr = t64(w), th64(w)
    out = F.embedding(tensorlib.tensor(idx), wm, max_norm=1.5, norm_type=norm_type)
    ref = TF.embedding(torch.tensor(idx), wr, max_norm=1.5, norm_type=norm_type)
    close(out, ref)
    close(wm, wr)
    assert np.array_equal(wm.numpy()[1], w[1])      # rows not looked up are untouched
    m = nn.Embedding(6, 4, max_norm=1.0)
    m(tensorlib.tensor([1, 2])).sum().backward()
    norms = np.linalg.norm(m.weight.detach().numpy()[[1, 2]], axis=1)
    assert np.all(norms <= 1.0 + 1e-6)


def test_embedding_from_pretrained():
    w = RNG.standard_normal((4, 2))
    m = nn.Embedding.from_pretrained(t64(w))
    assert not m.weight.requires_grad
    close(m(tensorlib.tensor([3, 0])), w[[3, 0]])
    m2 = nn.Embedding.from_pretrained(t64(w), freeze=False, padding_idx=1)
    assert m2.weight.requires_grad and m2.padding_idx == 1
    close(m2.weight, w)                # from_pretrained does not zero the padding row
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.Embedding.from_pretrained(t64(w[0]))
    b = nn.EmbeddingBag.from_pretrained(t64(w), mode="sum")
    assert not b.weight.requires_grad
    close(b(tensorlib.tensor([[0, 1]])), w[[0]] + w[[1]])


def test_embedding_errors():
    w = t64(RNG.standard_normal((10, 3)))
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have "
                                           "one of the following scalar types: Long, Int"):
        F.embedding(tensorlib.tensor([1.0, 2.0]), w)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(tensorlib.tensor([1, 11]), w)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(tensorlib.tensor([-1]), w)
    with pytest.raises(NotImplementedError, match="sparse"):
        nn.Embedding(3, 2, sparse=True)


def test_embedding_state_dict_and_repr():
    pairs = [(nn.Embedding(10, 3), torch.nn.Embedding(10, 3)),
             (nn.Embedding(10, 3, padding_idx=0, max_norm=2.0, norm_type=1.0,
                           scale_grad_by_freq=True),
              torch.nn.Embedding(10, 3, padding_idx=0, max_norm=2.0, norm_type=1.0,
                                 scale_grad_by_freq=True)),
             (nn.EmbeddingBag(10, 3), torch.nn.EmbeddingBag(10, 3)),
             (nn.EmbeddingBag(10, 3, mode="max", padding_idx=2, max_norm=1.0),
              torch.nn.EmbeddingBag(10, 3, mode="max", padding_idx=2, max_norm=1.0))]
    for mine, ref in pairs:
        assert repr(mine) == repr(ref)
        assert list(mine.state_dict()) == list(ref.state_dict()) == ["weight"]
    w = nn.Embedding(1000, 8).weight.detach().numpy()
    assert abs(w.mean()) < 0.05 and abs(w.std() - 1) < 0.05      # N(0, 1) init


# ---- embedding_bag --------------------------------------------------------------------------
BAG_CASES = [
    # (input, offsets, include_last_offset)
    (np.array([[0, 2, 5], [4, 4, 1]]), None, False),
    (np.array([0, 2, 5, 4, 4, 1, 3]), np.array([0, 2, 2, 6]), False),     # an empty bag
    (np.array([0, 2, 5, 4, 4, 1, 3]), np.array([0, 3, 5, 7]), True),
    (np.array([1, 1, 1]), np.array([0]), False),
]


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("case", range(len(BAG_CASES)))
@pytest.mark.parametrize("padding_idx", [None, 4])
def test_embedding_bag_matches_torch(mode, case, padding_idx):
    inp, offsets, last = BAG_CASES[case]
    w = RNG.standard_normal((6, 3))
    wm, wr = t64(w, True), th64(w, True)
    out = F.embedding_bag(tensorlib.tensor(inp), wm,
                          None if offsets is None else tensorlib.tensor(offsets), mode=mode,
                          include_last_offset=last, padding_idx=padding_idx)
    ref = TF.embedding_bag(torch.tensor(inp), wr,
                           None if offsets is None else torch.tensor(offsets), mode=mode,
                           include_last_offset=last, padding_idx=padding_idx)
    close(out, ref)
    g = RNG.standard_normal(tuple(ref.shape))
    (out * t64(g)).sum().backward()
    (ref * th64(g)).sum().backward()
    close(wm.grad, wr.grad)


@pytest.mark.parametrize("case", range(len(BAG_CASES)))
def test_embedding_bag_per_sample_weights(case):
    inp, offsets, last = BAG_CASES[case]
    w = RNG.standard_normal((6, 3))
    psw = RNG.uniform(0.5, 2, inp.shape)
    wm, wr, pm, pr = t64(w, True), th64(w, True), t64(psw, True), th64(psw, True)
    out = F.embedding_bag(tensorlib.tensor(inp), wm,
                          None if offsets is None else tensorlib.tensor(offsets), mode="sum",
                          per_sample_weights=pm, include_last_offset=last)
    ref = TF.embedding_bag(torch.tensor(inp), wr,
                           None if offsets is None else torch.tensor(offsets), mode="sum",
                           per_sample_weights=pr, include_last_offset=last)
    close(out, ref)
    g = RNG.standard_normal(tuple(ref.shape))
    (out * t64(g)).sum().backward()
    (ref * th64(g)).sum().backward()
    close(wm.grad, wr.grad)
    close(pm.grad, pr.grad)


def test_embedding_bag_gradcheck():
    inp = tensorlib.tensor([0, 2, 3, 2, 1])
    offsets = tensorlib.tensor([0, 2, 2])
    w = t64(RNG.standard_normal((4, 2)), True)
    psw = t64(RNG.uniform(0.5, 2, 5), True)
    for mode in ("sum", "mean", "max"):
        assert gradcheck(lambda w: F.embedding_bag(inp, w, offsets, mode=mode), (w,))
    assert gradcheck(lambda w, p: F.embedding_bag(inp, w, offsets, mode="sum",
                                                  per_sample_weights=p), (w, psw))
    assert gradcheck(lambda w: F.embedding_bag(inp, w, offsets, padding_idx=2), (w,))


def test_embedding_bag_module():
    m = nn.EmbeddingBag(6, 3, mode="sum", padding_idx=0).double()
    np.testing.assert_array_equal(m.weight.detach().numpy()[0], np.zeros(3))
    ref = torch.nn.EmbeddingBag(6, 3, mode="sum", padding_idx=0).double()
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(m.weight.detach().numpy()))
    inp, offsets = np.array([0, 1, 2, 0, 5]), np.array([0, 3])
    psw = RNG.uniform(0, 1, 5)
    close(m(tensorlib.tensor(inp), tensorlib.tensor(offsets), t64(psw)),
          ref(torch.tensor(inp), torch.tensor(offsets), th64(psw)))


def test_embedding_bag_errors():
    w = t64(RNG.standard_normal((5, 2)))
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for "
                                                  "mode='sum' \\(got mode='mean'\\)"):
        F.embedding_bag(tensorlib.tensor([[0, 1]]), w, per_sample_weights=t64([[1.0, 1.0]]))
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(tensorlib.tensor([[0, 1]]), w, tensorlib.tensor([0]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(tensorlib.tensor([0, 1]), w)
    with pytest.raises(ValueError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(tensorlib.tensor([0, 1]), w, tensorlib.tensor([1]))
    with pytest.raises(ValueError, match="input has to be 1D or 2D Tensor"):
        F.embedding_bag(tensorlib.tensor([[[0]]]), w)
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(tensorlib.tensor([[0, 1]]), w, mode="min")
    with pytest.raises(ValueError, match="must have the same shape as the input"):
        F.embedding_bag(tensorlib.tensor([[0, 1]]), w, mode="sum",
                        per_sample_weights=t64([1.0, 1.0]))
    with pytest.raises(RuntimeError, match="Index 1 of input takes value 7 which is not in "
                                           r"the valid range \[0, 5\)"):     # torch's
        F.embedding_bag(tensorlib.tensor([[0, 7]]), w)


# ---- one_hot --------------------------------------------------------------------------------
def test_one_hot_reexport():
    out = F.one_hot(tensorlib.tensor([0, 2, 1]), 4)
    np.testing.assert_array_equal(out.numpy(), np.eye(4, dtype=np.int64)[[0, 2, 1]])
    assert out.dtype == tensorlib.int64
    assert F.one_hot(tensorlib.tensor([[1], [3]])).shape == (2, 1, 4)


def test_embeddings_on_device_match_cpu(device):
    w = RNG.standard_normal((6, 3)).astype(np.float32)
    results = []
    for d in ("cpu", device):
        wt = tensorlib.tensor(w, device=d, requires_grad=True)
        idx = tensorlib.tensor([[0, 2, 2], [5, 1, 0]], device=d)
        out = (F.embedding(idx, wt, padding_idx=0).sum()
               + F.embedding_bag(idx.reshape(-1), wt, tensorlib.tensor([0, 2, 2], device=d),
                                 mode="max").sum()
               + F.embedding_bag(idx, wt, mode="mean", padding_idx=2).sum())
        out.backward()
        results.append((out.item(), wt.grad.cpu().numpy()))
    assert results[0][0] == pytest.approx(results[1][0], rel=1e-5)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5, atol=1e-6)


def test_embedding_out_of_range_and_negative_indices_raise_as_torch():
    torch = pytest.importorskip("torch")
    weight = np.random.default_rng(0).standard_normal((10, 3)).astype(np.float32)
    for bad in ([5, 10], [-1, 3], [[0, 2], [11, 1]]):
        messages = []
        for m in (tensorlib, torch):
            with pytest.raises(IndexError) as info:
                m.nn.functional.embedding(m.tensor(bad), m.from_numpy(weight))
            messages.append(str(info.value))
        assert messages[0] == messages[1]
    ours = tensorlib.nn.functional.embedding(tensorlib.tensor([[9, 0], [3, 3]]),
                                             tensorlib.from_numpy(weight))
    np.testing.assert_array_equal(ours.numpy(), weight[[[9, 0], [3, 3]]])
