r"""nn.functional: attention (scaled_dot_product_attention, multi_head_attention_forward).

Composed from tensorlib ops (matmul/baddbmm, amax, exp, sum, where), so it runs on every
backend and autograd comes from the ops' formulas. Where a backend registers fused SDPA
kernels (the CPU backend does), `scaled_dot_product_attention` runs them instead, forward
and backward, except with dropout_p > 0 or a mask that needs a gradient
(NOTE [ Fused SDPA kernels ] in attention_fused.py).

NOTE [ Safe softmax in SDPA ]
As PyTorch's CPU kernels, `scaled_dot_product_attention` returns zeros (and zero gradients)
for a query row whose every key is masked, instead of NaN. The row max is replaced by 0
where it is -inf (all exponentials are then exactly 0) and the denominator by 1 where the
sum is 0, so every intermediate of the forward and backward stays finite.
`multi_head_attention_forward(need_weights=True)` uses the plain softmax (NaN rows), as
PyTorch does.
"""
import math
import warnings

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.nn._functional import attention_fused
from tensorlib.ops._autocast import autocast_op

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _F():
    from tensorlib.nn import functional
    return functional


def _dropout(x, p, training=True):
    """F.dropout when it exists (another family of nn.functional), else the same math."""
    if not training or p == 0.0:
        return x
    fn = getattr(_F(), "dropout", None)
    if callable(fn):
        return fn(x, p, training)
    if p == 1.0:
        return x * 0.0
    keep = tensorlib.bernoulli(tensorlib.full(tuple(x.shape), 1.0 - p, dtype=x.dtype,
                                              device=x.device))
    return x * keep * (1.0 / (1.0 - p))


def _safe_softmax(scores):
    """softmax over the last dim; rows that are all -inf give 0 (NOTE [ Safe softmax ]).
    No keys (an empty last dim) gives empty rows, hence a zero output, as in PyTorch."""
    if scores.shape[-1] == 0:
        return tensorlib.exp(scores)
    m = tensorlib.amax(scores.detach(), -1, keepdim=True)
    m = tensorlib.where(tensorlib.isneginf(m), 0.0, m)
    e = tensorlib.exp(scores - m)
    s = e.sum(-1, keepdim=True)
    return e / tensorlib.where(s == 0, 1.0, s)


def _sdp_allowed(kind):
    """Whether the SDPA switches (tensorlib.backends.cuda, set by nn.attention.sdpa_kernel)
    allow the fused kernels (FLASH_ATTENTION or EFFICIENT_ATTENTION; not when a priority
    order puts MATH first) or the composite ("math") path."""
    from tensorlib.backends import cuda as switches
    math_on = switches.math_sdp_enabled()
    if kind == "math":
        return math_on
    from tensorlib.nn.attention import prefers_math
    return ((switches.flash_sdp_enabled() or switches.mem_efficient_sdp_enabled())
            and not (math_on and prefers_math()))


def _softmax_last(scores):
    """F.softmax over the last dim (tensorlib's native softmax when it has one); rows that
    are all -inf give NaN, as in PyTorch."""
    return _F().softmax(scores, -1)


