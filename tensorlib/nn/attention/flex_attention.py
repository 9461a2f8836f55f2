r"""torch.nn.attention.flex_attention: attention with a user score_mod and a block-sparse
mask, evaluated eagerly in tensorlib ops.

`score_mod(score, b, h, q_idx, kv_idx)` and `mask_mod(b, h, q_idx, kv_idx)` are called once
per query block on broadcast index tensors — b (B, 1, 1, 1), h (1, H, 1, 1), q_idx
(1, 1, Mq, 1), kv_idx (1, 1, 1, Mk), int64 — instead of per element, so they run on every
device and are differentiable (a tensor captured by score_mod, e.g. a learned bias indexed
as ``bias[h, q_idx, kv_idx]``, gets its gradient). PyTorch vmaps the same functions over
scalars; any function written with tensor ops and broadcasting works both ways.

A BlockMask holds, per (batch, head, query block), the key blocks that take part, split as
PyTorch's into partial blocks (mask_mod decides per element) and full blocks (every element
attends; mask_mod is not called). Key blocks no (batch, head) needs for a query block are
skipped: their scores are never computed. A query row with no key gives zeros and an lse
of -inf, as PyTorch's.
"""
import dataclasses
import inspect
import math

import tensorlib

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "create_block_mask",
           "create_mask", "or_masks", "and_masks", "noop_mask"]


def noop_mask(b, h, q_idx, kv_idx):
    """The mask_mod that masks nothing."""
    return tensorlib.ones((), dtype=tensorlib.bool, device=b.device)


def _check_callables(mask_mods):
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")


def and_masks(*mask_mods):
    """A mask_mod that attends where every one of mask_mods does."""
    _check_callables(mask_mods)

    def and_mask(b, h, q_idx, kv_idx):
        result = noop_mask(b, h, q_idx, kv_idx)
        for mod in mask_mods:
            result = result & mod(b, h, q_idx, kv_idx)
        return result
    return and_mask


def or_masks(*mask_mods):
    """A mask_mod that attends where any one of mask_mods does."""
    _check_callables(mask_mods)

    def or_mask(b, h, q_idx, kv_idx):
        result = tensorlib.zeros((), dtype=tensorlib.bool, device=b.device)
        for mod in mask_mods:
            result = result | mod(b, h, q_idx, kv_idx)
        return result
    return or_mask


def _is_score_mod(fn):
    """score_mod takes 5 arguments, mask_mod 4 (PyTorch tells them apart the same way)."""
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.default is inspect.Parameter.empty
              and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(params) >= 5


def _indices(B, H, q_pos, kv_pos, device):
    """The broadcast index tensors (b, h, q_idx, kv_idx) for positions q_pos and kv_pos."""
    b = tensorlib.arange(B, device=device).view(B, 1, 1, 1)
    h = tensorlib.arange(H, device=device).view(1, H, 1, 1)
    return b, h, q_pos.view(1, 1, -1, 1), kv_pos.view(1, 1, 1, -1)


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """The dense (B, H, Q_LEN, KV_LEN) bool mask of a mask_mod, or of a score_mod (where it
    leaves the score above -inf); B or H None means 1."""
    B, H = B or 1, H or 1
    dev = tensorlib.device(device) if device is not None else tensorlib.device("cpu")
    idx = _indices(B, H, tensorlib.arange(Q_LEN, device=dev),
                   tensorlib.arange(KV_LEN, device=dev), dev)
    if _is_score_mod(mod_fn):
        score = tensorlib.zeros((B, H, Q_LEN, KV_LEN), device=dev)
        mask = tensorlib.isneginf(mod_fn(score, *idx)).logical_not()
    else:
        mask = mod_fn(*idx)
    return mask.to(tensorlib.bool).expand(B, H, Q_LEN, KV_LEN)


def _block_size(BLOCK_SIZE):
    if isinstance(BLOCK_SIZE, int):
        return (BLOCK_SIZE, BLOCK_SIZE)
    q, kv = BLOCK_SIZE
    return (int(q), int(kv))


