"""ExportedProgram: a traced graph in torch.export's lifted form (parameters, buffers and
constant tensors are its first inputs, then the user's), with the tensors it was exported
with and the input checks its dynamic_shapes imply. `.module()` turns it back into an
nn.Module that holds the weights and runs the graph."""
from tensorlib.export import dynamic_shapes as _dyn
from tensorlib.export.graph_signature import InputKind
from tensorlib.fx.graph import Graph
from tensorlib.fx.graph_module import GraphModule, _get_path
from tensorlib.fx.node import map_aggregate

__all__ = ["ExportedProgram"]


class ExportedProgram:
    """What export returns. `inputs` describes the call convention: forward's parameter
    names and kinds, which of them are tensors (graph inputs) or constants (checked equal),
    and the per-leaf shape spec ([int | [dim name, min, max]] per dimension)."""

    def __init__(self, graph_module, graph_signature, state_dict, constants, inputs,
                 example_inputs=None):
        self.graph_module = graph_module
        self.graph_signature = graph_signature
        self.state_dict = state_dict
        self.constants = constants
        self._inputs = inputs
        self.example_inputs = example_inputs

    @property
    def graph(self):
        return self.graph_module.graph

    @property
    def range_constraints(self):
        """{Dim name: (min, max)} of the dynamic dimensions (max None: unbounded)."""
        return {d[0]: (d[1], d[2]) for shape in self._inputs["shapes"] for d in shape
                if isinstance(d, list)}

    def parameters(self):
        for _, p in self.named_parameters():
            yield p

    def named_parameters(self):
        for name in self.graph_signature.parameters:
            yield name, self.state_dict[name]

    def buffers(self):
        for _, b in self.named_buffers():
            yield b

    def named_buffers(self):
        for name in self.graph_signature.buffers:
            yield name, self.state_dict.get(name, self.constants.get(name))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use "
                           "`exported_program.module()` instead.")

    def run_decompositions(self, decomp_table=None, decompose_custom_triton_ops=False):
        """The graph already calls tensorlib's own functions (there is no lower op set to
        decompose to), so the program is returned as it is."""
        return self

    def module(self):
        """An nn.Module with this program's parameters and buffers at their original names
        whose forward checks its inputs and runs the graph."""
        graph = Graph()
        env = {}
        attrs = {}
        specs = {s.arg.name: s for s in self.graph_signature.input_specs}
        for node in self.graph.nodes:
            spec = specs.get(node.name) if node.op == "placeholder" else None
            if spec is not None and spec.kind is not InputKind.USER_INPUT:
                env[node] = graph.get_attr(spec.target)
                env[node].meta = dict(node.meta)
                attrs[spec.target] = (self.state_dict[spec.target]
                                      if spec.target in self.state_dict
                                      else self.constants[spec.target])
            elif node.op == "output":
                graph.output(map_aggregate(node.args[0],
                                           lambda n: env[n] if n in env else n))
            else:
                env[node] = graph.node_copy(node, lambda n: env[n])
        buffers = [(s.target, s.persistent) for s in self.graph_signature.input_specs
                   if s.kind is InputKind.BUFFER]
        mod = _ExportedModule(attrs, graph, self._inputs, buffers)
        mod.train(self.graph_module.training)
        return mod

    def __str__(self):
        code = self.graph_module.print_readable(print_output=False)
        ranges = "{" + ", ".join(f"{k}: VR[{lo}, {'int_oo' if hi is None else hi}]"
                                 for k, (lo, hi) in self.range_constraints.items()) + "}"
        indent = "\n".join("    " + line for line in code.splitlines())
        sig = "\n".join("    " + line for line in str(self.graph_signature).splitlines())
        return (f"ExportedProgram:\n{indent}\n\nGraph signature: \n{sig}\n\n"
                f"Range constraints: {ranges}\n")

    __repr__ = __str__


class _ExportedModule(GraphModule):
    """ExportedProgram.module(): forward takes the exported forward's arguments, checks
    them against the program's guards, and runs the graph with this module's weights."""

    def __init__(self, attrs, graph, inputs, buffers):
        super().__init__(attrs, graph, "GraphModule")
        self._export_inputs = inputs
        for target, persistent in buffers:
            parent, _, leaf = target.rpartition(".")
            owner = _get_path(self, parent) if parent else self
            value = getattr(owner, leaf)
            delattr(owner, leaf)
            owner.register_buffer(leaf, value, persistent=persistent is not False)

    def recompile(self):
        src = super().recompile()
        self.__dict__["_graph_forward"] = self.__dict__.pop("forward")
        return src

    def forward(self, *args, **kwargs):
        leaves = flatten_call(self._export_inputs, args, kwargs)
        return self.__dict__["_graph_forward"](*leaves)


def flatten_call(inputs, args, kwargs):
    """The tensor leaves of a call, in the exported order, after the program's guards."""
    from tensorlib._tensor import Tensor
    from tensorlib.export.errors import GuardFailed
    names, kinds = inputs["names"], inputs["kinds"]
    values = {}
    positional = [n for n, k in zip(names, kinds) if k == "positional"]
    if len(args) > len(positional):
        raise TypeError(f"forward() takes {len(positional)} positional arguments but "
                        f"{len(args)} were given")
    values.update(zip(positional, args))
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"forward() got an unexpected keyword argument '{k}'")
        if k in values:
            raise TypeError(f"forward() got multiple values for argument '{k}'")
        values[k] = v
    leaves = []
    for name in names:
        if name not in values:
            if name in inputs["constants"]:
                continue
            raise TypeError(f"forward() missing required argument: '{name}'")
        value = values[name]
        if name in inputs["constants"]:
            if value != inputs["constants"][name]:
                raise GuardFailed(f"Guard failed: {name} == {inputs['constants'][name]!r} "
                                  f"(the value it was exported with; got {value!r})")
            continue
        map_aggregate(value, lambda x: leaves.append(x) if isinstance(x, Tensor) else None)
    _dyn.check(inputs["leaf_names"], inputs["shapes"], leaves)
    return leaves
