"""F.scaled_dot_product_attention, F.multi_head_attention_forward and nn.MultiheadAttention
against PyTorch in float64 (outputs, attention weights and every gradient), masks of every
kind, gradcheck on tiny sizes, PyTorch's errors."""
import math

import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck
from tensorlib.nn.modules.activation import MultiheadAttention

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(11)
TOL = dict(rtol=1e-9, atol=1e-11)


def npy(t):
    return t.detach().numpy()


def pair(shape, requires_grad=True, dtype=np.float64):
    a = RNG.standard_normal(shape).astype(dtype)
    return (torch.tensor(a, requires_grad=requires_grad),
            tensorlib.tensor(a, requires_grad=requires_grad))


def mask_pair(array):
    return torch.tensor(array), tensorlib.tensor(array)


def assert_close(a, b, **tol):
    np.testing.assert_allclose(npy(b), npy(a), **(tol or TOL))


# ---- scaled_dot_product_attention ----------------------------------------------------------
def _bool_mask(shape, keep_one=True):
    m = RNG.random(shape) > 0.4
    if keep_one:
        m[..., 0] = True
    return m


SDPA_CASES = {
    "plain": dict(),
    "scale": dict(scale=0.3),
    "causal": dict(is_causal=True),
    "causal_L_gt_S": dict(is_causal=True, L=5, S=3),
    "causal_L_lt_S": dict(is_causal=True, L=3, S=5),
    "bool_mask": dict(mask="bool"),
    "bool_mask_broadcast": dict(mask="bool_bcast"),
    "float_mask": dict(mask="float"),
    "fully_masked_rows": dict(mask="bool_empty_rows"),
    "3d": dict(batch=(3,)),
    "2d": dict(batch=()),
    "Ev_ne_E": dict(Ev=3),
}


@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_matches_torch(case):
    c = SDPA_CASES[case]
    batch = c.get("batch", (2, 3))
    L, S, E, Ev = c.get("L", 4), c.get("S", 6), 5, c.get("Ev", 5)
    q_t, q = pair(batch + (L, E))
    k_t, k = pair(batch + (S, E))
    v_t, v = pair(batch + (S, Ev))
    mask_t = mask = None
    kind = c.get("mask")
    if kind == "bool":
        mask_t, mask = mask_pair(_bool_mask(batch + (L, S)))
    elif kind == "bool_bcast":
        mask_t, mask = mask_pair(_bool_mask((L, S)))
    elif kind == "float":
        mask_t, mask = pair((L, S), requires_grad=True)
    elif kind == "bool_empty_rows":
        m = _bool_mask(batch + (L, S))
        m[..., 1, :] = False
        mask_t, mask = mask_pair(m)
    kw = {k_: c[k_] for k_ in ("scale", "is_causal") if k_ in c}
    out_t = TF.scaled_dot_product_attention(q_t, k_t, v_t, attn_mask=mask_t, **kw)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kw)
    assert tuple(out.shape) == tuple(out_t.shape)
    assert_close(out_t, out)
    g = RNG.standard_normal(tuple(out.shape))
    out_t.backward(torch.tensor(g))
    out.backward(tensorlib.tensor(g))
    for a, b in ((q_t, q), (k_t, k), (v_t, v)):
        assert np.isfinite(npy(b.grad)).all()
        assert_close(a.grad, b.grad)
    if kind == "float":
        assert_close(mask_t.grad, mask.grad)
    if kind == "bool_empty_rows":
        assert (npy(out)[..., 1, :] == 0).all()


def test_sdpa_gqa_matches_torch():
    q_t, q = pair((2, 4, 3, 5))
    k_t, k = pair((2, 2, 6, 5))
    v_t, v = pair((2, 2, 6, 5))
    out_t = TF.scaled_dot_product_attention(q_t, k_t, v_t, enable_gqa=True)
    out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    assert_close(out_t, out)
    out_t.sum().backward()
    out.sum().backward()
    assert_close(k_t.grad, k.grad)
    assert_close(v_t.grad, v.grad)
    with pytest.raises(RuntimeError, match="must divide the number of heads"):
        F.scaled_dot_product_attention(tensorlib.randn(1, 3, 2, 4), tensorlib.randn(1, 2, 2, 4),
                                       tensorlib.randn(1, 2, 2, 4), enable_gqa=True)