def _blocks(mask, bq, bk):
    """(any, all) over each bq x bk block of a (B, H, L, S) bool mask, the ragged last
    blocks padded with False (so never full, as in PyTorch)."""
    B, H, L, S = mask.shape
    nq, nk = -(-L // bq), -(-S // bk)
    pad = (0, nk * bk - S, 0, nq * bq - L)
    blocks = tensorlib.constant_pad_nd(mask.to(tensorlib.int32), pad, 0)
    count = blocks.reshape(B, H, nq, bq, nk, bk).sum((3, 5))
    return count > 0, count == bq * bk


def _ordered(flags):
    """(number of True per row, the column indices with the True ones first), int32, as
    PyTorch's kv_num_blocks/kv_indices."""
    order = tensorlib.sort(flags.to(tensorlib.int32), dim=-1, descending=True, stable=True)
    return (flags.to(tensorlib.int32).sum(-1).to(tensorlib.int32),
            order.indices.to(tensorlib.int32))


class BlockMask:
    r"""Which key blocks each (batch, head, query block) attends to, as PyTorch's BlockMask:
    `kv_num_blocks`/`kv_indices` (partial blocks, where `mask_mod` decides per element) and
    `full_kv_num_blocks`/`full_kv_indices` (blocks that attend entirely), their transposes
    `q_*` (per key block), `BLOCK_SIZE` (query, key) and `seq_lengths` (Q_LEN, KV_LEN)."""

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks,
                 full_kv_indices, q_num_blocks, q_indices, full_q_num_blocks, full_q_indices,
                 BLOCK_SIZE, mask_mod):
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod if mask_mod is not None else noop_mask

    @classmethod
    def from_dense(cls, partial, full, seq_lengths, BLOCK_SIZE, mask_mod):
        """From (B, H, nq, nk) bool tables of partial and full blocks."""
        kv = _ordered(partial) + _ordered(full)
        q = _ordered(partial.transpose(-2, -1)) + _ordered(full.transpose(-2, -1))
        return cls(seq_lengths, *kv, *q, BLOCK_SIZE, mask_mod)

    def _dense(self, num, indices):
        nk = -(-self.seq_lengths[1] // self.BLOCK_SIZE[1])
        rank = tensorlib.arange(indices.shape[-1], device=indices.device)
        valid = (rank < num.unsqueeze(-1)).to(tensorlib.int32)
        table = tensorlib.zeros(tuple(indices.shape[:-1]) + (nk,), dtype=tensorlib.int32,
                                device=indices.device)
        return table.scatter_add(-1, indices.to(tensorlib.int64), valid)

    def _tables(self):
        """(partial, full) bool block tables (B, H, nq, nk)."""
        full = (self._dense(self.full_kv_num_blocks, self.full_kv_indices) > 0
                if self.full_kv_num_blocks is not None else None)
        return self._dense(self.kv_num_blocks, self.kv_indices) > 0, full

    def to_dense(self):
        """The (B, H, nq, nk) int32 table: 1 where a block takes part (partial or full)."""
        partial, full = self._tables()
        dense = partial if full is None else partial | full
        return dense.to(tensorlib.int32)

    @property
    def shape(self):
        return tuple(self.kv_num_blocks.shape[:2]) + self.seq_lengths

    def numel(self):
        return math.prod(self.shape)

    def sparsity(self):
        """The percentage of blocks skipped."""
        dense = self.to_dense()
        return 100.0 * (1.0 - float(dense.sum().item()) / max(dense.numel(), 1))

    def to(self, device):
        def move(t):
            return None if t is None else t.to(device)
        return BlockMask(self.seq_lengths, *(move(t) for t in (
            self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks,
            self.full_kv_indices, self.q_num_blocks, self.q_indices, self.full_q_num_blocks,
            self.full_q_indices)), self.BLOCK_SIZE, self.mask_mod)

    def __repr__(self):
        def size(t):
            return None if t is None else tensorlib.Size(t.shape)
        name = getattr(self.mask_mod, "__name__", repr(self.mask_mod))
        fields = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
                  "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices"]
        lines = [f"    {f}={size(getattr(self, f))}," for f in fields]
        lines += [f"    BLOCK_SIZE={self.BLOCK_SIZE},", f"    shape={self.shape},",
                  f"    sparsity={self.sparsity():.2f}%,", f"    mask_mod={name}"]
        return "BlockMask(\n" + "\n".join(lines) + "\n)"


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=128,
                      _compile=False, separate_full_blocks=True):
    r"""The BlockMask of `mask_mod` over (B, H, Q_LEN, KV_LEN) (B or H None: 1, broadcast
    over the batch or heads), in blocks of BLOCK_SIZE (an int, or (query, key)). The
    mask is evaluated once, densely, with index tensors; blocks where it attends
    everywhere are full blocks unless `separate_full_blocks` is False."""
    bq, bk = _block_size(BLOCK_SIZE)
    dense = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    any_, all_ = _blocks(dense, bq, bk)
    if separate_full_blocks:
        partial, full = any_ & all_.logical_not(), all_
    else:
        partial, full = any_, None
    if full is None:
        kv, q = _ordered(partial), _ordered(partial.transpose(-2, -1))
        return BlockMask((Q_LEN, KV_LEN), *kv, None, None, *q, None, None, (bq, bk), mask_mod)
    return BlockMask.from_dense(partial, full, (Q_LEN, KV_LEN), (bq, bk), mask_mod)


