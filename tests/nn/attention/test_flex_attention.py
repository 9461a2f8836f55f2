"""tensorlib.nn.attention.flex_attention against PyTorch's: outputs and lse against torch's
eager flex_attention (CPU, forward only: torch has no flex backward on the CPU), gradients
(through score_mod's captured bias too) against an explicit masked softmax in torch, the
BlockMask tables field by field, the mask combinators, errors; per device."""
import warnings

import numpy as np
import pytest

import tensorlib
from tensorlib.autograd import gradcheck
from tensorlib.nn.attention import flex_attention as lfa

torch = pytest.importorskip("torch")
tfa = pytest.importorskip("torch.nn.attention.flex_attention")

RNG = np.random.default_rng(3)
TOL = dict(rtol=1e-9, atol=1e-10)
FIELDS = ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
          "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices")


@pytest.fixture(autouse=True)
def _quiet_torch():
    with warnings.catch_warnings():     # torch's "called without torch.compile()" notes
        warnings.simplefilter("ignore")
        yield


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def window(b, h, q_idx, kv_idx):
    return kv_idx >= q_idx - 20


def even_heads_see_even_keys(b, h, q_idx, kv_idx):
    return ((h + kv_idx) % 2 == 0) | (b == 1)


def npy(t):
    return t.detach().cpu().numpy()


def inputs(device, B=2, Hq=4, Hkv=2, L=70, S=90, E=8, Ev=6):
    arrays = [RNG.standard_normal(s) for s in [(B, Hq, L, E), (B, Hkv, S, E), (B, Hkv, S, Ev)]]
    return arrays, [tensorlib.tensor(a, device=device, requires_grad=True) for a in arrays]


MASKS = {"causal": (causal, causal), "and": (tfa.and_masks(causal, window),
                                               lfa.and_masks(causal, window)),
         "or": (tfa.or_masks(causal, even_heads_see_even_keys),
                lfa.or_masks(causal, even_heads_see_even_keys))}


@pytest.mark.parametrize("name", list(MASKS))
def test_block_mask_tables_match_torch(name):
    tm, lm = MASKS[name]
    H = 1 if name != "or" else 4
    tbm = tfa.create_block_mask(tm, 2, H, 70, 90, device="cpu", BLOCK_SIZE=16)
    lbm = lfa.create_block_mask(lm, 2, H, 70, 90, device="cpu", BLOCK_SIZE=16)
    for field in FIELDS:
        np.testing.assert_array_equal(npy(getattr(lbm, field)),
                                      getattr(tbm, field).numpy(), err_msg=field)
    np.testing.assert_array_equal(npy(lbm.to_dense()), tbm.to_dense().numpy())
    assert lbm.to_dense().dtype == tensorlib.int32
    assert lbm.shape == tbm.shape == (2, H, 70, 90) and lbm.BLOCK_SIZE == (16, 16)
    text = repr(lbm)
    assert text.startswith("BlockMask(") and "shape=(2, " in text and "sparsity=" in text
    assert (0.0 < lbm.sparsity() < 100.0) if name != "or" else lbm.sparsity() == 0.0


def test_create_mask_and_combinators_match_torch():
    def bias(score, b, h, q_idx, kv_idx):
        return torch.where(q_idx > kv_idx + 3, float("-inf"), score) if isinstance(
            score, torch.Tensor) else tensorlib.where(q_idx > kv_idx + 3, float("-inf"), score)
    for tm, lm in [(causal, causal), (bias, bias), (tfa.noop_mask, lfa.noop_mask),
                   MASKS["or"]]:
        np.testing.assert_array_equal(npy(lfa.create_mask(lm, 2, 3, 9, 11)),
                                      tfa.create_mask(tm, 2, 3, 9, 11).numpy())
    assert tuple(lfa.create_mask(causal, None, None, 4, 5).shape) == (1, 1, 4, 5)
    with pytest.raises(RuntimeError, match="callable"):
        lfa.and_masks(causal, 3)


def _torch_reference(arrays, bias=None, mask=None, scale=None, gqa=2):
    """softmax(q k^T * scale + bias, masked) v in torch, every row with a key."""
    q, k, v = (torch.tensor(a, requires_grad=True) for a in arrays)
    kr, vr = k.repeat_interleave(gqa, 1), v.repeat_interleave(gqa, 1)
    scores = q @ kr.transpose(-2, -1) * (scale or q.shape[-1] ** -0.5)
    if bias is not None:
        scores = scores + bias
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return (q, k, v), torch.softmax(scores, -1) @ vr


@pytest.mark.parametrize("name", list(MASKS))
def test_forward_and_lse_match_torch_flex(name, device):
    tm, lm = MASKS[name]
    arrays, (q, k, v) = inputs(device)
    bias = RNG.standard_normal((4, 70, 90))
    tb, lb = torch.tensor(bias), tensorlib.tensor(bias, device=device)
    tbm = tfa.create_block_mask(tm, 2, 4, 70, 90, device="cpu", BLOCK_SIZE=32)
    lbm = lfa.create_block_mask(lm, 2, 4, 70, 90, device=device, BLOCK_SIZE=32)
    tq, tk, tv = (torch.tensor(a) for a in arrays)
    out_t, lse_t = tfa.flex_attention(tq, tk, tv, score_mod=lambda s, b, h, i, j: s + tb[h, i, j],
                                      block_mask=tbm, enable_gqa=True, return_lse=True)
    out, lse = lfa.flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s + lb[h, i, j],
                                  block_mask=lbm, enable_gqa=True, return_lse=True)
    np.testing.assert_allclose(npy(out), out_t.numpy(), **TOL)
    np.testing.assert_allclose(npy(lse), lse_t.numpy(), **TOL)
    assert out.device.type == device.split(":")[0]