def test_sdpa_gradcheck():
    q = tensorlib.tensor(RNG.standard_normal((2, 3, 4)), requires_grad=True)
    k = tensorlib.tensor(RNG.standard_normal((2, 5, 4)), requires_grad=True)
    v = tensorlib.tensor(RNG.standard_normal((2, 5, 3)), requires_grad=True)
    fm = tensorlib.tensor(RNG.standard_normal((3, 5)), requires_grad=True)
    bm = tensorlib.tensor(_bool_mask((2, 3, 5)))
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v), (q, k, v))
    assert gradcheck(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
                     (q, k, v, fm))
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=bm),
                     (q, k, v))
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                     (q, k, v))


def test_sdpa_dropout():
    q = tensorlib.randn(2, 8, 16, 4, dtype=tensorlib.float64)
    k = tensorlib.randn(2, 8, 16, 4, dtype=tensorlib.float64)
    v = tensorlib.ones(2, 8, 16, 4, dtype=tensorlib.float64)
    # with v = 1 the output is the sum of the kept, rescaled weights: mean 1
    tensorlib.manual_seed(0)
    out = npy(F.scaled_dot_product_attention(q, k, v, dropout_p=0.5))
    assert not np.allclose(out, 1.0)
    assert abs(out.mean() - 1.0) < 0.1
    assert (npy(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)) == 0).all()
    np.testing.assert_allclose(npy(F.scaled_dot_product_attention(q, k, v, dropout_p=0.0)),
                               1.0, rtol=1e-12)


def test_sdpa_float32():
    q_t, q = pair((2, 3, 4, 8), dtype=np.float32)
    k_t, k = pair((2, 3, 6, 8), dtype=np.float32)
    v_t, v = pair((2, 3, 6, 8), dtype=np.float32)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.dtype == tensorlib.float32
    assert_close(TF.scaled_dot_product_attention(q_t, k_t, v_t, is_causal=True), out,
                 rtol=1e-5, atol=1e-6)


def test_sdpa_errors():
    q, k, v = tensorlib.randn(2, 3, 4), tensorlib.randn(2, 5, 4), tensorlib.randn(2, 5, 4)
    with pytest.raises(RuntimeError, match="Expected query, key, and value to have the same "
                                           "dtype"):
        F.scaled_dot_product_attention(q, k, v.double())
    with pytest.raises(RuntimeError, match="Expected attn_mask dtype to be bool or float"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=tensorlib.ones((3, 5),
                                                                         dtype=tensorlib.int64))
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when "
                                           "is_causal=True"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=tensorlib.zeros((3, 5)),
                                       is_causal=True)
    with pytest.raises(RuntimeError, match="same embedding size, got 4 and 3"):
        F.scaled_dot_product_attention(q, tensorlib.randn(2, 5, 3), v)
    with pytest.raises(RuntimeError, match="same sequence length, got 5 and 4"):
        F.scaled_dot_product_attention(q, k, tensorlib.randn(2, 4, 4))


# ---- MultiheadAttention --------------------------------------------------------------------
def make_mha(*args, **kwargs):
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(*args, **kwargs).double()
    m = MultiheadAttention(*args, **kwargs).double()
    assert list(m.state_dict()) == list(tm.state_dict())
    with torch.no_grad():  # non-zero biases, so that they are tested
        for p in tm.parameters():
            if p.dim() == 1:
                p.copy_(torch.randn(p.shape, dtype=p.dtype) * 0.1)
    m.load_state_dict({k: tensorlib.tensor(v.detach().numpy())
                       for k, v in tm.state_dict().items()})
    return tm, m


def assert_param_grads(tm, m):
    tp = dict(tm.named_parameters())
    for name, p in m.named_parameters():
        assert p.grad is not None, name
        np.testing.assert_allclose(npy(p.grad), npy(tp[name].grad), err_msg=name, **TOL)


