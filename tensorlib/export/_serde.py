"""export.save / export.load: an ExportedProgram as one tensorlib checkpoint (no pickle): the
lifted graph as data (encoded as tensorlib.jit saves graphs: call targets by name, looked up
in tensorlib and `operator` on load), the signature, the weights and the input guards."""
from tensorlib.export.exported_program import ExportedProgram
from tensorlib.export.graph_signature import (ExportGraphSignature, InputKind, InputSpec,
                                              OutputKind, OutputSpec, TensorArgument)
from tensorlib.fx.graph import Graph
from tensorlib.fx.graph_module import GraphModule

_FORMAT = "tensorlib.export/1"


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=None):
    """torch.export.save: write ep to a path or a binary file."""
    import tensorlib
    from tensorlib.jit import _encode, _target_name
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"The 'ep' parameter must be an instance of 'ExportedProgram', got "
                        f"'{type(ep).__name__}' instead.")
    graph = [{"op": n.op, "name": n.name, "target": _target_name(n.target),
              "args": _encode(n.args), "kwargs": _encode(n.kwargs)} for n in ep.graph.nodes]
    sig = ep.graph_signature
    tensorlib.save({
        "format": _FORMAT, "name": ep.graph_module._class_name, "graph": graph,
        "training": ep.graph_module.training,
        "inputs": [[s.kind.name, s.arg.name, s.target, s.persistent] for s in sig.input_specs],
        "outputs": [[s.kind.name, s.arg.name, s.target] for s in sig.output_specs],
        "state_dict": ep.state_dict, "constants": ep.constants, "call": ep._inputs,
        "example_inputs": ep.example_inputs, "extra_files": dict(extra_files or {})}, f)


def load(f, *, extra_files=None, expected_opset_version=None):
    """torch.export.load: an ExportedProgram from a file export.save wrote."""
    import tensorlib
    from tensorlib.jit import _decode, _resolve
    data = tensorlib.load(f)
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        raise RuntimeError("export.load: not a file written by tensorlib.export.save")
    graph = Graph()
    nodes = {}
    for entry in data["graph"]:
        op = entry["op"]
        target = entry["target"] if op != "call_function" else _resolve(entry["target"])
        nodes[entry["name"]] = graph.create_node(op, target, _decode(entry["args"], nodes),
                                                 _decode(entry["kwargs"], nodes),
                                                 name=entry["name"])
    gm = GraphModule({}, graph, data["name"])
    gm.training = data["training"]
    sig = ExportGraphSignature(
        [InputSpec(InputKind[k], TensorArgument(a), t, p) for k, a, t, p in data["inputs"]],
        [OutputSpec(OutputKind[k], TensorArgument(a), t) for k, a, t in data["outputs"]])
    if extra_files is not None:
        extra_files.update(data["extra_files"])
    return ExportedProgram(gm, sig, data["state_dict"], data["constants"], data["call"],
                           tuple(data["example_inputs"]))
