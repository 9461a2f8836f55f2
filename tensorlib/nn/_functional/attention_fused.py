r"""scaled_dot_product_attention through a backend's fused kernels (the CPU backend's
flash-style attention_kernels.pyx), as one autograd op whose backward is the fused backward.

NOTE [ Fused SDPA kernels ]
A backend may register two kernels (outputs first, like every kernel):

* ``scaled_dot_product_attention(out, lse, query, key, value, attn_mask, is_causal, scale)``:
  query (B, H, L, E), key (B, Hk, S, E), value (B, Hk, S, Ev) with H a multiple of Hk (each
  key/value head serves H / Hk query heads); attn_mask None or a (B, H, L, S) view (bool:
  True attends; or additive, of the query's dtype); out (B, H, L, Ev), dense rows in any
  order of the other dims, and lse (B, H, L), contiguous, the log-sum-exp of each row's
  scores. A row with every key masked gives zeros.
* ``scaled_dot_product_attention_backward(grad_query, grad_key, grad_value, grad_out, query,
  key, value, out, lse, attn_mask, is_causal, scale)``: the gradients, shaped as query, key
  and value (dense rows in any order, every element written), recomputing the scores from
  query, key and lse.

The outputs are laid out in the order of their inputs' strides (`_empty_in_order`), as
PyTorch's CPU flash kernels do: heads split from a (B, L, H * E) projection give an out
whose heads merge back by a view, and gradients that reach the projection without a copy.

`fused_attention` is used only where the kernels apply (see `eligible`): no dropout, no
gradient for the mask, float32/float64. A backward that must itself be differentiable
(create_graph=True) is written in tensorlib ops, recomputing everything from q, k and v.
"""
import tensorlib
from tensorlib.autograd.recording import formula
from tensorlib._C.factory import empty
from tensorlib.ops._composites import optional_kernel
from tensorlib.ops._opdef import differentiable

__all__ = ["eligible", "fused_attention", "split_heads", "packed_attention"]

_OP = "scaled_dot_product_attention"
_FUSED = "scaled_dot_product_attention_fused"
_PACKED = "scaled_dot_product_attention_packed"


def _broadcast(*shapes):
    if shapes.count(shapes[0]) == len(shapes):
        return shapes[0]
    return tuple(tensorlib.broadcast_shapes(*shapes))


def eligible(query, key, value, attn_mask, dropout_p, enable_gqa):
    """Whether the device's fused kernels can compute this call (else the composite path)."""
    if optional_kernel(query._device, _OP) is None or dropout_p > 0.0:
        return False
    if query._dtype not in (tensorlib.float32, tensorlib.float64):
        return False
    if not (query._device == key._device == value._device):
        return False
    qs, ks, vs = query._sizes, key._sizes, value._sizes
    if 0 in qs or 0 in ks or 0 in vs:
        return False
    hq = qs[-3] if len(qs) >= 3 else 1
    hk = ks[-3] if len(ks) >= 3 else 1
    hv = vs[-3] if len(vs) >= 3 else 1
    if hk != hv or hq % hk or (hk != hq and hk != 1 and not enable_gqa):
        return False
    if attn_mask is not None:
        if attn_mask._device != query._device or attn_mask.dim() > max(
                len(qs), len(ks), len(vs), 3):
            return False
        if attn_mask._requires_grad and tensorlib.is_grad_enabled():
            return False
    return True


def _as_4d(t, batch):
    """(*, H, N, D) -> (B, H, N, D): leading dims broadcast to `batch`, then merged."""
    while len(t._sizes) < 3:
        t = t.unsqueeze(0)
    if t._sizes[:-3] != batch:
        t = t.expand(batch + t._sizes[-3:])
    return t.reshape((-1,) + t._sizes[-3:]) if len(batch) != 1 else t