MHA_CASES = {
    "self": dict(),
    "self_no_weights": dict(need_weights=False),
    "per_head_weights": dict(average_attn_weights=False),
    "batch_first": dict(batch_first=True),
    "batch_first_no_weights": dict(batch_first=True, need_weights=False),
    "cross": dict(cross=True),
    "cross_kdim_vdim": dict(cross=True, kdim=3, vdim=5),
    "cross_kdim_vdim_bf": dict(cross=True, kdim=3, vdim=5, batch_first=True,
                               need_weights=False),
    "kpm_bool": dict(kpm="bool"),
    "kpm_bool_no_weights": dict(kpm="bool", need_weights=False),
    "kpm_float": dict(kpm="float"),
    "attn_mask_bool_2d": dict(attn="bool2d"),
    "attn_mask_float_3d": dict(attn="float3d", need_weights=False),
    "attn_mask_and_kpm": dict(attn="float2d", kpm="float", need_weights=False),
    "causal_hint": dict(attn="causal", is_causal=True, need_weights=False),
    "causal_hint_with_kpm": dict(attn="causal", is_causal=True, kpm="bool"),
    "no_bias": dict(bias=False),
    "bias_kv": dict(add_bias_kv=True, attn="bool2d", kpm="bool"),
    "zero_attn": dict(add_zero_attn=True, kpm="bool", need_weights=False),
    "bias_kv_zero_attn": dict(add_bias_kv=True, add_zero_attn=True),
    "unbatched": dict(unbatched=True),
    "unbatched_kpm": dict(unbatched=True, kpm="bool", attn="float3d"),
    # need_weights=False runs q, k, v as views of the projections in the inputs' memory order
    "batch_first_masks_no_weights": dict(batch_first=True, attn="float3d", kpm="bool",
                                         need_weights=False),
    "batch_first_causal": dict(batch_first=True, attn="causal", is_causal=True,
                               need_weights=False),
    "batch_first_no_bias": dict(batch_first=True, bias=False, need_weights=False),
    "cross_bf_no_weights": dict(cross=True, batch_first=True, need_weights=False),
    "cross_shared_kv": dict(cross=True, shared_kv=True, need_weights=False),
    "cross_shared_kv_bf": dict(cross=True, shared_kv=True, batch_first=True, kpm="float",
                               need_weights=False),
}