def test_gradients_through_score_mod_bias_and_block_mask(device):
    arrays, (q, k, v) = inputs(device)
    bias = RNG.standard_normal((4, 70, 90))
    tb = torch.tensor(bias, requires_grad=True)
    lb = tensorlib.tensor(bias, device=device, requires_grad=True)
    lbm = lfa.create_block_mask(MASKS["and"][1], 2, 1, 70, 90, device=device, BLOCK_SIZE=16)
    dense = tfa.create_mask(MASKS["and"][0], 2, 1, 70, 90)
    (tq, tk, tv), out_t = _torch_reference(arrays, bias=tb[None], mask=dense)
    out = lfa.flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s + lb[h, i, j],
                             block_mask=lbm, enable_gqa=True)
    np.testing.assert_allclose(npy(out), out_t.detach().numpy(), **TOL)
    g = RNG.standard_normal(tuple(out.shape))
    out_t.backward(torch.tensor(g))
    out.backward(tensorlib.tensor(g, device=device))
    for a, b in ((tq, q), (tk, k), (tv, v), (tb, lb)):
        np.testing.assert_allclose(npy(b.grad), a.grad.numpy(), **TOL)


def test_skipped_blocks_are_never_computed():
    seen = []

    def score_mod(score, b, h, q_idx, kv_idx):
        seen.append((int(q_idx.min().item()), int(kv_idx.max().item())))
        return score
    _, (q, k, v) = inputs("cpu", L=64, S=64)
    lbm = lfa.create_block_mask(causal, None, None, 64, 64, BLOCK_SIZE=16)
    lfa.flex_attention(q, k, v, score_mod=score_mod, block_mask=lbm, enable_gqa=True)
    # query block i (rows 16i..) looks at key blocks 0..i only
    assert seen == [(0, 15), (16, 31), (32, 47), (48, 63)]


def test_rows_without_keys_and_defaults_match_torch():
    arrays, (q, k, v) = inputs("cpu", Hkv=4)
    tq, tk, tv = (torch.tensor(a) for a in arrays)

    def none_for_row_5(b, h, q_idx, kv_idx):
        return q_idx != 5
    tbm = tfa.create_block_mask(none_for_row_5, None, None, 70, 90, device="cpu")
    lbm = lfa.create_block_mask(none_for_row_5, None, None, 70, 90)
    out_t, lse_t = tfa.flex_attention(tq, tk, tv, block_mask=tbm, scale=0.4, return_lse=True)
    out, lse = lfa.flex_attention(q, k, v, block_mask=lbm, scale=0.4, return_lse=True)
    np.testing.assert_allclose(npy(out), out_t.numpy(), **TOL)
    assert (npy(out)[:, :, 5] == 0).all() and np.isneginf(npy(lse)[:, :, 5]).all()
    np.testing.assert_array_equal(np.isneginf(npy(lse)), np.isneginf(lse_t.numpy()))
    plain = lfa.flex_attention(q, k, v)
    np.testing.assert_allclose(npy(plain), tfa.flex_attention(tq, tk, tv).numpy(), **TOL)
    out, aux = lfa.flex_attention(q, k, v, return_aux=lfa.AuxRequest(lse=True,
                                                                     max_scores=True))
    assert aux.lse.shape == aux.max_scores.shape == (2, 4, 70)


def test_gradcheck_learned_bias():
    q, k, v = (tensorlib.tensor(RNG.standard_normal(s), requires_grad=True)
               for s in [(1, 1, 3, 2), (1, 1, 4, 2), (1, 1, 4, 2)])
    bias = tensorlib.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    bm = lfa.create_block_mask(causal, 1, 1, 3, 4, BLOCK_SIZE=2)

    def fn(q, k, v, bias):
        return lfa.flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s + bias[i, j],
                                  block_mask=bm)
    assert gradcheck(fn, (q, k, v, bias))


def test_errors_match_torch():
    _, (q, k, v) = inputs("cpu")
    with pytest.raises(ValueError, match="enable_gqa=True"):
        lfa.flex_attention(q, k, v)
    with pytest.raises(ValueError, match="multiple of kv heads"):
        lfa.flex_attention(q[:, :3], k, v, enable_gqa=True)
    with pytest.raises(NotImplementedError, match="4D"):
        lfa.flex_attention(q[0], k[0], v[0])
    bm = lfa.create_block_mask(causal, 1, 1, 60, 90)
    with pytest.raises(ValueError, match="block_mask was created for"):
        lfa.flex_attention(q, k, v, block_mask=bm, enable_gqa=True)