def fused_attention(query, key, value, attn_mask, is_causal, scale):
    """SDPA through the fused kernels; `eligible` must have said yes. Shapes as PyTorch's
    (leading dims broadcast); returns (*, H, L, Ev)."""
    batch = _broadcast(*(t._sizes[:-3] for t in (query, key, value)))
    q, k, v = (_as_4d(t, batch) for t in (query, key, value))
    B, H, L, _ = q._sizes
    S = k._sizes[2]
    mask = None
    if attn_mask is not None:
        mask = attn_mask if attn_mask.dtype == tensorlib.bool else attn_mask.to(query.dtype)
        mask = mask.expand(batch + (H, L, S))
        mask = mask.reshape(B, H, L, S) if len(batch) != 1 else mask
    out, _ = _fused(q, k, v, mask, bool(is_causal), float(scale))
    shape = batch + (H, L, out._sizes[-1])
    if max(len(query._sizes), len(key._sizes), len(value._sizes)) == 2:
        shape = (L, out._sizes[-1])
    return out if out._sizes == shape else out.reshape(shape)


def _empty_in_order(like, shape=None):
    """An uninitialised tensor of `shape` (default like's, same rank) whose dims lie in
    memory in the order of like's strides (the last dim last, dense): (B, H, L, E) heads
    viewed from a (B, L, H * E) projection give a (B, L, H, E) buffer seen as (B, H, L, E)."""
    shape = like._sizes if shape is None else shape
    strides, last = like._strides, len(like._sizes) - 1
    natural = tuple(range(last + 1))
    if 0 in strides[:last] or strides[last] != 1:   # broadcast or not row-major: dense
        order = natural
    else:
        order = tuple(sorted(range(last), key=lambda d: -strides[d])) + (last,)
    buf = empty(tuple(shape[d] for d in order), like._dtype, like._device)
    return buf if order == natural else buf.permute(*(order.index(d) for d in natural))


@differentiable(_FUSED)
def _fused(q, k, v, mask, is_causal, scale):
    """(out, lse) of 4-D q, k, v (see NOTE [ Fused SDPA kernels ])."""
    B, H, L, _ = q._sizes
    out = _empty_in_order(q, (B, H, L, v._sizes[-1]))
    lse = empty((B, H, L), q._dtype, q._device)
    optional_kernel(q._device, _OP)(out, lse, q, k, v, mask, is_causal, scale)
    return out, lse


@formula(_FUSED, save=(0, 1, 2, 3), save_output=True)
def _fused_grad(ctx, grad_out, grad_lse=None):
    q, k, v, mask, is_causal, scale = ctx.args
    if grad_out is None:
        return None, None, None, None, None, None
    kernel = optional_kernel(q.device, _OP + "_backward")
    if kernel is not None and not tensorlib.is_grad_enabled():
        out, lse = ctx.out
        dq, dk, dv = _empty_in_order(q), _empty_in_order(k), _empty_in_order(v)
        kernel(dq, dk, dv, grad_out.to(q.dtype), q, k, v, out, lse, mask, is_causal, scale)
    else:
        dq, dk, dv = _backward_in_ops(grad_out, q, k, v, mask, is_causal, scale)
    return dq, dk, dv, None, None, None


def split_heads(qkv, num_heads):
    """The (B, H, L, E) query, key and value head views of a packed (B, L, 3 * H * E)
    projection."""
    t = qkv.unflatten(-1, (3, num_heads, -1))
    return tuple(t.select(2, i).transpose(1, 2) for i in range(3))


def packed_attention(qkv, num_heads, attn_mask, is_causal, scale):
    """Self-attention over the heads of one packed (B, L, 3 * H * E) projection (unit-stride
    rows, any order of B and L: a transposed (L, B, ...) one too) as one op: the kernels read
    the heads where they lie, write out (B, L, H * E) in qkv's memory order and the gradient
    of qkv in one piece (no split, merge or cat). `eligible` must have said yes for the head
    views; attn_mask None or broadcastable to (B, H, L, L)."""
    B, L = qkv.shape[0], qkv.shape[1]
    mask = None
    if attn_mask is not None:
        mask = attn_mask if attn_mask.dtype == tensorlib.bool else attn_mask.to(qkv.dtype)
        mask = mask.expand(B, num_heads, L, L)
    out, _ = _fused_packed(qkv, num_heads, mask, bool(is_causal), float(scale))
    return out