@pytest.mark.filterwarnings("ignore:Support for mismatched")
@pytest.mark.parametrize("case", list(MHA_CASES))
def test_mha_matches_torch(case):  # noqa: C901
    c = MHA_CASES[case]
    E, H, L, S, N = 8, 2, 4, 5, 3
    ctor = {k: c[k] for k in ("batch_first", "kdim", "vdim", "bias", "add_bias_kv",
                              "add_zero_attn") if k in c}
    tm, m = make_mha(E, H, **ctor)
    bf, unb = c.get("batch_first", False), c.get("unbatched", False)

    def shape(seq, feat):
        if unb:
            return (seq, feat)
        return (N, seq, feat) if bf else (seq, N, feat)
    if c.get("cross"):
        q_t, q = pair(shape(L, E))
        k_t, k = pair(shape(S, c.get("kdim", E)))
        v_t, v = (k_t, k) if c.get("shared_kv") else pair(shape(S, c.get("vdim", E)))
        args_t, args = (q_t, k_t, v_t), (q, k, v)
        tgt, src = L, S
    else:
        x_t, x = pair(shape(L, E))
        args_t, args = (x_t, x_t, x_t), (x, x, x)
        tgt = src = L
    kw_t, kw = {}, {}
    if "kpm" in c:
        kshape = (src,) if unb else (N, src)
        km = RNG.random(kshape) > 0.6
        km[..., 0] = False
        if c["kpm"] == "float":
            km = np.where(km, -1e9, RNG.standard_normal(kshape) * 0.1)
        kw_t["key_padding_mask"], kw["key_padding_mask"] = mask_pair(km)
    if "attn" in c:
        a = c["attn"]
        if a == "causal":
            am = np.triu(np.full((tgt, src), -np.inf), 1)
        elif a == "bool2d":
            am = RNG.random((tgt, src)) > 0.7
            am[:, 0] = False
        elif a == "float2d":
            am = RNG.standard_normal((tgt, src))
        else:  # float3d
            am = RNG.standard_normal(((1 if unb else N) * H, tgt, src))
        if c.get("kpm") == "float" and am.dtype == bool:
            am = np.where(am, -np.inf, 0.0)
        kw_t["attn_mask"], kw["attn_mask"] = mask_pair(am)
    for name in ("need_weights", "average_attn_weights", "is_causal"):
        if name in c:
            kw_t[name] = kw[name] = c[name]
    out_t, w_t = tm(*args_t, **kw_t)
    out, w = m(*args, **kw)
    assert tuple(out.shape) == tuple(out_t.shape)
    assert_close(out_t, out)
    if c.get("need_weights", True):
        assert tuple(w.shape) == tuple(w_t.shape)
        assert_close(w_t, w)
    else:
        assert w is None and w_t is None
    g = RNG.standard_normal(tuple(out.shape))
    loss_t = (out_t * torch.tensor(g)).sum()
    loss = (out * tensorlib.tensor(g)).sum()
    if w is not None:
        loss_t = loss_t + (w_t * w_t).sum()
        loss = loss + (w * w).sum()
    loss_t.backward()
    loss.backward()
    for a_t, a in zip(args_t, args):
        assert_close(a_t.grad, a.grad)
    assert_param_grads(tm, m)


