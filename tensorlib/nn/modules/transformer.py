r"""Transformer, TransformerEncoder/Decoder and their layers (PyTorch's modules, submodule
names and math, so torch weights load one to one: ``self_attn.*``, ``multihead_attn.*``,
``linear1``, ``linear2``, ``norm1``..``norm3``).

PyTorch's fast paths (fused kernels, nested tensors) are not reproduced: every call takes the
composed path, which computes the same values (``enable_nested_tensor`` is accepted and
ignored, so padded positions keep their computed values instead of becoming zeros).
"""
import copy

import tensorlib
from tensorlib.nn import functional as F
from tensorlib.nn import init
from tensorlib.nn._functional.attention import _canonical_mask, _none_or_dtype
from tensorlib.nn.modules.activation import GELU, MultiheadAttention, ReLU
from tensorlib.nn.modules.container import ModuleList
from tensorlib.nn.modules.dropout import Dropout
from tensorlib.nn.modules.linear import Linear, fused_linear_relu
from tensorlib.nn.modules.module import Module
from tensorlib.nn.modules.normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder",
           "TransformerEncoderLayer", "TransformerDecoderLayer"]


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """(sz, sz) float mask: -inf above the diagonal, 0 on and below it."""
    return tensorlib.triu(tensorlib.full((sz, sz), float("-inf"), dtype=dtype, device=device),
                          diagonal=1)


def _get_seq_len(src, batch_first):
    if src.dim() == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """is_causal when given; else whether `mask` equals the causal mask of its size."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.shape[-2]
        causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        if tuple(mask.shape) == tuple(causal.shape):
            make_causal = bool((mask == causal).all())
        else:
            make_causal = False
    return make_causal


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class Transformer(Module):
    r"""The encoder-decoder Transformer of "Attention Is All You Need".

    Args:
        d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
        dim_feedforward=2048, dropout=0.1, activation=F.relu ('relu', 'gelu' or a callable),
        custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5, batch_first=False,
        norm_first=False, bias=True

    Shape:
        - src: (S, E), (S, N, E) or (N, S, E) with batch_first; tgt: (T, E), (T, N, E) or
          (N, T, E); masks as in the layers
        - output: like tgt
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False,
                 norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        layer_kwargs = {"d_model": d_model, "nhead": nhead, "dim_feedforward": dim_feedforward,
                        "dropout": dropout, "activation": activation,
                        "layer_norm_eps": layer_norm_eps, "batch_first": batch_first,
                        "norm_first": norm_first, "bias": bias, "device": device,
                        "dtype": dtype}
        self.encoder = (custom_encoder if custom_encoder is not None else _default_stack(
            TransformerEncoder, TransformerEncoderLayer, num_encoder_layers, layer_kwargs))
        self.decoder = (custom_decoder if custom_decoder is not None else _default_stack(
            TransformerDecoder, TransformerDecoderLayer, num_decoder_layers, layer_kwargs))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.dim() == 3
        if not self.batch_first and src.shape[1] != tgt.shape[1] and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if self.batch_first and src.shape[0] != tgt.shape[0] and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        r"""A (sz, sz) causal float mask: -inf above the diagonal, 0 elsewhere."""
        return _generate_square_subsequent_mask(sz, dtype=dtype, device=device)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)


class TransformerEncoder(Module):
    r"""A stack of num_layers deep copies of encoder_layer, then `norm` if given.

    Args:
        encoder_layer, num_layers, norm=None, enable_nested_tensor=True (ignored),
        mask_check=True

    forward(src, mask=None, src_key_padding_mask=None, is_causal=None); is_causal=None
    detects a causal `mask`.
    """

    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = False  # no nested tensors in tensorlib
        self.mask_check = mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(mask), "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        output = src
        first_layer = self.layers[0]
        batch_first = first_layer.self_attn.batch_first
        seq_len = _get_seq_len(src, batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal,
                         src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    r"""A stack of num_layers deep copies of decoder_layer, then `norm` if given.

    forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False)
    """

    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


def _default_stack(stack_cls, layer_cls, num_layers, layer_kwargs):
    """Transformer's own encoder or decoder: num_layers copies of one layer, then LayerNorm."""
    layer = layer_cls(**layer_kwargs)
    norm = LayerNorm(layer_kwargs["d_model"], eps=layer_kwargs["layer_norm_eps"],
                     bias=layer_kwargs["bias"], device=layer_kwargs["device"],
                     dtype=layer_kwargs["dtype"])
    return stack_cls(layer, num_layers, norm)


def _hidden(layer, x):
    """activation(linear1(x)): for relu where no gradient is wanted, one fused product on
    the backend's kernel (bias and relu in the GEMM's epilogue; PyTorch's inference fast
    path fuses them too), else the two module calls (always for a hooked or subclassed
    Linear)."""
    lin = layer.linear1
    if _is(layer.activation, F.relu):
        fused = fused_linear_relu(lin, x)
        if fused is not None:
            return fused
    return layer.activation(lin(x))


def _is(fn, op):
    """fn is the op F names, or the plain function it wraps (a default argument taken
    before nn.functional wrapped its ops)."""
    return fn is op or fn is getattr(op, "__wrapped__", op)


def _activation_code(activation):
    """PyTorch's activation_relu_or_gelu: 1 relu, 2 gelu, 0 anything else."""
    if _is(activation, F.relu) or isinstance(activation, ReLU):
        return 1
    if _is(activation, F.gelu) or isinstance(activation, GELU):
        return 2
    return 0


class TransformerEncoderLayer(Module):
    r"""Self-attention then a feed-forward block, each with dropout, a residual connection
    and LayerNorm (after the residual, or before the block with norm_first=True).

    Args:
        d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu ('relu',
        'gelu' or a callable), layer_norm_eps=1e-5, batch_first=False, norm_first=False,
        bias=True

    forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation_relu_or_gelu = _activation_code(activation)
        self.activation = activation

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype,
                                   check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask,
                                   is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask,
                                              is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(_hidden(self, x)))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    r"""Self-attention, attention over the encoder's memory, then a feed-forward block, each
    with dropout, a residual connection and LayerNorm (norm_first: before each block).

    Args: as TransformerEncoderLayer.

    forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False)
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            self.activation = _get_activation_fn(activation)
        else:
            self.activation = activation

    def __setstate__(self, state):
        if "activation" not in state:
            state["activation"] = F.relu
        super().__setstate__(state)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                   tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask,
                                              tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask,
                                               memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(_hidden(self, x)))
        return self.dropout3(x)
