"""Transformer, TransformerEncoder/Decoder and their layers against PyTorch (torch weights
loaded through state_dict; outputs and every gradient in float64) for each configuration
(batch_first, norm_first, activations, masks, causal), state_dict keys, errors, and a tiny
2-layer encoder that learns to reverse sequences with Adam."""
import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
import tensorlib.nn.functional as F
from tensorlib.nn.modules.transformer import (Transformer, TransformerDecoder,
                                              TransformerDecoderLayer, TransformerEncoder,
                                              TransformerEncoderLayer)

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)
TOL = dict(rtol=1e-9, atol=1e-10)

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")


def npy(t):
    return t.detach().numpy()


def pair(shape, requires_grad=True):
    a = RNG.standard_normal(shape)
    return (torch.tensor(a, requires_grad=requires_grad),
            tensorlib.tensor(a, requires_grad=requires_grad))


def mask_pair(array):
    return torch.tensor(array), tensorlib.tensor(array)


def load(tm, m):
    assert list(m.state_dict()) == list(tm.state_dict())
    for k, v in m.state_dict().items():
        assert tuple(v.shape) == tuple(tm.state_dict()[k].shape), k
    with torch.no_grad():  # non-trivial LayerNorm affine parameters and biases
        for name, p in tm.named_parameters():
            if p.dim() == 1:
                p.add_(torch.randn(p.shape, dtype=p.dtype) * 0.1)
    m.load_state_dict({k: tensorlib.tensor(v.detach().numpy())
                       for k, v in tm.state_dict().items()})


def assert_close(a, b):
    np.testing.assert_allclose(npy(b), npy(a), **TOL)


def assert_param_grads(tm, m):
    tp = dict(tm.named_parameters())
    for name, p in m.named_parameters():
        assert p.grad is not None, name
        np.testing.assert_allclose(npy(p.grad), npy(tp[name].grad), err_msg=name, **TOL)


def torch_activation(act):
    if act == "callable":
        return torch.nn.functional.silu, F.silu
    if act == "module":
        return torch.nn.GELU(), nn.GELU()
    return act, act


def seq_shape(c, L, N, E):
    if c.get("unbatched"):
        return (L, E)
    return (N, L, E) if c.get("batch_first") else (L, N, E)


def kpm_array(c, N, L):
    km = RNG.random((L,) if c.get("unbatched") else (N, L)) > 0.6
    km[..., 0] = False
    return km


# ---- encoder layer / encoder ---------------------------------------------------------------
ENC_CASES = {
    "default": dict(),
    "batch_first": dict(batch_first=True),
    "norm_first": dict(norm_first=True),
    "gelu_batch_first_norm_first": dict(activation="gelu", batch_first=True, norm_first=True),
    "callable_activation": dict(activation="callable"),
    "module_activation": dict(activation="module"),
    "no_bias": dict(bias=False),
    "src_mask_float": dict(mask="float"),
    "src_mask_bool": dict(mask="bool"),
    "causal_mask": dict(mask="causal"),
    "causal_flag": dict(mask="causal", is_causal=True, batch_first=True),
    "key_padding": dict(kpm=True),
    "key_padding_and_causal": dict(kpm=True, mask="causal", batch_first=True),
    "unbatched": dict(unbatched=True, kpm=True),
}


def _encoder_inputs(c, L, N, E):
    x_t, x = pair(seq_shape(c, L, N, E))
    kw_t, kw = {}, {}
    mask = c.get("mask")
    if mask == "float":
        a = RNG.standard_normal((L, L))
    elif mask == "bool":
        a = RNG.random((L, L)) > 0.7
        np.fill_diagonal(a, False)
    elif mask == "causal":
        a = np.triu(np.full((L, L), -np.inf), 1)
    if mask:
        kw_t["src_mask"], kw["src_mask"] = mask_pair(a)
    if c.get("kpm"):
        km = kpm_array(c, N, L)
        if mask in ("float", "causal"):
            km = np.where(km, -np.inf, 0.0)
        kw_t["src_key_padding_mask"], kw["src_key_padding_mask"] = mask_pair(km)
    if "is_causal" in c:
        kw_t["is_causal"] = kw["is_causal"] = c["is_causal"]
    return x_t, x, kw_t, kw