def test_mha_batch_first_float32_step_matches_torch():
    """A batch-first self-attention training step in float32 (the fused SDPA kernels, the
    projections in batch-major order): output and every gradient as torch's."""
    tm, m = make_mha(16, 4, batch_first=True)
    tm, m = tm.float(), m.float()
    x = RNG.standard_normal((3, 7, 16)).astype(np.float32)
    g = RNG.standard_normal((3, 7, 16)).astype(np.float32)
    xt, xl = torch.tensor(x, requires_grad=True), tensorlib.tensor(x, requires_grad=True)
    out_t = tm(xt, xt, xt, need_weights=False)[0]
    out = m(xl, xl, xl, need_weights=False)[0]
    out_t.backward(torch.tensor(g))
    out.backward(tensorlib.tensor(g))
    tol = dict(rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(npy(out), out_t.detach().numpy(), **tol)
    np.testing.assert_allclose(npy(xl.grad), xt.grad.numpy(), **tol)
    tp = dict(tm.named_parameters())
    for name, p in m.named_parameters():
        np.testing.assert_allclose(npy(p.grad), tp[name].grad.numpy(), err_msg=name, **tol)


def test_mha_in_train_mode_with_dropout_is_random_and_eval_is_not():
    m = MultiheadAttention(8, 2, dropout=0.5).double()
    x = tensorlib.randn(4, 2, 8, dtype=tensorlib.float64)
    a, b = npy(m(x, x, x)[0]), npy(m(x, x, x)[0])
    assert not np.allclose(a, b)
    m.eval()
    np.testing.assert_array_equal(npy(m(x, x, x)[0]), npy(m(x, x, x)[0]))


def test_mha_state_dict_keys_and_init():
    cases = [dict(), dict(bias=False), dict(kdim=3, vdim=5), dict(add_bias_kv=True)]
    for kw in cases:
        tm = torch.nn.MultiheadAttention(8, 2, **kw)
        m = MultiheadAttention(8, 2, **kw)
        assert list(m.state_dict()) == list(tm.state_dict()), kw
        for k, v in m.state_dict().items():
            assert tuple(v.shape) == tuple(tm.state_dict()[k].shape), k
    m = MultiheadAttention(16, 4)
    assert (npy(m.in_proj_bias) == 0).all() and (npy(m.out_proj.bias) == 0).all()
    bound = math.sqrt(6.0 / (16 + 48))
    assert np.abs(npy(m.in_proj_weight)).max() <= bound
    assert m.head_dim == 4 and m._qkv_same_embed_dim and m.q_proj_weight is None
    m2 = MultiheadAttention(8, 2, kdim=3, vdim=5)
    assert m2.in_proj_weight is None and tuple(m2.k_proj_weight.shape) == (8, 3)
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"


def test_multi_head_attention_forward_functional():
    tm, m = make_mha(8, 2)
    x_t, x = pair((4, 3, 8))
    args_t = (x_t, x_t, x_t, 8, 2, tm.in_proj_weight, tm.in_proj_bias, None, None, False, 0.0,
              tm.out_proj.weight, tm.out_proj.bias)
    args = (x, x, x, 8, 2, m.in_proj_weight, m.in_proj_bias, None, None, False, 0.0,
            m.out_proj.weight, m.out_proj.bias)
    out_t, w_t = TF.multi_head_attention_forward(*args_t, average_attn_weights=False)
    out, w = F.multi_head_attention_forward(*args, average_attn_weights=False)
    assert_close(out_t, out)
    assert_close(w_t, w)
    # static_k / static_v (N * H, S, head_dim)
    sk_t, sk = pair((6, 7, 4))
    sv_t, sv = pair((6, 7, 4))
    out_t, _ = TF.multi_head_attention_forward(*args_t, static_k=sk_t, static_v=sv_t)
    out, _ = F.multi_head_attention_forward(*args, static_k=sk, static_v=sv)
    assert_close(out_t, out)
    out_t.sum().backward()
    out.sum().backward()
    assert_close(sk_t.grad, sk.grad)


def test_mha_errors_match_torch():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        MultiheadAttention(0, 2)
    m = MultiheadAttention(8, 2)
    x = tensorlib.randn(4, 3, 8)
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is .*\[4, 5\]\), but "
                                           r"should be \(4, 4\)"):
        m(x, x, x, attn_mask=tensorlib.zeros((4, 5)))
    with pytest.raises(RuntimeError, match=r"The shape of the 3D attn_mask is .*should be "
                                           r"\(6, 4, 4\)"):
        m(x, x, x, attn_mask=tensorlib.zeros((2, 4, 4)))
    with pytest.raises(AssertionError, match="Expected key_padded_mask.shape\\[1\\] to be 4, "
                                             "but got 5"):
        m(x, x, x, key_padding_mask=tensorlib.zeros((3, 5), dtype=tensorlib.bool))
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 8, but "
                                             "got 6"):
        y = tensorlib.randn(4, 3, 6)
        m(y, y, y)
    with pytest.raises(AssertionError, match="For batched \\(3-D\\) `query`, expected `key` "
                                             "and `value` to be 3-D"):
        m(x, x[0], x[0])
    with pytest.raises(AssertionError, match="query should be unbatched 2D or batched 3D"):
        m(x[0, 0], x[0, 0], x[0, 0])
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask"):
        m(x, x, x, attn_mask=tensorlib.zeros((4, 4), dtype=tensorlib.int64))
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and "
                                         "attn_mask is deprecated"):
        m(x, x, x, attn_mask=tensorlib.zeros((4, 4)),
          key_padding_mask=tensorlib.zeros((3, 4), dtype=tensorlib.bool))


def test_mha_exported_from_nn():
    assert getattr(nn, "MultiheadAttention", MultiheadAttention) is MultiheadAttention
    assert "multi_head_attention_forward" in F.__all__
    assert "scaled_dot_product_attention" in F.__all__


def test_out_proj_is_the_non_quantizable_linear_at_torchs_path():
    from tensorlib.nn.modules.linear import NonDynamicallyQuantizableLinear
    mha = MultiheadAttention(8, 2)
    assert isinstance(mha.out_proj, NonDynamicallyQuantizableLinear)
    assert isinstance(mha.out_proj, tensorlib.nn.Linear)
    assert NonDynamicallyQuantizableLinear.__module__ == "tensorlib.nn.modules.linear"