@autocast_op("scaled_dot_product_attention")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,  # noqa: C901
                                 is_causal=False, scale=None, enable_gqa=False):
    r"""softmax(Q K^T * scale + mask) V, with dropout on the attention weights.

    Args:
        query: (N, ..., Hq, L, E); key: (N, ..., H, S, E); value: (N, ..., H, S, Ev)
        attn_mask: broadcastable to (N, ..., L, S). A bool mask marks with ``True`` the
            positions that take part in attention; a float mask is added to the scores.
        dropout_p: dropout probability on the attention weights (always applied when > 0,
            as in PyTorch; pass 0.0 in evaluation)
        is_causal: apply a lower-triangular (top-left aligned) causal mask; attn_mask must
            then be None
        scale: the scaling factor; default 1 / sqrt(E)
        enable_gqa: grouped-query attention: key/value heads are repeated Hq / H times

    Returns:
        (N, ..., Hq, L, Ev). Rows whose keys are all masked are zero.
    """
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, TensorImpl):
            raise TypeError(f"scaled_dot_product_attention(): argument '{name}' must be "
                            f"Tensor, not {type(t).__name__}")
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {query.dtype} key.dtype: {key.dtype} and "
                           f"value.dtype: {value.dtype} instead.")
    qs, ks, vs = query._sizes, key._sizes, value._sizes    # tuples: .shape builds a Size
    if len(qs) < 2 or len(ks) < 2 or len(vs) < 2:
        raise RuntimeError(f"scaled_dot_product_attention: expected query, key and value to "
                           f"be at least 2-D, got {len(qs)}-D, {len(ks)}-D and "
                           f"{len(vs)}-D")
    if qs[-1] != ks[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query and key must have the same "
                           f"embedding size, got {qs[-1]} and {ks[-1]}")
    if ks[-2] != vs[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key and value must have the same "
                           f"sequence length, got {ks[-2]} and {vs[-2]}")
    if attn_mask is not None and attn_mask.dtype not in (tensorlib.bool, query.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {attn_mask.dtype} and  "
                           f"query.dtype: {query.dtype} instead.")
    if dropout_p < 0.0 or dropout_p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got "
                         f"{dropout_p}")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    L, S = qs[-2], ks[-2]
    if scale is None:
        scale = 1.0 / math.sqrt(qs[-1]) if qs[-1] > 0 else 1.0
    if enable_gqa and len(qs) >= 3 and len(ks) >= 3:
        hq, hk, hv = qs[-3], ks[-3], vs[-3]
        if hk == 0 or hq % hk or hv == 0 or hq % hv:
            raise RuntimeError(f"Number of heads in key and value must divide the number of "
                               f"heads in query, got {hq} query heads, {hk} key heads and "
                               f"{hv} value heads")
    fused = _sdp_allowed("fused") and attention_fused.eligible(query, key, value, attn_mask,
                                                                dropout_p, enable_gqa)
    if fused:
        return attention_fused.fused_attention(query, key, value, attn_mask, is_causal, scale)
    if not _sdp_allowed("math"):
        raise RuntimeError("No available kernel. Aborting execution.")
    if enable_gqa and query.dim() >= 3 and key.dim() >= 3:
        if hk != hq:
            key = tensorlib.repeat_interleave(key, hq // hk, dim=-3)
        if hv != hq:
            value = tensorlib.repeat_interleave(value, hq // hv, dim=-3)

    scores = tensorlib.matmul(query * scale, key.transpose(-2, -1))
    masked = False
    if is_causal:
        causal = tensorlib.ones((L, S), dtype=tensorlib.bool, device=query.device).tril()
        scores = tensorlib.masked_fill(scores, causal.logical_not(), float("-inf"))
        masked = L > S  # only then can a whole row be masked
    if attn_mask is not None:
        if attn_mask.dtype == tensorlib.bool:
            scores = tensorlib.masked_fill(scores, attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
        masked = True
    attn = _safe_softmax(scores) if masked else _softmax_last(scores)
    if dropout_p > 0.0:
        attn = _dropout(attn, dropout_p, True)
    return tensorlib.matmul(attn, value)


# ---- multi-head attention ------------------------------------------------------------------
def _none_or_dtype(input):  # noqa: A002
    if input is None:
        return None
    if isinstance(input, TensorImpl):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or tensorlib.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask becomes a float mask of target_type (-inf where True); float masks pass."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != tensorlib.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      f"Use same type for both instead.", stacklevel=3)
    if not is_float:
        mask = tensorlib.masked_fill(tensorlib.zeros(tuple(mask.shape), dtype=target_type,
                                                     device=mask.device),
                                     mask, float("-inf"))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 f"respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 2-D but found {key_padding_mask.dim()}-D "
                                 f"tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be "
                                 f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor "
                                 f"instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to "
                                 f"be 2-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 f"respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` "
                                 f"to be `None` or 1-D but found {key_padding_mask.dim()}-D "
                                 f"tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to "
                                     f"be `None`, 2-D or 3-D but found {attn_mask.dim()}-D "
                                     f"tensor instead")
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected} but "
                                         f"got {tuple(attn_mask.shape)}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _linear2d(x, w, b):
    """F.linear on x flattened to 2-D (one GEMM, also in backward), reshaped back."""
    lead = x._sizes[:-1]
    out = _F().linear(x.reshape(-1, x._sizes[-1]), w, b)
    return out.reshape(lead + (out._sizes[-1],))


def _in_projection_packed(q, k, v, w, b=None):
    """q, k, v projected by the packed (3E, E_in) weight, with one matmul when q is k is v;
    the pieces are views split from one product (one node: its backward is one cat)."""
    E = q.shape[-1]
    if k is v:
        if q is k:
            return _linear2d(q, w, b).split(E, -1)
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        q_proj = _linear2d(q, w_q, b_q)
        return (q_proj, *_linear2d(k, w_kv, b_kv).split(E, -1))
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return _linear2d(q, w_q, b_q), _linear2d(k, w_k, b_k), _linear2d(v, w_v, b_v)


def _projections(query, key, value, in_proj_weight, in_proj_bias, use_separate_proj_weight,
                 q_proj_weight, k_proj_weight, v_proj_weight):
    """The in-projections of query, key and value (any leading dims)."""
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        return _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    for name, w in (("q_proj_weight", q_proj_weight), ("k_proj_weight", k_proj_weight),
                    ("v_proj_weight", v_proj_weight)):
        if w is None:
            raise AssertionError(f"use_separate_proj_weight is True but {name} is None")
    b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
    return (_linear2d(query, q_proj_weight, b_q), _linear2d(key, k_proj_weight, b_k),
            _linear2d(value, v_proj_weight, b_v))


def _batch_major(*tensors):
    """Whether (L, N, E) inputs are transposed views of batch-first (N, L, E) data."""
    return all(t._sizes[1] > 1 and t.transpose(0, 1).is_contiguous() for t in tensors)


def _packed_fused(proj, num_heads, attn_mask, dropout_p, is_causal):
    """Self-attention of a packed (N, L, 3E) projection by one fused op
    (attention_fused.packed_attention), or None where SDPA would not take the fused kernels
    (autocast on, dropout, a mask that needs a gradient, ...)."""
    from tensorlib.ops import _autocast
    if _autocast.active or not _sdp_allowed("fused"):
        return None
    q, k, v = attention_fused.split_heads(proj, num_heads)
    if not attention_fused.eligible(q, k, v, attn_mask, dropout_p, False):
        return None
    scale = 1.0 / math.sqrt(q._sizes[-1]) if q._sizes[-1] > 0 else 1.0
    return attention_fused.packed_attention(proj, num_heads, attn_mask, is_causal, scale)


def _attention_in_views(query, key, value, num_heads, projections, attn_mask, dropout_p,
                        is_causal, out_proj_weight, out_proj_bias, packed=None):
    """Multi-head attention without weights, bias_k/v, zero attention or static k/v:
    (L, N, E) inputs projected in their memory order (batch-first data stays batch-first:
    no copy of the input, and the projection's gradient is one GEMM operand as it comes),
    each projection split into heads as a (N, H, L, hd) view for SDPA. Self-attention with
    the packed weight (`packed`: the input -> its (.., 3E) projection) runs as one fused op
    on the projection where the kernels apply. attn_mask: None or broadcastable to
    (N, H, L, S). Returns (L, N, E)."""
    batch_major = _batch_major(query, key, value)
    if batch_major:
        same_qk, same_kv = key is query, value is key
        query = query.transpose(0, 1)
        key = query if same_qk else key.transpose(0, 1)
        value = key if same_kv else value.transpose(0, 1)
    out = None
    if packed is not None and key is query and value is query:
        proj = packed(query)
        out = _packed_fused(proj if batch_major else proj.transpose(0, 1), num_heads,
                            attn_mask, dropout_p, is_causal)
        q, k, v = proj.split(query._sizes[-1], -1) if out is None else (proj,) * 3
        if out is not None:           # (N, L, E), laid out as proj: merge by a view
            out = out if batch_major else out.transpose(0, 1)
    else:
        q, k, v = projections(query, key, value)
    if out is None:
        def heads(t):
            t = t.unflatten(-1, (num_heads, -1))
            return t.transpose(1, 2) if batch_major else t.permute(1, 2, 0, 3)
        out = scaled_dot_product_attention(heads(q), heads(k), heads(v), attn_mask, dropout_p,
                                           is_causal)
        out = out.transpose(1, 2) if batch_major else out.permute(2, 0, 1, 3)
    rows, embed = out._sizes[0] * out._sizes[1], query._sizes[-1]
    out = _F().linear(out.reshape(rows, embed), out_proj_weight, out_proj_bias)
    out = out.reshape(q._sizes[:2] + (out._sizes[-1],))
    return out.transpose(0, 1) if batch_major else out


def _pad_last(mask):
    """(..., S) -> (..., S + 1), the new column 0 (not masked)."""
    return tensorlib.constant_pad_nd(mask, (0, 1), 0.0)


def _checked_attn_mask(attn_mask, tgt_len, src_len, bsz, num_heads):
    """A float attn_mask as (1 or N * H, L, S), after PyTorch's shape checks."""
    if attn_mask is None:
        return None
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is "
                               f"{tensorlib.Size(attn_mask.shape)}, but should be "
                               f"{(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is "
                               f"{tensorlib.Size(attn_mask.shape)}, but should be "
                               f"{(bsz * num_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _merge_padding(attn_mask, key_padding_mask, bsz, num_heads, src_len):
    """attn_mask (1 or N * H, L, S) plus the float key_padding_mask (N, S) of each head."""
    if key_padding_mask is None:
        return attn_mask
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                             f"{key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")
    key_padding_mask = key_padding_mask.reshape(bsz, 1, 1, src_len) \
        .expand(-1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
    return key_padding_mask if attn_mask is None else attn_mask + key_padding_mask


def _sdpa_mask(attn_mask, bsz, num_heads, src_len):
    """The merged (1 or N * H, L, S) mask as SDPA takes it: (1 or N, H, L, S)."""
    if attn_mask is None:
        return None
    if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
        return attn_mask.unsqueeze(0)
    return attn_mask.reshape(bsz, num_heads, -1, src_len)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,  # noqa: C901
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    r"""The math of nn.MultiheadAttention (PyTorch's function, argument for argument).

    Shape:
        - query: (L, E) or (L, N, E); key: (S, E_k) or (S, N, E_k); value: (S, E_v) or
          (S, N, E_v) (sequence first)
        - key_padding_mask: (S) or (N, S), bool (True: ignored) or float (added)
        - attn_mask: (L, S) or (N * num_heads, L, S), bool (True: not allowed) or float
        - static_k, static_v: (N * num_heads, S, E / num_heads)
        - outputs: attn_output (L, E) or (L, N, E); attn_output_weights (when need_weights)
          (N, L, S) averaged over heads, or (N, num_heads, L, S)
    """
    F = _F()
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query = query.unsqueeze(1)
        key = key.unsqueeze(1)
        value = value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)

    tgt_len, bsz, embed_dim = query._sizes
    src_len = key._sizes[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        # the hint stands in for the mask (SDPA builds it)
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False

    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, "
                             f"but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key._sizes[:2] != value._sizes[:2]:
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do "
                                 f"not match value's {tuple(value.shape[:2])}")
    elif key._sizes != value._sizes:
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape "
                             f"{tuple(value.shape)}")

    def projections(q_in, k_in, v_in):
        return _projections(q_in, k_in, v_in, in_proj_weight, in_proj_bias,
                            use_separate_proj_weight, q_proj_weight, k_proj_weight,
                            v_proj_weight)

    attn_mask = _checked_attn_mask(attn_mask, tgt_len, src_len, bsz, num_heads)
    if (not need_weights and bias_k is None and bias_v is None and static_k is None
            and static_v is None and not add_zero_attn):
        attn_mask = _merge_padding(attn_mask, key_padding_mask, bsz, num_heads, src_len)
        packed = None
        if not use_separate_proj_weight and in_proj_weight is not None:
            def packed(x):
                return _linear2d(x, in_proj_weight, in_proj_bias)
        out = _attention_in_views(query, key, value, num_heads, projections,
                                  _sdpa_mask(attn_mask, bsz, num_heads, src_len),
                                  dropout_p if training else 0.0, is_causal, out_proj_weight,
                                  out_proj_bias, packed)
        return (out if is_batched else out.squeeze(1)), None
    q, k, v = projections(query, key, value)

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = tensorlib.cat([k, bias_k.repeat(1, bsz, 1)])
        v = tensorlib.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # (L, N, E) -> (N * H, L, hd)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_k.shape[0] != bsz * num_heads:
            raise AssertionError(f"expecting static_k.size(0) of {bsz * num_heads}, but got "
                                 f"{static_k.shape[0]}")
        if static_k.shape[2] != head_dim:
            raise AssertionError(f"expecting static_k.size(2) of {head_dim}, but got "
                                 f"{static_k.shape[2]}")
        k = static_k
    if static_v is None:
        v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_v.shape[0] != bsz * num_heads:
            raise AssertionError(f"expecting static_v.size(0) of {bsz * num_heads}, but got "
                                 f"{static_v.shape[0]}")
        if static_v.shape[2] != head_dim:
            raise AssertionError(f"expecting static_v.size(2) of {head_dim}, but got "
                                 f"{static_v.shape[2]}")
        v = static_v

    if add_zero_attn:
        zeros = tensorlib.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k = tensorlib.cat([k, zeros], dim=1)
        v = tensorlib.cat([v, zeros.to(v.dtype)], dim=1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)

    src_len = k.shape[1]
    attn_mask = _merge_padding(attn_mask, key_padding_mask, bsz, num_heads, src_len)

    if not training:
        dropout_p = 0.0

    if need_weights:
        E = q.shape[-1]
        q_scaled = q * math.sqrt(1.0 / float(E))
        if attn_mask is not None:
            weights = tensorlib.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = tensorlib.bmm(q_scaled, k.transpose(-2, -1))
        weights = _softmax_last(weights)
        if dropout_p > 0.0:
            weights = _dropout(weights, dropout_p, True)
        out = tensorlib.bmm(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = F.linear(out, out_proj_weight, out_proj_bias)
        out = out.reshape(tgt_len, bsz, out.shape[1])
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out = out.squeeze(1)
            weights = weights.squeeze(0)
        return out, weights

    attn_mask = _sdpa_mask(attn_mask, bsz, num_heads, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias)
    out = out.reshape(tgt_len, bsz, out.shape[1])
    if not is_batched:
        out = out.squeeze(1)
    return out, None
