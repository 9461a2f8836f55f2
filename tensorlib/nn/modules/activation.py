"""Activation modules: each keeps its hyper-parameters (and PReLU its weight) and calls the
function of the same name in nn.functional. MultiheadAttention is added to this file
separately."""
import warnings

import tensorlib
from tensorlib.nn import functional as F
from tensorlib.nn import init
from tensorlib.nn.modules.module import Module
from tensorlib.nn.parameter import Parameter

__all__ = ["Threshold", "ReLU", "ReLU6", "LeakyReLU", "RReLU", "PReLU", "ELU", "CELU", "SELU",
           "GELU",
           "SiLU", "Mish", "Sigmoid", "Tanh", "Softplus", "Softsign", "Hardtanh", "Hardswish",
           "Hardsigmoid", "Softmax", "Softmin", "LogSoftmax", "Softmax2d", "LogSigmoid",
           "Tanhshrink", "Hardshrink", "Softshrink", "GLU", "MultiheadAttention"]


def _inplace_suffix(inplace, first=False):
    if not inplace:
        return ""
    return "inplace=True" if first else ", inplace=True"


class Threshold(Module):
    r"""y = x if x > threshold else value."""

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" \
               f"{_inplace_suffix(self.inplace)}"


class ReLU(Module):
    r"""ReLU(x) = max(0, x), elementwise.

    Args:
        inplace: write the result into the input. Default: ``False``

    Shape:
        - Input: (*), Output: (*), same shape
    """

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_suffix(self.inplace, first=True)


class Hardtanh(Module):
    r"""x clamped to [min_val, max_val]."""

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if not self.max_val > self.min_val:
            raise AssertionError

    def forward(self, input):  # noqa: A002
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" \
               f"{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    r"""ReLU6(x) = min(max(0, x), 6)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_suffix(self.inplace, first=True)


class LeakyReLU(Module):
    r"""x if x > 0 else negative_slope * x."""

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class RReLU(Module):
    r"""Randomized leaky ReLU: a slope drawn from U(lower, upper) per element in training,
    (lower + upper) / 2 in eval."""

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace)}"


class PReLU(Module):
    r"""x if x > 0 else a * x, with a learned `a` (one, or one per channel: dim 1).

    Args:
        num_parameters: number of `a` to learn: 1 or the number of input channels. Default: 1
        init: the initial value of `a`. Default: 0.25
    """

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(tensorlib.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):  # noqa: A002
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class ELU(Module):
    r"""x if x > 0 else alpha * (exp(x) - 1)."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class CELU(ELU):
    r"""x if x > 0 else alpha * (exp(x / alpha) - 1)."""

    def forward(self, input):  # noqa: A002
        return F.celu(input, self.alpha, self.inplace)


class SELU(Module):
    r"""scale * (x if x > 0 else alpha * (exp(x) - 1)), alpha ~ 1.6733, scale ~ 1.0507."""

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.selu(input, self.inplace)

    def extra_repr(self):
        return _inplace_suffix(self.inplace, first=True)


class GELU(Module):
    r"""x * Phi(x); approximate='tanh' uses PyTorch's tanh approximation."""

    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):  # noqa: A002
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={repr(self.approximate)}"


class SiLU(Module):
    r"""x * sigmoid(x)."""

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_suffix(self.inplace, first=True)


class Mish(SiLU):
    r"""x * tanh(softplus(x))."""

    def forward(self, input):  # noqa: A002
        return F.mish(input, inplace=self.inplace)


class Sigmoid(Module):
    r"""1 / (1 + exp(-x))."""

    def forward(self, input):  # noqa: A002
        return F.sigmoid(input)


class Tanh(Module):
    r"""tanh(x)."""

    def forward(self, input):  # noqa: A002
        return tensorlib.tanh(input)


class Hardswish(Module):
    r"""x * relu6(x + 3) / 6."""

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.hardswish(input, self.inplace)


class Hardsigmoid(Hardswish):
    r"""relu6(x + 3) / 6."""

    def forward(self, input):  # noqa: A002
        return F.hardsigmoid(input, self.inplace)


class Softplus(Module):
    r"""log(1 + exp(beta * x)) / beta, linear where beta * x > threshold."""

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):  # noqa: A002
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softsign(Module):
    r"""x / (1 + |x|)."""

    def forward(self, input):  # noqa: A002
        return F.softsign(input)


class Tanhshrink(Module):
    r"""x - tanh(x)."""

    def forward(self, input):  # noqa: A002
        return F.tanhshrink(input)