def _merged_view(t, num_heads):
    """(B, L, H * E) -> its (B, H, L, E) head view."""
    return t.unflatten(-1, (num_heads, -1)).transpose(1, 2)


@differentiable(_PACKED)
def _fused_packed(qkv, num_heads, mask, is_causal, scale):
    """(out, lse) of the heads packed in qkv (see packed_attention)."""
    q, k, v = split_heads(qkv, num_heads)
    B, L = qkv.shape[0], qkv.shape[1]
    out = _empty_in_order(qkv, (B, L, qkv.shape[-1] // 3))
    lse = empty((B, num_heads, L), qkv._dtype, qkv._device)
    kernel = optional_kernel(qkv._device, _OP)
    kernel(_merged_view(out, num_heads), lse, q, k, v, mask, is_causal, scale)
    return out, lse


@formula(_PACKED, save=(0, 2), save_output=True)
def _fused_packed_grad(ctx, grad_out, grad_lse=None):
    qkv, num_heads, mask, is_causal, scale = ctx.args
    if grad_out is None:
        return None, None, None, None, None
    q, k, v = split_heads(qkv, num_heads)
    g = _merged_view(grad_out.to(qkv.dtype), num_heads)
    kernel = optional_kernel(qkv.device, _OP + "_backward")
    if kernel is not None and not tensorlib.is_grad_enabled():
        out, lse = ctx.out
        grad = _empty_in_order(qkv)
        dq, dk, dv = split_heads(grad, num_heads)
        kernel(dq, dk, dv, g, q, k, v, _merged_view(out, num_heads), lse, mask, is_causal,
               scale)
    else:
        grads = _backward_in_ops(g, q, k, v, mask, is_causal, scale)
        grad = tensorlib.cat([t.transpose(1, 2).flatten(-2) for t in grads], -1)
    return grad, None, None, None, None


def _backward_in_ops(g, q, k, v, mask, is_causal, scale):
    """The same gradients in tensorlib ops (differentiable again), recomputed from q, k, v."""
    group = q.shape[1] // k.shape[1]
    kr = tensorlib.repeat_interleave(k, group, dim=1) if group > 1 else k
    vr = tensorlib.repeat_interleave(v, group, dim=1) if group > 1 else v
    scores = tensorlib.matmul(q, kr.transpose(-2, -1)) * scale
    allowed = None
    if is_causal:
        L, S = scores.shape[-2:]
        allowed = tensorlib.ones((L, S), dtype=tensorlib.bool, device=q.device).tril()
    if mask is not None and mask.dtype == tensorlib.bool:
        allowed = mask if allowed is None else allowed & mask
    elif mask is not None:
        scores = scores + mask
    if allowed is not None:
        scores = tensorlib.masked_fill(scores, allowed.logical_not(), float("-inf"))
    m = tensorlib.amax(scores.detach(), -1, keepdim=True)
    m = tensorlib.where(tensorlib.isfinite(m), m, 0.0)
    e = tensorlib.exp(scores - m)
    total = e.sum(-1, keepdim=True)
    p = e / tensorlib.where(total == 0, 1.0, total)
    out = tensorlib.matmul(p, vr)
    dv = tensorlib.matmul(p.transpose(-2, -1), g)
    dp = tensorlib.matmul(g, vr.transpose(-2, -1))
    ds = p * (dp - (g * out).sum(-1, keepdim=True)) * scale
    dq = tensorlib.matmul(ds, kr)
    dk = tensorlib.matmul(ds.transpose(-2, -1), q)
    if group > 1:
        B, Hk = k.shape[:2]
        dk = dk.reshape(B, Hk, group, *dk.shape[2:]).sum(2)
        dv = dv.reshape(B, Hk, group, *dv.shape[2:]).sum(2)
    return dq, dk, dv