@pytest.mark.parametrize("case", list(ENC_CASES))
def test_encoder_layer_matches_torch(case):
    c = ENC_CASES[case]
    E, H, FF, L, N = 8, 2, 16, 5, 3
    act_t, act = torch_activation(c.get("activation", "relu"))
    ctor = {k: c[k] for k in ("batch_first", "norm_first", "bias") if k in c}
    torch.manual_seed(0)
    tm = torch.nn.TransformerEncoderLayer(E, H, FF, dropout=0.0, activation=act_t,
                                          **ctor).double()
    m = TransformerEncoderLayer(E, H, FF, dropout=0.0, activation=act, **ctor).double()
    load(tm, m)
    x_t, x, kw_t, kw = _encoder_inputs(c, L, N, E)
    out_t, out = tm(x_t, **kw_t), m(x, **kw)
    assert tuple(out.shape) == tuple(out_t.shape)
    assert_close(out_t, out)
    g = RNG.standard_normal(tuple(out.shape))
    out_t.backward(torch.tensor(g))
    out.backward(tensorlib.tensor(g))
    assert_close(x_t.grad, x.grad)
    assert_param_grads(tm, m)


@pytest.mark.parametrize("case", ["default", "batch_first", "causal_mask", "key_padding",
                                  "key_padding_and_causal", "gelu_batch_first_norm_first"])
def test_encoder_two_layers_with_norm_matches_torch(case):
    c = ENC_CASES[case]
    E, H, FF, L, N = 8, 4, 12, 6, 2
    ctor = {k: c[k] for k in ("batch_first", "norm_first", "activation") if k in c}
    torch.manual_seed(0)
    tl_ = torch.nn.TransformerEncoderLayer(E, H, FF, dropout=0.0, **ctor)
    tm = torch.nn.TransformerEncoder(tl_, 2, norm=torch.nn.LayerNorm(E)).double()
    m = TransformerEncoder(TransformerEncoderLayer(E, H, FF, dropout=0.0, **ctor), 2,
                           norm=nn.LayerNorm(E)).double()
    load(tm, m)
    x_t, x, kw_t, kw = _encoder_inputs(c, L, N, E)
    kw_t = {("mask" if k == "src_mask" else k): v for k, v in kw_t.items()}
    kw = {("mask" if k == "src_mask" else k): v for k, v in kw.items()}
    out_t, out = tm(x_t, **kw_t), m(x, **kw)
    assert_close(out_t, out)
    (out_t * out_t).sum().backward()
    (out * out).sum().backward()
    assert_close(x_t.grad, x.grad)
    assert_param_grads(tm, m)
    # the layers are independent deep copies
    assert m.layers[0].linear1.weight is not m.layers[1].linear1.weight


# ---- decoder layer / decoder ---------------------------------------------------------------
DEC_CASES = {
    "default": dict(),
    "batch_first_norm_first": dict(batch_first=True, norm_first=True),
    "gelu": dict(activation="gelu"),
    "tgt_causal": dict(tgt_mask="causal"),
    "tgt_causal_flag": dict(tgt_mask="causal", tgt_is_causal=True, batch_first=True),
    "all_masks": dict(tgt_mask="causal", memory_mask="float", kpm=True),
    "all_masks_norm_first": dict(tgt_mask="causal", memory_mask="float", kpm=True,
                                 norm_first=True, batch_first=True),
    "unbatched": dict(unbatched=True, tgt_mask="causal"),
}


def _decoder_inputs(c, T, S, N, E):
    t_t, t = pair(seq_shape(c, T, N, E))
    m_t, m = pair(seq_shape(c, S, N, E))
    kw_t, kw = {}, {}
    if c.get("tgt_mask") == "causal":
        a = np.triu(np.full((T, T), -np.inf), 1)
        kw_t["tgt_mask"], kw["tgt_mask"] = mask_pair(a)
    if c.get("memory_mask") == "float":
        kw_t["memory_mask"], kw["memory_mask"] = mask_pair(RNG.standard_normal((T, S)))
    if c.get("kpm"):
        for name, length in (("tgt_key_padding_mask", T), ("memory_key_padding_mask", S)):
            km = np.where(kpm_array(c, N, length), -np.inf, 0.0)
            kw_t[name], kw[name] = mask_pair(km)
    if "tgt_is_causal" in c:
        kw_t["tgt_is_causal"] = kw["tgt_is_causal"] = c["tgt_is_causal"]
    return (t_t, m_t), (t, m), kw_t, kw


