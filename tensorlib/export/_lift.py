"""Lifting: the traced graph reads parameters, buffers and constant tensors by get_attr;
torch.export's form takes them as the graph's first inputs instead, named `p_<path>`,
`b_<path>` and `c_<name>`, which is what makes the graph a pure function of its inputs."""
from tensorlib.export.graph_signature import (ExportGraphSignature, InputKind, InputSpec,
                                              OutputKind, OutputSpec, TensorArgument)
from tensorlib.fx.graph_module import GraphModule
from tensorlib.fx.node import Node, map_aggregate


def lift(root, tracer):
    """(lifted GraphModule, signature, state_dict, constants) of a finished trace."""
    graph = tracer.graph
    params = dict(root.named_parameters())
    buffers = dict(root.named_buffers())
    persistent = set(root.state_dict())
    first = next(iter(graph.nodes))
    lifted, specs = {}, []
    constants = {}
    with graph.inserting_before(first):
        for name, p in params.items():
            lifted[name] = _placeholder(graph, "p_" + name, p)
            specs.append(InputSpec(InputKind.PARAMETER, TensorArgument(lifted[name].name),
                                   name))
        for name, b in buffers.items():
            lifted[name] = _placeholder(graph, "b_" + name, b)
            specs.append(InputSpec(InputKind.BUFFER, TensorArgument(lifted[name].name), name,
                                   name in persistent))
        for i, (name, c) in enumerate(tracer._constant_values.items()):
            key = f"lifted_tensor_{i}"
            lifted[name] = _placeholder(graph, "c_" + key, c)
            constants[key] = c
            specs.append(InputSpec(InputKind.CONSTANT_TENSOR,
                                   TensorArgument(lifted[name].name), key))
    for node in list(graph.nodes):
        if node.op == "get_attr":
            if node.target not in lifted:
                raise RuntimeError(f"export: the graph reads {node.target}, which is not a "
                                   f"parameter, buffer or tensor constant of the module")
            node.replace_all_uses_with(lifted[node.target])
            graph.erase_node(node)
    graph.eliminate_dead_code()
    for node in graph.nodes:
        if node.op == "placeholder" and node not in lifted.values():
            specs.append(InputSpec(InputKind.USER_INPUT, TensorArgument(node.name)))
    outputs = []
    out = next(n for n in reversed(graph.nodes) if n.op == "output")
    map_aggregate(out.args[0], lambda n: outputs.append(
        OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(n.name))) if isinstance(n, Node)
        else None)
    state_dict = {k: v for k, v in list(params.items()) + list(buffers.items())
                  if k in persistent}
    for k, v in buffers.items():
        if k not in persistent:
            constants[k] = v
    gm = GraphModule({}, graph, type(root).__name__)
    gm.training = root.training
    return gm, ExportGraphSignature(specs, outputs), state_dict, constants


def _placeholder(graph, name, value):
    node = graph.placeholder(name.replace(".", "_"))
    node.meta["val"] = value
    return node