class LogSigmoid(Module):
    r"""log(sigmoid(x))."""

    def forward(self, input):  # noqa: A002
        return F.logsigmoid(input)


class Hardshrink(Module):
    r"""x if |x| > lambd else 0."""

    __constants__ = ["lambd"]

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):  # noqa: A002
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    r"""x - lambd if x > lambd, x + lambd if x < -lambd, else 0."""

    def forward(self, input):  # noqa: A002
        return F.softshrink(input, self.lambd)


class GLU(Module):
    r"""a * sigmoid(b) for the two halves a, b of the input along `dim`."""

    __constants__ = ["dim"]

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class _SoftmaxBase(Module):
    __constants__ = ["dim"]

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    r"""exp(x_i) / sum_j exp(x_j) along `dim`.

    Shape:
        - Input: (*), Output: (*), same shape; values in [0, 1] summing to 1 along dim
    """

    def forward(self, input):  # noqa: A002
        return F.softmax(input, self.dim, _stacklevel=5)


class Softmin(_SoftmaxBase):
    r"""softmax(-x) along `dim`."""

    def forward(self, input):  # noqa: A002
        return F.softmin(input, self.dim, _stacklevel=5)


class LogSoftmax(_SoftmaxBase):
    r"""log(softmax(x)) along `dim`, computed stably."""

    def forward(self, input):  # noqa: A002
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    r"""Softmax over the channel dim (-3) of a (C, H, W) or (N, C, H, W) input."""

    def forward(self, input):  # noqa: A002
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             f"instead")
        return F.softmax(input, -3, _stacklevel=5)


# ---- multi-head attention -------------------------------------------------------------------
from tensorlib.nn.modules.linear import NonDynamicallyQuantizableLinear  # noqa: E402


class MultiheadAttention(Module):
    r"""Multi-head attention: Concat(head_1, ..., head_h) W^O with
    head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V) (PyTorch's parameters, names and math).

    Args:
        embed_dim: total dimension of the model
        num_heads: parallel attention heads; embed_dim must be divisible by it
        dropout: dropout on the attention weights. Default: ``0.0``
        bias: input/output projection biases. Default: ``True``
        add_bias_kv: learned biases appended to the key and value sequences (dim 0)
        add_zero_attn: a zero key/value appended to the sequences (dim 1)
        kdim, vdim: features of key and value. Default: ``embed_dim``
        batch_first: inputs and output are (N, L, E) instead of (L, N, E)

    Parameters (state_dict keys, as PyTorch): ``in_proj_weight`` (3E, E) when kdim == vdim ==
    embed_dim, else ``q_proj_weight`` (E, E), ``k_proj_weight`` (E, kdim), ``v_proj_weight``
    (E, vdim); ``in_proj_bias`` (3E); ``bias_k``/``bias_v`` (1, 1, E); ``out_proj.weight``,
    ``out_proj.bias``.

    forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False) -> (attn_output, attn_output_weights or None)
    """

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(tensorlib.empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(tensorlib.empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(tensorlib.empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(tensorlib.empty((3 * embed_dim, embed_dim),
                                                            **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(tensorlib.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        **factory)
        if add_bias_kv:
            self.bias_k = Parameter(tensorlib.empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(tensorlib.empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        if "_qkv_same_embed_dim" not in state:
            state["_qkv_same_embed_dim"] = True
        super().__setstate__(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        from tensorlib.nn._functional import attention as A
        is_batched = query.dim() == 3
        key_padding_mask = A._canonical_mask(key_padding_mask, "key_padding_mask",
                                             A._none_or_dtype(attn_mask), "attn_mask",
                                             query.dtype)
        attn_mask = A._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                      check_other=False)
        if self.batch_first and is_batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = A.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        return out, weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """(merged (N, H, L, L) float mask or the key padding mask, mask type: None, 1 or 2),
        as PyTorch's fast path takes them."""
        mask_type = None
        merged = None
        if key_padding_mask is not None:
            mask_type = 1
            merged = key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                expanded = attn_mask.reshape(batch_size, -1, seq_len, seq_len)
            else:
                expanded = attn_mask.reshape(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1)
            merged = expanded
            if key_padding_mask is not None:
                merged = expanded + key_padding_mask.reshape(batch_size, 1, 1, seq_len) \
                    .expand(-1, self.num_heads, -1, -1)
        return merged, mask_type