@pytest.mark.parametrize("case", list(DEC_CASES))
@pytest.mark.parametrize("stack", [False, True])
def test_decoder_matches_torch(case, stack):
    c = DEC_CASES[case]
    E, H, FF, T, S, N = 8, 2, 16, 4, 6, 3
    ctor = {k: c[k] for k in ("batch_first", "norm_first", "activation") if k in c}
    torch.manual_seed(0)
    tm = torch.nn.TransformerDecoderLayer(E, H, FF, dropout=0.0, **ctor)
    m = TransformerDecoderLayer(E, H, FF, dropout=0.0, **ctor)
    if stack:
        tm = torch.nn.TransformerDecoder(tm, 2, norm=torch.nn.LayerNorm(E))
        m = TransformerDecoder(m, 2, norm=nn.LayerNorm(E))
    tm, m = tm.double(), m.double()
    load(tm, m)
    args_t, args, kw_t, kw = _decoder_inputs(c, T, S, N, E)
    out_t, out = tm(*args_t, **kw_t), m(*args, **kw)
    assert tuple(out.shape) == tuple(out_t.shape)
    assert_close(out_t, out)
    (out_t * out_t).sum().backward()
    (out * out).sum().backward()
    for a_t, a in zip(args_t, args):
        assert_close(a_t.grad, a.grad)
    assert_param_grads(tm, m)


# ---- Transformer ---------------------------------------------------------------------------
@pytest.mark.parametrize("batch_first,norm_first", [(False, False), (True, True)])
def test_transformer_matches_torch(batch_first, norm_first):
    E, H, FF, S, T, N = 8, 2, 16, 6, 4, 2
    torch.manual_seed(0)
    kw = dict(d_model=E, nhead=H, num_encoder_layers=2, num_decoder_layers=2,
              dim_feedforward=FF, dropout=0.0, batch_first=batch_first, norm_first=norm_first)
    tm = torch.nn.Transformer(**kw).double()
    m = Transformer(**kw).double()
    load(tm, m)
    c = {"batch_first": batch_first}
    src_t, src = pair(seq_shape(c, S, N, E))
    tgt_t, tgt = pair(seq_shape(c, T, N, E))
    tmask = Transformer.generate_square_subsequent_mask(T, dtype=tensorlib.float64)
    tmask_t = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64)
    np.testing.assert_array_equal(npy(tmask), tmask_t.numpy())
    km = np.zeros((N, S), dtype=bool)
    km[1, -2:] = True
    km_t, km_ = mask_pair(km)
    out_t = tm(src_t, tgt_t, tgt_mask=tmask_t, src_key_padding_mask=km_t,
               memory_key_padding_mask=km_t)
    out = m(src, tgt, tgt_mask=tmask, src_key_padding_mask=km_, memory_key_padding_mask=km_)
    assert_close(out_t, out)
    (out_t * out_t).sum().backward()
    (out * out).sum().backward()
    assert_close(src_t.grad, src.grad)
    assert_close(tgt_t.grad, tgt.grad)
    assert_param_grads(tm, m)


def test_state_dict_keys_match_torch():
    pairs = [
        (torch.nn.TransformerEncoderLayer(8, 2, 16), TransformerEncoderLayer(8, 2, 16)),
        (torch.nn.TransformerDecoderLayer(8, 2, 16, bias=False),
         TransformerDecoderLayer(8, 2, 16, bias=False)),
        (torch.nn.Transformer(8, 2, 1, 1, 16), Transformer(8, 2, 1, 1, 16)),
    ]
    for tm, m in pairs:
        assert list(m.state_dict()) == list(tm.state_dict())
        for k, v in m.state_dict().items():
            assert tuple(v.shape) == tuple(tm.state_dict()[k].shape), k
        # loads both ways
        tm.load_state_dict({k: torch.tensor(npy(v)) for k, v in m.state_dict().items()})
    assert "self_attn.in_proj_weight" in pairs[0][1].state_dict()
    assert "norm3.weight" in pairs[1][1].state_dict()
    assert "norm1.bias" not in pairs[1][1].state_dict()


def test_generate_square_subsequent_mask():
    mk = npy(Transformer.generate_square_subsequent_mask(4))
    assert mk.dtype == np.float32
    np.testing.assert_array_equal(mk, np.triu(np.full((4, 4), -np.inf, dtype=np.float32), 1))


def test_dropout_active_in_training_only():
    m = TransformerEncoderLayer(8, 2, 16, dropout=0.5).double()
    x = tensorlib.randn(5, 2, 8, dtype=tensorlib.float64)
    assert not np.allclose(npy(m(x)), npy(m(x)))
    m.eval()
    np.testing.assert_array_equal(npy(m(x)), npy(m(x)))


