"""SummaryWriter.add_graph's GraphDef, from the same capture as tensorlib.jit.trace: one
NodeDef per traced node, named by the module path it was called from (TensorBoard groups
nodes by their `/`-separated scopes), with its output shapes, and the inputs it reads."""
from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef


def _shapes(value):
    from tensorlib._tensor import Tensor
    if isinstance(value, Tensor):
        return [TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(s)) for s in value.shape])]
    if isinstance(value, (tuple, list)):
        return [s for v in value for s in _shapes(v)]
    return []


def _op_name(node, root):
    from tensorlib.fx.graph_module import _get_path
    if node.op == "call_module":
        return type(_get_path(root, node.target)).__name__
    if node.op == "call_method":
        return node.target
    if node.op == "get_attr":
        return "Parameter"
    if node.op == "placeholder":
        return "IO Node"
    if node.op == "output":
        return "IO Node"
    return getattr(node.target, "__name__", str(node.target))


def graph_def(model, input_to_model):
    """(GraphDef of model traced on input_to_model, the traced module)."""
    from tensorlib import jit
    from tensorlib.nn.modules.module import Module
    inputs = input_to_model if isinstance(input_to_model, tuple) else (input_to_model,)
    traced = jit.trace(model, inputs)
    root_name = type(model).__name__ if isinstance(model, Module) else model.__name__
    names = {}
    for node in traced.graph.nodes:
        scope = node.target.replace(".", "/") if node.op in ("call_module", "get_attr") else \
            node.name
        if node.op == "placeholder":
            names[node] = f"input/{node.name}"
        elif node.op == "output":
            names[node] = "output/output"
        else:
            names[node] = f"{root_name}/{scope}"
    defs = []
    for node in traced.graph.nodes:
        attrs = {}
        shapes = _shapes(node.meta.get("val") if node.op != "output" else
                         node.args[0].meta.get("val") if hasattr(node.args[0], "meta") else None)
        if shapes:
            attrs["_output_shapes"] = AttrValue(list=AttrValue.ListValue(shape=shapes))
        if node.op in ("call_module", "get_attr", "call_function", "call_method"):
            attrs["attr"] = AttrValue(s=f"{node.op} {node.target if isinstance(node.target, str) else getattr(node.target, '__qualname__', node.target)}".encode())
        defs.append(NodeDef(name=names[node], op=_op_name(node, traced),
                            input=[names[n] for n in node.all_input_nodes], attr=attrs))
    return GraphDef(node=defs, versions=VersionDef(producer=22)), traced
