"""tensorlib.export: torch.export for tensorlib programs.

`export(mod, args, kwargs)` traces one call of `mod` with fx's concrete tracer through every
submodule, refuses Python control flow on tensor data (GuardOnDataDependentSymNode), and
returns an ExportedProgram whose graph takes the parameters, buffers and constant tensors
first (`p_fc_weight`, `b_bn_running_mean`, `c_lifted_tensor_0`), then the user inputs, as
torch's. `dynamic_shapes` marks dimensions that may change (Dim): sizes the code reads stay
nodes, export retraces at another size and raises UserError where the code specializes one,
and `.module()` checks its inputs against the ranges. `save`/`load` keep the program in
tensorlib's safe checkpoint format (no pickle). Layout: `graph_signature`, `dynamic_shapes`
(Dim, guards), `_trace` (the tracer), `exported_program`, `_serde`, `errors`."""
from tensorlib.export import _trace
from tensorlib.export._lift import lift
from tensorlib.export import dynamic_shapes as _dyn
from tensorlib.export._serde import load, save
from tensorlib.export.dynamic_shapes import Dim
from tensorlib.export.errors import GuardFailed, GuardOnDataDependentSymNode, UserError
from tensorlib.export.exported_program import ExportedProgram
from tensorlib.export.graph_signature import (ExportGraphSignature, InputKind, InputSpec,
                                              OutputKind, OutputSpec, TensorArgument)

__all__ = ["Dim", "ExportGraphSignature", "ExportedProgram", "GuardFailed",
           "GuardOnDataDependentSymNode", "InputKind", "InputSpec", "OutputKind", "OutputSpec",
           "TensorArgument", "UserError", "export", "load", "save"]


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False,
           preserve_module_call_signature=()):
    """torch.export.export: the graph of mod(*args, **kwargs), valid for every input the
    dynamic_shapes allow. strict is accepted for torch's signature; tracing is always the
    non-strict kind (the module's Python runs, tensorlib's calls are recorded)."""
    from tensorlib.autograd import no_grad
    from tensorlib.nn.modules.module import Module
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got "
                         f"{type(mod)}.")
    if not isinstance(args, tuple):
        raise UserError(f"Expecting `args` to be a tuple of example positional inputs, got "
                        f"{type(args)}")
    if preserve_module_call_signature:
        raise NotImplementedError(
            f"export: preserve_module_call_signature={tuple(preserve_module_call_signature)} "
            f"is not supported by tensorlib (the graph inlines every submodule)")
    kwargs = dict(kwargs or {})
    bound, names, leaves, constants = _trace.flatten_inputs(mod.forward, args, kwargs)
    shapes = _dyn.resolve(dynamic_shapes, names, leaves)
    saved = [(b, b.clone()) for b in mod.buffers()]
    try:
        tracer = _trace.trace(mod, bound, names, leaves)
        _trace.check_dynamic(mod, bound, names, leaves, shapes, tracer)
    finally:        # the traces ran the module: leave its buffers as they were, as torch
        with no_grad():
            for b, value in saved:
                b.copy_(value)
    counts = {n: names.count(n) for n in names}
    index = {}
    leaf_names = []
    for n in names:
        index[n] = index.get(n, -1) + 1
        leaf_names.append(n if counts[n] == 1 else f"{n}_{index[n]}")
    params = bound.signature.parameters.values()
    inputs = {"names": [p.name for p in params],
              "kinds": ["keyword" if p.kind is p.KEYWORD_ONLY else "positional"
                        for p in params],
              "constants": constants, "leaf_names": leaf_names, "shapes": shapes}
    gm, signature, state_dict, consts = lift(mod, tracer)
    return ExportedProgram(gm, signature, state_dict, consts, inputs,
                           example_inputs=(tuple(args), kwargs))