# ---- flex_attention ------------------------------------------------------------------------
def _check(query, key, value, block_mask, enable_gqa):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, tensorlib.Tensor):
            raise TypeError(f"flex_attention(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if not (query.dtype == key.dtype == value.dtype):
        raise ValueError(f"Expected query, key, and value to have the same dtype, but got "
                         f"query.dtype: {query.dtype}, key.dtype: {key.dtype}, and "
                         f"value.dtype: {value.dtype} instead.")
    if not (query.device == key.device == value.device):
        raise ValueError(f"Expected query, key, and value to have the same device type, "
                         f"but got query.device: {query.device}, key.device: {key.device}, "
                         f"and value.device: {value.device} instead.")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"Expect query and key to have the same embedding dimension but got "
                         f"E={query.shape[-1]} and E={key.shape[-1]}.")
    if key.shape[-2] != value.shape[-2] or key.shape[1] != value.shape[1]:
        raise ValueError(f"Expect key and value to have the same sequence length and number "
                         f"of heads, got key {tuple(key.shape)} and value "
                         f"{tuple(value.shape)}")
    hq, hkv = query.shape[1], key.shape[1]
    if enable_gqa:
        if hkv == 0 or hq % hkv:
            raise ValueError(f"Expect number of query heads to be a multiple of kv heads for "
                             f"GQA but got Hq={hq} and Hkv={hkv}.")
    elif hq != hkv:
        raise ValueError(f"Expect query and key/value to have the same number of heads but "
                         f"got Hq={hq} and Hkv={hkv}. Try setting enable_gqa=True for GQA.")
    if block_mask is not None:
        L, S = query.shape[-2], key.shape[-2]
        if tuple(block_mask.seq_lengths) != (L, S):
            raise ValueError(f"block_mask was created for block_mask.shape="
                             f"{block_mask.shape} but got q_len={L} and kv_len={S}. As the "
                             f"block mask was created for a larger length than you're using "
                             f"it for, you can either 1. create a new block mask with the "
                             f"correct length, or 2. 'adjust' the existing block mask to the "
                             f"correct length by calling block_mask._adjust(q_len, kv_len). "
                             f"This essentially 'crops' the block mask to the upper left "
                             f"corner, which does not work for all mask_mods!")
        mb, mh = block_mask.shape[:2]
        if mb not in (1, query.shape[0]) or mh not in (1, hq):
            raise ValueError(f"block_mask of shape {block_mask.shape} does not broadcast "
                             f"over query of shape {tuple(query.shape)}")


def _safe_softmax_lse(scores):
    """(softmax over the last dim, natural log-sum-exp); rows that are all -inf give 0 and
    -inf."""
    m = tensorlib.amax(scores.detach(), -1, keepdim=True)
    m = tensorlib.where(tensorlib.isfinite(m), m, 0.0)
    e = tensorlib.exp(scores - m)
    total = e.sum(-1, keepdim=True)
    p = e / tensorlib.where(total == 0, 1.0, total)
    return p, (tensorlib.log(total) + m).squeeze(-1)


def _block_positions(blocks, size, length, device):
    """The element positions (int64) of the given block numbers, cut at length."""
    pos = (tensorlib.tensor(blocks, dtype=tensorlib.int64, device=device).view(-1, 1) * size
           + tensorlib.arange(size, device=device).view(1, -1)).reshape(-1)
    return pos[pos < length] if blocks and blocks[-1] * size + size > length else pos