def test_transformer_errors_match_torch():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        TransformerEncoderLayer(8, 2, activation="tanh")
    m = Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        m(tensorlib.randn(5, 2, 8), tensorlib.randn(4, 3, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal "
                                           "to d_model"):
        m(tensorlib.randn(5, 2, 8), tensorlib.randn(4, 2, 6))
    layer = TransformerEncoderLayer(8, 2, 16)
    with pytest.raises(AssertionError, match="only bool and floating types of src_mask"):
        layer(tensorlib.randn(5, 2, 8), src_mask=tensorlib.zeros((5, 5), dtype=tensorlib.int64))
    dec = TransformerDecoderLayer(8, 2, 16)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        dec(tensorlib.randn(4, 2, 8), tensorlib.randn(5, 2, 8), tgt_is_causal=True)


def test_encoder_learns_to_reverse_sequences():
    """A 2-layer encoder (d_model 32) reads a token sequence and predicts, at each position,
    the token at the mirrored position; Adam drives the loss well down (about 2 s on 2 idle
    cores; no time assertion, as shared CI machines are noisy)."""
    tensorlib.manual_seed(0)
    rng = np.random.default_rng(0)
    vocab, L, batch, d = 6, 6, 16, 32
    emb = nn.Embedding(vocab, d)
    pos = nn.Parameter(tensorlib.randn(L, d))
    enc = TransformerEncoder(TransformerEncoderLayer(d, 4, 64, dropout=0.0, batch_first=True),
                             2)
    head = nn.Linear(d, vocab)
    params = list(emb.parameters()) + [pos] + list(enc.parameters()) + list(head.parameters())
    opt = tensorlib.optim.Adam(params, lr=3e-3)
    losses = []
    for step in range(60):
        tokens = rng.integers(0, vocab, size=(batch, L))
        x = tensorlib.tensor(tokens)
        y = tensorlib.tensor(tokens[:, ::-1].copy())
        logits = head(enc(emb(x) + pos))
        loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    first, last = np.mean(losses[:5]), np.mean(losses[-5:])
    assert np.isfinite(losses).all()
    assert last < 0.25 * first, (first, last)


@pytest.mark.parametrize("layer", ["encoder", "decoder"])
def test_float32_inference_feed_forward_matches_torch(layer):
    """Under no_grad a relu feed-forward may run as one fused product (bias and relu in the
    GEMM's epilogue, where the backend has it): float32 outputs equal PyTorch's inference and
    tensorlib's own grad-enabled forward."""
    d, heads, ff = 32, 4, 160
    if layer == "encoder":
        tm = torch.nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True)
        m = TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True)
    else:
        tm = torch.nn.TransformerDecoderLayer(d, heads, ff, dropout=0.0, batch_first=True)
        m = TransformerDecoderLayer(d, heads, ff, dropout=0.0, batch_first=True)
    load(tm, m)
    tm.eval()
    m.eval()
    x = RNG.standard_normal((6, 40, d)).astype(np.float32)
    mem = RNG.standard_normal((6, 12, d)).astype(np.float32)
    args = (tensorlib.tensor(x),) if layer == "encoder" else (tensorlib.tensor(x),
                                                               tensorlib.tensor(mem))
    targs = (torch.tensor(x),) if layer == "encoder" else (torch.tensor(x), torch.tensor(mem))
    with tensorlib.no_grad():
        got = m(*args)
    with torch.no_grad():
        want = tm(*targs)
    np.testing.assert_allclose(npy(got), npy(want), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(npy(got), npy(m(*args)), rtol=1e-5, atol=1e-5)


def test_inference_feed_forward_keeps_linear1_hooks():
    """A hook on linear1 sees its output (the unfused path) under no_grad too."""
    m = TransformerEncoderLayer(32, 4, 160, dropout=0.0, batch_first=True).eval()
    seen = []
    m.linear1.register_forward_hook(lambda mod, args, out: seen.append(tuple(out.shape)))
    with tensorlib.no_grad():
        m(tensorlib.randn(6, 40, 32))
    assert seen == [(6, 40, 160)]


def test_default_activation_code_is_relu_as_in_torch():
    assert TransformerEncoderLayer(8, 2).activation_relu_or_gelu == 1
    assert TransformerEncoderLayer(8, 2, activation="gelu").activation_relu_or_gelu == 2
