"""tensorlib.onnx.export: a model as an ONNX file, from the same graph capture as
tensorlib.jit.trace (fx's concrete tracer, with the standard modules that have an ONNX
mapping kept whole), written with the `onnx` package (`pip install "tensorlib[onnx]"`).
Every op of the graph is mapped by `_lowering` or the export raises UnsupportedOperatorError
naming it. `dynamo=True` is accepted and takes the same path."""

import enum

from tensorlib.onnx._custom_symbolics import (register_custom_op_symbolic,
                                              unregister_custom_op_symbolic)
from tensorlib.onnx._lowering import Context, UnsupportedOperatorError, lower_call, lower_module

__all__ = ["export", "UnsupportedOperatorError", "errors", "register_custom_op_symbolic",
           "unregister_custom_op_symbolic", "TensorProtoDataType", "is_in_onnx_export"]


class TensorProtoDataType(enum.IntEnum):
    """torch.onnx.TensorProtoDataType: ONNX's element type numbers (symbolics' `to_i=`)."""
    UNDEFINED, FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL, FLOAT16, \
        DOUBLE, UINT32, UINT64, COMPLEX64, COMPLEX128, BFLOAT16 = range(17)


DEFAULT_OPSET = 17


class errors:
    """torch.onnx.errors"""
    UnsupportedOperatorError = UnsupportedOperatorError


_KEEP_WHOLE = None
_exporting = False


def is_in_onnx_export():
    """True while export() traces a model: models branch on it to keep export-friendly
    code paths (a shape check that would be a data-dependent branch, say)."""
    return _exporting


def _keep_whole():
    global _KEEP_WHOLE
    if _KEEP_WHOLE is None:
        import tensorlib.nn as nn
        _KEEP_WHOLE = (nn.Linear, nn.Conv2d, nn.MaxPool2d, nn.AvgPool2d, nn.BatchNorm1d,
                       nn.BatchNorm2d, nn.LayerNorm, nn.Flatten, nn.Dropout, nn.ReLU, nn.Tanh,
                       nn.Sigmoid, nn.GELU, nn.Softmax, nn.LSTM, nn.MultiheadAttention,
                       nn.Identity)
    return _KEEP_WHOLE


def _onnx():
    try:
        import onnx
    except ImportError as exc:
        raise ImportError('tensorlib.onnx.export needs the onnx package: pip install '
                          '"tensorlib[onnx]"') from exc
    return onnx


def _trace(model, args):
    global _exporting
    from tensorlib.fx import Tracer

    class ExportTracer(Tracer):
        def is_leaf_module(self, m, name):
            return isinstance(m, _keep_whole())
    tracer = ExportTracer(concrete=True)
    _exporting = True
    try:
        graph = tracer.trace(model, example_inputs=args)
    finally:
        _exporting = False
    return tracer, graph


def _elem_type(onnx, dtype):
    import tensorlib
    table = {tensorlib.float32: onnx.TensorProto.FLOAT, tensorlib.float64: onnx.TensorProto.DOUBLE,
             tensorlib.int64: onnx.TensorProto.INT64, tensorlib.int32: onnx.TensorProto.INT32,
             tensorlib.bool: onnx.TensorProto.BOOL, tensorlib.float16: onnx.TensorProto.FLOAT16}
    if dtype not in table:
        raise UnsupportedOperatorError(f"ONNX export: inputs of dtype {dtype}")
    return table[dtype]


def _value_info(onnx, name, t, dynamic):
    dims = [dynamic.get(i, s) for i, s in enumerate(t.shape)]
    return onnx.helper.make_tensor_value_info(name, _elem_type(onnx, t.dtype), dims)


def _dynamic_map(spec):
    if spec is None:
        return {}
    if isinstance(spec, dict):
        return {int(k): str(v) for k, v in spec.items()}
    return {int(a): f"dim{a}" for a in spec}


def export(model, args, f=None, *, kwargs=None, export_params=True, verbose=False,
           training=None, input_names=None, output_names=None, opset_version=None,
           do_constant_folding=True, dynamic_axes=None, keep_initializers_as_inputs=None,
           dynamo=False, **_ignored):
    """torch.onnx.export: write `model` (run on the example `args`) to `f` (a path or a
    binary file); returns the onnx ModelProto."""
    import tensorlib
    from tensorlib.fx.graph_module import _get_path
    from tensorlib.fx.node import Node, map_arg
    onnx = _onnx()
    if kwargs:
        raise UnsupportedOperatorError("ONNX export takes positional example inputs")
    args = args if isinstance(args, tuple) else (args,)
    opset = opset_version or DEFAULT_OPSET
    if opset < 17:
        raise ValueError(f"tensorlib.onnx.export writes opset 17 and newer, not {opset}")
    with tensorlib.no_grad():
        tracer, graph = _trace(model, args)
    ctx = Context(opset)
    env, inputs, outputs = {}, [], []
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    input_names = list(input_names or [])
    dynamic_axes = dynamic_axes or {}
    for i, node in enumerate(placeholders):
        name = input_names[i] if i < len(input_names) else node.name
        env[node] = name
        inputs.append(_value_info(onnx, name, node.meta["val"],
                                  _dynamic_map(dynamic_axes.get(name))))
    for node in graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "get_attr":
            value = tracer._constant_values.get(node.target)
            value = value if value is not None else _get_path(tracer.root, node.target)
            env[node] = ctx.param(value, node.name)
            continue
        a = map_arg(node.args, lambda n: env[n])
        k = map_arg(node.kwargs, lambda n: env[n])
        first = node.args[0] if node.args else None
        val = first.meta.get("val") if isinstance(first, Node) else None
        meta = {"rank": val.dim() if hasattr(val, "dim") else None,
                "arg_rank": val.dim() if hasattr(val, "dim") else None,
                "arg_shape": tuple(val.shape) if hasattr(val, "shape") else None}
        if node.op == "call_module":
            env[node] = lower_module(ctx, _get_path(tracer.root, node.target), a, k, meta)
        elif node.op in ("call_function", "call_method"):
            env[node] = lower_call(ctx, node.op, node.target, a, k, meta)
        elif node.op == "output":
            result, vals = a[0], node.args[0]
            flat = list(result) if isinstance(result, (tuple, list)) else [result]
            flat_vals = list(vals) if isinstance(vals, (tuple, list)) else [vals]
            names = list(output_names or [])
            for j, (r, v) in enumerate(zip(flat, flat_vals)):
                out_name = names[j] if j < len(names) else f"output{j}" if len(flat) > 1 \
                    else "output"
                ctx.nodes.append(ctx.helper.make_node("Identity", [r], [out_name]))
                t = v.meta["val"]
                outputs.append(_value_info(onnx, out_name, t,
                                           _dynamic_map(dynamic_axes.get(out_name))))
    g = ctx.helper.make_graph(ctx.nodes, type(model).__name__, inputs, outputs,
                              ctx.initializers)
    opsets = [ctx.helper.make_opsetid("", opset)] + [ctx.helper.make_opsetid(d, 1)
                                                     for d in sorted(ctx.domains)]
    proto = ctx.helper.make_model(g, opset_imports=opsets, producer_name="tensorlib")
    onnx.checker.check_model(proto)
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    if f is not None:
        data = proto.SerializeToString()
        if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
            with open(f, "wb") as fh:
                fh.write(data)
        else:
            f.write(data)
    return proto



