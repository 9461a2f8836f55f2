"""From a traced fx graph to ONNX nodes: one rule per standard module (nn.Linear, Conv2d,
BatchNorm, pooling, LayerNorm, LSTM, MultiheadAttention, activations, Dropout...) and per
function or Tensor method; a custom op by its registered symbolic (_custom_symbolics). A
value without a rule raises UnsupportedOperatorError naming it.

Values: `ctx.value(node)` is an ONNX tensor name, or a Python structure (the tuple an LSTM
returns, None) that getitem takes apart at export time."""
import math
import operator

import numpy as np

import tensorlib
import tensorlib.nn as nn
import tensorlib.nn.functional as F
from tensorlib.library.custom_ops import CustomOpDef
from tensorlib.onnx import _custom_symbolics


class UnsupportedOperatorError(RuntimeError):
    """torch.onnx.errors.UnsupportedOperatorError: an op of the graph has no ONNX mapping."""


class Context:
    """The ONNX graph being built: nodes, initializers, fresh names."""

    def __init__(self, opset):
        from onnx import helper, numpy_helper
        self.helper, self.numpy_helper = helper, numpy_helper
        self.opset = opset
        self.nodes, self.initializers = [], []
        self.constants = {}             # initializer name -> its array
        self.domains = set()            # custom op domains the nodes use (custom symbolics)
        self._names = 0

    def fresh(self, hint="t"):
        self._names += 1
        return f"{hint}_{self._names}"

    def const(self, array, hint="c"):
        name = self.fresh(hint)
        self.constants[name] = np.asarray(array)
        self.initializers.append(self.numpy_helper.from_array(self.constants[name], name))
        return name

    def param(self, t, hint):
        return self.const(t.detach().cpu().numpy(), hint)

    def op(self, op_type, inputs, n_out=1, **attrs):
        outs = [self.fresh(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(self.helper.make_node(op_type, list(inputs), outs, **attrs))
        return outs[0] if n_out == 1 else outs

    def ints(self, values):
        return self.const(np.asarray(list(values), dtype=np.int64), "ints")


# -- modules ----------------------------------------------------------------------------------

def _linear(ctx, m, x, rank):
    w = ctx.param(m.weight.t(), "weight") if rank != 2 else ctx.param(m.weight, "weight")
    if rank == 2:
        inputs = [x, w] + ([ctx.param(m.bias, "bias")] if m.bias is not None else [])
        return ctx.op("Gemm", inputs, transB=1)
    y = ctx.op("MatMul", [x, w])
    return ctx.op("Add", [y, ctx.param(m.bias, "bias")]) if m.bias is not None else y


def _pair(v, n=2):
    return list(v) if isinstance(v, (tuple, list)) else [v] * n


def _conv(ctx, m, x):
    if isinstance(m.padding, str):
        raise UnsupportedOperatorError(f"Conv2d with padding='{m.padding}' is not exported")
    if getattr(m, "padding_mode", "zeros") != "zeros":
        raise UnsupportedOperatorError(f"Conv2d with padding_mode='{m.padding_mode}' is not "
                                       f"exported")
    p = _pair(m.padding)
    inputs = [x, ctx.param(m.weight, "weight")] + \
        ([ctx.param(m.bias, "bias")] if m.bias is not None else [])
    return ctx.op("Conv", inputs, kernel_shape=_pair(m.kernel_size), strides=_pair(m.stride),
                  pads=p + p, dilations=_pair(m.dilation), group=m.groups)


def _pool(ctx, m, x, kind):
    k = _pair(m.kernel_size)
    s = _pair(m.stride if m.stride is not None else m.kernel_size)
    p = _pair(m.padding)
    attrs = dict(kernel_shape=k, strides=s, pads=p + p, ceil_mode=int(m.ceil_mode))
    if kind == "MaxPool":
        if _pair(getattr(m, "dilation", 1)) != [1, 1]:
            attrs["dilations"] = _pair(m.dilation)
        if getattr(m, "return_indices", False):
            raise UnsupportedOperatorError("MaxPool2d(return_indices=True) is not exported")
    else:
        attrs["count_include_pad"] = int(m.count_include_pad)
    return ctx.op(kind, [x], **attrs)


def _batch_norm(ctx, m, x):
    if m.training or not m.track_running_stats:
        raise UnsupportedOperatorError("BatchNorm is exported in eval mode with running stats "
                                       "(call model.eval() first)")
    c = m.num_features
    w = m.weight if m.weight is not None else tensorlib.ones(c)
    b = m.bias if m.bias is not None else tensorlib.zeros(c)
    return ctx.op("BatchNormalization", [x, ctx.param(w, "bn_w"), ctx.param(b, "bn_b"),
                                         ctx.param(m.running_mean, "bn_mean"),
                                         ctx.param(m.running_var, "bn_var")], epsilon=m.eps)


def _layer_norm(ctx, m, x):
    n = len(m.normalized_shape)
    shape = tuple(m.normalized_shape)
    w = m.weight if m.weight is not None else tensorlib.ones(shape)
    inputs = [x, ctx.param(w, "ln_w")] + ([ctx.param(m.bias, "ln_b")] if m.bias is not None
                                          else [])
    return ctx.op("LayerNormalization", inputs, axis=-n, epsilon=m.eps)


def _gate_order(w, hidden):
    """PyTorch's i, f, g, o gate blocks as ONNX's i, o, f, c."""
    i, f, g, o = (w[k * hidden:(k + 1) * hidden] for k in range(4))
    return np.concatenate([i, o, f, g], axis=0)


def _lstm(ctx, m, args):
    if m.proj_size:
        raise UnsupportedOperatorError("LSTM export covers LSTMs without proj_size")
    if len(args) > 1 and args[1] is not None:
        raise UnsupportedOperatorError("LSTM export starts from zero states (no (h0, c0))")
    x = args[0]
    if m.batch_first:
        x = ctx.op("Transpose", [x], perm=[1, 0, 2])
    hid = m.hidden_size
    suffixes = ("", "_reverse") if m.bidirectional else ("",)
    hs, cs = [], []
    for layer in range(m.num_layers):
        def stacked(name):          # (directions, 4 * hidden, ...): ONNX's W, R and B
            return np.stack([_gate_order(getattr(m, f"{name}_l{layer}{s}").detach().cpu()
                                         .numpy(), hid) for s in suffixes])
        inputs = [x, ctx.const(stacked("weight_ih"), "lstm_w"),
                  ctx.const(stacked("weight_hh"), "lstm_r")]
        if m.bias:
            inputs.append(ctx.const(np.concatenate([stacked("bias_ih"), stacked("bias_hh")],
                                                   axis=1), "lstm_b"))
        y, h, c = ctx.op("LSTM", inputs, n_out=3, hidden_size=hid,
                         direction="bidirectional" if m.bidirectional else "forward")
        if m.bidirectional:             # (seq, 2, batch, hid) -> (seq, batch, 2 * hid)
            y = ctx.op("Transpose", [y], perm=[0, 2, 1, 3])
            x = ctx.op("Reshape", [y, ctx.ints([0, 0, 2 * hid])])
        else:
            x = ctx.op("Squeeze", [y, ctx.ints([1])])
        hs.append(h)
        cs.append(c)
    out = ctx.op("Transpose", [x], perm=[1, 0, 2]) if m.batch_first else x
    h = hs[0] if len(hs) == 1 else ctx.op("Concat", hs, axis=0)
    c = cs[0] if len(cs) == 1 else ctx.op("Concat", cs, axis=0)
    return (out, (h, c))


def _mha(ctx, m, args, kwargs):
    q, k, v = (list(args) + [kwargs.get(n) for n in ("query", "key", "value")])[:3]
    if len(args) > 3 or kwargs.get("is_causal"):
        raise UnsupportedOperatorError("MultiheadAttention export takes attn_mask and "
                                       "key_padding_mask as keywords, without is_causal")
    if m.in_proj_weight is None or m.bias_k is not None or m.add_zero_attn:
        raise UnsupportedOperatorError("MultiheadAttention export covers the packed in_proj "
                                       "without bias_k/add_zero_attn")
    e, h = m.embed_dim, m.num_heads
    d = e // h
    wq, wk, wv = (m.in_proj_weight[i * e:(i + 1) * e] for i in range(3))
    bias = m.in_proj_bias
    if not m.batch_first:
        q, k, v = (ctx.op("Transpose", [t], perm=[1, 0, 2]) for t in (q, k, v))

    def project(x, w, i):
        y = ctx.op("MatMul", [x, ctx.param(w.t(), "mha_w")])
        if bias is not None:
            y = ctx.op("Add", [y, ctx.param(bias[i * e:(i + 1) * e], "mha_b")])
        y = ctx.op("Reshape", [y, ctx.ints([0, 0, h, d])])
        return ctx.op("Transpose", [y], perm=[0, 2, 1, 3])        # (B, H, L, D)
    qh, kh, vh = project(q, wq, 0), project(k, wk, 1), project(v, wv, 2)
    scores = ctx.op("MatMul", [qh, ctx.op("Transpose", [kh], perm=[0, 1, 3, 2])])
    scores = ctx.op("Mul", [scores, ctx.const(np.float32(1.0 / math.sqrt(d)), "scale")])
    scores = _masked(ctx, scores, kwargs.get("attn_mask"), "attn_mask", 2, None)
    scores = _masked(ctx, scores, kwargs.get("key_padding_mask"), "key_padding_mask", 2,
                     [1, 2])
    attn = ctx.op("MatMul", [ctx.op("Softmax", [scores], axis=-1), vh])
    merged = ctx.op("Reshape", [ctx.op("Transpose", [attn], perm=[0, 2, 1, 3]),
                                ctx.ints([0, 0, e])])
    out = ctx.op("MatMul", [merged, ctx.param(m.out_proj.weight.t(), "mha_out_w")])
    if m.out_proj.bias is not None:
        out = ctx.op("Add", [out, ctx.param(m.out_proj.bias, "mha_out_b")])
    if not m.batch_first:
        out = ctx.op("Transpose", [out], perm=[1, 0, 2])
    return (out, None)


def _masked(ctx, scores, mask, what, rank, unsqueeze):
    """torch's attention masks on the (B, H, L, S) scores: a bool mask's True is left out
    (-inf), a float mask is added; attn_mask is (L, S), key_padding_mask (B, S). The mask
    must be a constant of the model (a buffer), whose dtype and rank are known."""
    if mask is None:
        return scores
    value = ctx.constants.get(mask)
    if value is None or value.ndim != rank:
        raise UnsupportedOperatorError(f"MultiheadAttention export takes {what} as a "
                                       f"{rank}-D constant of the model (a buffer)")
    if unsqueeze:
        mask = ctx.op("Unsqueeze", [mask, ctx.ints(unsqueeze)])
    if value.dtype == np.bool_:
        return ctx.op("Where", [mask, ctx.const(np.float32(-np.inf), "ninf"), scores])
    return ctx.op("Add", [scores, mask])


_ACTIVATIONS = {nn.ReLU: "Relu", nn.Tanh: "Tanh", nn.Sigmoid: "Sigmoid"}


def lower_module(ctx, m, args, kwargs, meta):
    x = args[0] if args else None
    for cls, onnx_op in _ACTIVATIONS.items():
        if type(m) is cls:
            return ctx.op(onnx_op, [x])
    if isinstance(m, nn.Linear):
        return _linear(ctx, m, x, meta["rank"])
    if isinstance(m, nn.Conv2d):
        return _conv(ctx, m, x)
    if isinstance(m, nn.MaxPool2d):
        return _pool(ctx, m, x, "MaxPool")
    if isinstance(m, nn.AvgPool2d):
        return _pool(ctx, m, x, "AveragePool")
    if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
        return _batch_norm(ctx, m, x)
    if isinstance(m, nn.LayerNorm):
        return _layer_norm(ctx, m, x)
    if isinstance(m, nn.Flatten):
        if m.end_dim != -1:
            raise UnsupportedOperatorError("Flatten export needs end_dim=-1")
        return ctx.op("Flatten", [x], axis=m.start_dim)
    if isinstance(m, nn.Dropout):
        return ctx.op("Identity", [x])
    if isinstance(m, nn.GELU):
        return _gelu(ctx, x)
    if isinstance(m, nn.Softmax):
        return ctx.op("Softmax", [x], axis=m.dim)
    if isinstance(m, nn.LSTM):
        return _lstm(ctx, m, args)
    if isinstance(m, nn.MultiheadAttention):
        return _mha(ctx, m, args, kwargs)
    if isinstance(m, nn.Identity):
        return x
    raise UnsupportedOperatorError(f"ONNX export: no mapping for module {type(m).__name__} "
                                   f"({type(m).__module__})")


# -- functions and methods --------------------------------------------------------------------

def _adaptive_avg_pool2d(ctx, x, size, shape):
    """GlobalAveragePool for 1x1, else an AveragePool whose windows tile the input exactly
    (the case where adaptive pooling's windows are all one size)."""
    out = _pair(size)
    out = [shape[-2 + i] if o is None else o for i, o in enumerate(out)]
    if out == [1, 1]:
        return ctx.op("GlobalAveragePool", [x])
    spatial = list(shape[-2:])
    if any(s % o for s, o in zip(spatial, out)):
        raise UnsupportedOperatorError(f"adaptive_avg_pool2d export needs the input size "
                                       f"{tuple(spatial)} to be a multiple of the output size "
                                       f"{tuple(out)}")
    kernel = [s // o for s, o in zip(spatial, out)]
    return ctx.op("AveragePool", [x], kernel_shape=kernel, strides=kernel)


def _gelu(ctx, x):
    inner = ctx.op("Erf", [ctx.op("Div", [x, ctx.const(np.float32(math.sqrt(2.0)))])])
    one_plus = ctx.op("Add", [inner, ctx.const(np.float32(1.0))])
    return ctx.op("Mul", [ctx.op("Mul", [x, one_plus]), ctx.const(np.float32(0.5))])


def _operand(ctx, v):
    if isinstance(v, str):
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise UnsupportedOperatorError(f"ONNX export: unsupported operand {v!r}")
    return ctx.const(np.float32(v), "scalar")


_OPERATOR_BINARY = {operator.add: "Add", operator.sub: "Sub", operator.mul: "Mul",
                    operator.truediv: "Div", operator.matmul: "MatMul"}


def _binary_function(target):
    """The ONNX op of a binary function (None for others); tensorlib's are read at the call:
    this module is imported before tensorlib settles its namespace's functions
    (tensorlib/_function_binding.py replaces them once)."""
    return _OPERATOR_BINARY.get(target) or {
        tensorlib.add: "Add", tensorlib.sub: "Sub", tensorlib.mul: "Mul",
        tensorlib.div: "Div", tensorlib.matmul: "MatMul"}.get(target)


_UNARY = {"relu": "Relu", "tanh": "Tanh", "sigmoid": "Sigmoid", "exp": "Exp", "log": "Log",
          "sqrt": "Sqrt", "abs": "Abs", "neg": "Neg", "erf": "Erf"}
_METHOD_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "matmul": "MatMul"}


def _dims(rank, dims):
    dims = dims if isinstance(dims, (tuple, list)) else [dims]
    return [d % rank if rank else d for d in dims]


def _reduce(ctx, kind, x, dim, keepdim, rank):
    if dim is None:
        dims = list(range(rank))
    else:
        dims = _dims(rank, dim)
    if kind == "ReduceSum" or ctx.opset >= 18:
        return ctx.op(kind, [x, ctx.ints(dims)], keepdims=int(keepdim))
    return ctx.op(kind, [x], axes=dims, keepdims=int(keepdim))


def _getitem(ctx, x, key, rank):
    if not isinstance(key, tuple):
        key = (key,)
    axis = 0
    for k in key:
        if k is Ellipsis:
            axis = rank - (len(key) - 1 - key.index(Ellipsis)) + 0
            continue
        if isinstance(k, slice):
            if k != slice(None):
                start = 0 if k.start is None else k.start
                stop = np.iinfo(np.int64).max if k.stop is None else k.stop
                step = 1 if k.step is None else k.step
                x = ctx.op("Slice", [x, ctx.ints([start]), ctx.ints([stop]), ctx.ints([axis]),
                                     ctx.ints([step])])
            axis += 1
        elif isinstance(k, int) and not isinstance(k, bool):
            x = ctx.op("Gather", [x, ctx.const(np.int64(k), "index")], axis=axis)
            rank -= 1
        else:
            raise UnsupportedOperatorError(f"ONNX export: indexing with {k!r}")
    return x


def lower_call(ctx, kind, target, args, kwargs, meta):
    """A call_function or call_method node (target: the function, or the method's name)."""
    name = target if kind == "call_method" else getattr(target, "__name__", str(target))
    rank = meta["arg_rank"]
    if kind == "call_function" and _binary_function(target) or \
            kind == "call_method" and name in _METHOD_BINARY and len(args) == 2:
        op = _binary_function(target) if kind == "call_function" else _METHOD_BINARY[name]
        return ctx.op(op, [_operand(ctx, args[0]), _operand(ctx, args[1])])
    if target is operator.getitem:
        container, key = args
        if isinstance(container, (tuple, list)):
            return container[key]
        return _getitem(ctx, container, key, rank)
    if target is operator.neg:
        return ctx.op("Neg", [args[0]])
    if name in _UNARY and (kind == "call_method" or target in (getattr(tensorlib, name, None),
                                                               getattr(F, name, None))):
        return ctx.op(_UNARY[name], [args[0]])
    if name == "gelu":
        if kwargs.get("approximate", "none") != "none":
            raise UnsupportedOperatorError("gelu export covers approximate='none'")
        return _gelu(ctx, args[0])
    if name == "leaky_relu":
        slope = kwargs.get("negative_slope", args[1] if len(args) > 1 else 0.01)
        return ctx.op("LeakyRelu", [args[0]], alpha=float(slope))
    if name == "silu":
        return ctx.op("Mul", [args[0], ctx.op("Sigmoid", [args[0]])])
    if name == "adaptive_avg_pool2d":
        size = kwargs.get("output_size", args[1] if len(args) > 1 else None)
        return _adaptive_avg_pool2d(ctx, args[0], size, meta["arg_shape"])
    if name in ("softmax", "log_softmax"):
        dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
        return ctx.op("Softmax" if name == "softmax" else "LogSoftmax", [args[0]], axis=dim)
    if name in ("mean", "sum"):
        dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
        keepdim = kwargs.get("keepdim", args[2] if len(args) > 2 else False)
        return _reduce(ctx, "ReduceMean" if name == "mean" else "ReduceSum", args[0], dim,
                       keepdim, rank)
    if name == "flatten":
        start = kwargs.get("start_dim", args[1] if len(args) > 1 else 0)
        end = kwargs.get("end_dim", args[2] if len(args) > 2 else -1)
        if end not in (-1, rank - 1):
            raise UnsupportedOperatorError("flatten export needs end_dim=-1")
        return ctx.op("Flatten", [args[0]], axis=start)
    if name in ("view", "reshape"):
        shape = args[1:] if len(args) > 2 or not isinstance(args[1], (tuple, list)) else args[1]
        return ctx.op("Reshape", [args[0], ctx.ints(shape)])
    if name in ("transpose",):
        d0, d1 = _dims(rank, [args[1], args[2]])
        perm = list(range(rank))
        perm[d0], perm[d1] = perm[d1], perm[d0]
        return ctx.op("Transpose", [args[0]], perm=perm)
    if name == "permute":
        dims = args[1] if len(args) == 2 and isinstance(args[1], (tuple, list)) else args[1:]
        return ctx.op("Transpose", [args[0]], perm=_dims(rank, dims))
    if name in ("cat", "concat"):
        dim = kwargs.get("dim", args[1] if len(args) > 1 else 0)
        return ctx.op("Concat", list(args[0]), axis=dim)
    if name in ("dropout", "contiguous", "clone", "detach"):
        return ctx.op("Identity", [args[0]])
    if name == "linear":
        w = args[1]
        y = ctx.op("MatMul", [args[0], ctx.op("Transpose", [w], perm=[1, 0])])
        b = kwargs.get("bias", args[2] if len(args) > 2 else None)
        return ctx.op("Add", [y, b]) if b is not None else y
    if kind == "call_function" and isinstance(target, CustomOpDef):
        return _custom_symbolics.lower(ctx, target, args, kwargs)
    raise UnsupportedOperatorError(f"ONNX export: no mapping for {kind} '{name}'")
