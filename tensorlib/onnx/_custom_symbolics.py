"""torch.onnx.register_custom_op_symbolic: how a custom op (tensorlib.library.custom_op, or a
library's, such as torchvision's) is written to ONNX.

The symbolic function is called as PyTorch's TorchScript exporter calls it, `fn(g, *args)`,
where each tensor argument is the ONNX value it lowers to and `g.op(kind, *inputs, **attrs)`
adds a node (attribute names carry PyTorch's type suffix: `to_i`, `alpha_f`, `value_t`...;
`kind` may be "domain::Op"). The helpers of torch.onnx.symbolic_opsetN are not provided
(symbolic_opset11.py says so when one is called): write nodes with `g.op`."""
import re

import numpy as np

_SYMBOLICS = {}               # "ns::name" -> {opset: fn}
_NAME = re.compile(r"^[a-zA-Z0-9-_]*::[a-zA-Z-_]+[\.a-zA-Z-_]*$")
_SUFFIXES = ("_is", "_fs", "_ss", "_ts", "_i", "_f", "_s", "_t", "_g", "_gs")


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version):
    """Use symbolic_fn for the op "ns::name" when exporting at opset_version or newer (the
    newest registration not above the export's opset wins)."""
    if symbolic_name.startswith("::"):
        symbolic_name = f"aten{symbolic_name}"
    if not _NAME.match(symbolic_name):
        raise ValueError(f"Failed to register operator {symbolic_name}. The symbolic name must "
                         f"match the format domain::name, and should start with a letter and "
                         f"contain only alphanumerical characters")
    _SYMBOLICS.setdefault(symbolic_name, {})[int(opset_version)] = symbolic_fn


def unregister_custom_op_symbolic(symbolic_name, opset_version):
    if symbolic_name.startswith("::"):
        symbolic_name = f"aten{symbolic_name}"
    _SYMBOLICS.get(symbolic_name, {}).pop(int(opset_version), None)


def symbolic_for(qualname, opset):
    """The symbolic registered for qualname at the newest opset not above `opset`, or None."""
    versions = [v for v in _SYMBOLICS.get(qualname, {}) if v <= opset]
    return _SYMBOLICS[qualname][max(versions)] if versions else None


def _attribute(value):
    """An attribute value for onnx.helper.make_node: tensors become TensorProtos."""
    from onnx import numpy_helper
    if hasattr(value, "detach"):
        return numpy_helper.from_array(np.asarray(value.detach().cpu().numpy()))
    if isinstance(value, (list, tuple)) and value and hasattr(value[0], "detach"):
        return [numpy_helper.from_array(np.asarray(v.detach().cpu().numpy())) for v in value]
    return value


class GraphContext:
    """The `g` a symbolic function receives: `g.op` adds a node to the graph being exported."""

    def __init__(self, ctx):
        self._ctx = ctx
        self.opset = ctx.opset

    def op(self, kind, *inputs, outputs=1, **attrs):
        domain, _, op_type = kind.rpartition("::")
        named = {}
        for key, value in attrs.items():
            base = next((key[:-len(s)] for s in _SUFFIXES if key.endswith(s)), key)
            named[base] = _attribute(value)
        if domain and domain != "onnx":
            named["domain"] = domain
            self._ctx.domains.add(domain)
        names = ["" if i is None else i for i in inputs]
        return self._ctx.op(op_type, names, n_out=outputs, **named)


def lower(ctx, op, args, kwargs):
    """Lower a call of custom op `op` with its registered symbolic."""
    from tensorlib.onnx._lowering import UnsupportedOperatorError
    fn = symbolic_for(op._qualname, ctx.opset)
    if fn is None:
        raise UnsupportedOperatorError(
            f"ONNX export: the custom op {op._qualname} has no symbolic for opset {ctx.opset}; "
            f"register one with torch.onnx.register_custom_op_symbolic")
    bound = op._signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return fn(GraphContext(ctx), *bound.arguments.values())