def _attend(query, key, value, score_mod, block_mask, scale):
    """Output (B, H, L, Ev), lse and row max of the scores (B, H, L) of 4-D inputs whose
    heads already match."""
    B, H, L, _ = query.shape
    S, dev = key.shape[-2], query.device
    if block_mask is None:
        bq = 128
        starts = list(range(0, L, bq))
        kv_blocks = [None] * len(starts)
        partial = full = None
    else:
        bq, bk = block_mask.BLOCK_SIZE
        partial, full = block_mask._tables()
        used = partial if full is None else partial | full
        used_any = used.any(0).any(0).to(tensorlib.int32)        # (nq, nk), any (b, h)
        starts = list(range(0, L, bq))
        nk = used_any.shape[-1]
        flags = used_any.tolist()
        kv_blocks = [[j for j in range(nk) if flags[i][j]] for i in range(len(starts))]
    outs, lses, maxes = [], [], []
    for i, i0 in enumerate(starts):
        q_pos = tensorlib.arange(i0, min(i0 + bq, L), device=dev)
        q_blk = query[:, :, i0:i0 + bq]
        if kv_blocks[i] is None:
            kv_pos, k_blk, v_blk = tensorlib.arange(S, device=dev), key, value
        elif not kv_blocks[i]:
            outs.append(tensorlib.zeros((B, H, q_blk.shape[2], value.shape[-1]),
                                        dtype=query.dtype, device=dev))
            lses.append(tensorlib.full((B, H, q_blk.shape[2]), float("-inf"),
                                       dtype=query.dtype, device=dev))
            maxes.append(lses[-1])
            continue
        else:
            kv_pos = _block_positions(kv_blocks[i], bk, S, dev)
            k_blk = tensorlib.index_select(key, 2, kv_pos)
            v_blk = tensorlib.index_select(value, 2, kv_pos)
        scores = tensorlib.matmul(q_blk, k_blk.transpose(-2, -1)) * scale
        idx = _indices(B, H, q_pos, kv_pos, dev)
        if score_mod is not None:
            scores = score_mod(scores, *idx)
        if block_mask is not None:
            allowed = _allowed(block_mask, partial, full, i, kv_pos // bk, idx)
            scores = tensorlib.where(allowed, scores, float("-inf"))
        p, lse = _safe_softmax_lse(scores)
        outs.append(tensorlib.matmul(p, v_blk))
        lses.append(lse)
        maxes.append(tensorlib.amax(scores, -1))
    if not outs:
        empty = tensorlib.zeros((B, H, L), dtype=query.dtype, device=dev)
        return (tensorlib.zeros((B, H, L, value.shape[-1]), dtype=query.dtype, device=dev),
                empty, empty)
    return tensorlib.cat(outs, 2), tensorlib.cat(lses, 2), tensorlib.cat(maxes, 2)


def _allowed(block_mask, partial, full, i, kv_block, idx):
    """(B|1, H|1, Mq, Mk) bool: the element takes part — its block is full, or partial and
    mask_mod says so."""
    part = tensorlib.index_select(partial[:, :, i], -1, kv_block).unsqueeze(2)
    allowed = part & block_mask.mask_mod(*idx).to(tensorlib.bool)
    if full is not None:
        allowed = allowed | tensorlib.index_select(full[:, :, i], -1, kv_block).unsqueeze(2)
    return allowed


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None,
                   enable_gqa=False, return_lse=False, kernel_options=None, *,
                   return_aux=None):
    r"""softmax(score_mod(Q K^T * scale) restricted to block_mask) V.

    Args:
        query (B, Hq, L, E), key (B, Hkv, S, E), value (B, Hkv, S, Ev)
        score_mod: ``score_mod(score, b, h, q_idx, kv_idx) -> score`` (see the module doc)
        block_mask: a BlockMask from create_block_mask (its B and H may be 1)
        scale: default 1 / sqrt(E)
        enable_gqa: key/value heads serve Hq / Hkv query heads each
        return_lse: also return the log-sum-exp (natural log) of each row's scores
        kernel_options: accepted for PyTorch's signature (tensorlib has no kernel to tune)
        return_aux: an AuxRequest: (out, AuxOutput) comes back

    Returns:
        (B, Hq, L, Ev), with the lse (B, Hq, L) as asked.
    """
    _check(query, key, value, block_mask, enable_gqa)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else 1.0
    group = query.shape[1] // key.shape[1] if key.shape[1] else 1
    if group > 1:
        key = tensorlib.repeat_interleave(key, group, dim=1)
        value = tensorlib.repeat_interleave(value, group, dim=1)
    out, lse, max_scores = _attend(query, key, value, score_mod, block_mask, scale)
    if return_aux is not None:
        return out, AuxOutput(lse if return_aux.lse else None,
                              max_scores if return_aux.max_scores else None)
    return (out, lse) if return_lse else out


@dataclasses.dataclass(frozen=True)
class AuxRequest:
    """Which extra outputs flex_attention(return_aux=...) returns."""
    lse: bool = False
    max_scores: bool = False


@dataclasses.dataclass(frozen=True)
class AuxOutput:
    """The extra outputs asked for: lse and max_scores (the row max of the modified,
    masked scores), each (B, Hq, L), or None."""
    lse: object = None
    max_scores: object = None
