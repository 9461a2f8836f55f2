"""The model store: which models are served, loaded from files `tensorlib.jit.save` or
`tensorlib.export.save` wrote.

A file is read only if it starts with tensorlib's checkpoint magic, and then only through
`tensorlib.jit.load` or `tensorlib.export.load` (JSON header, raw tensor bytes, call targets
looked up by name in tensorlib and `operator`): a pickle, a PyTorch zip or a truncated file
is refused before anything in it is interpreted."""
import os

from tensorlib.serve.errors import BadRequest, Conflict, ModelNotFound

_MAGIC = b"\x89TLCKPT\n"      # tensorlib/_serialization/native.py


def load_graph(path, device="cpu"):
    """The TracedModule saved at `path`, in eval mode on `device`; BadRequest otherwise."""
    from tensorlib import jit
    from tensorlib.serialization import CheckpointError
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            head = f.read(len(_MAGIC))
    except OSError as exc:
        raise BadRequest(f"cannot read model file '{path}': {exc.strerror}") from None
    if head != _MAGIC:
        raise BadRequest(f"'{path}' is not a graph saved by tensorlib.jit.save (it does not "
                         f"start with tensorlib's checkpoint header; pickles are never loaded)")
    try:
        try:
            module = jit.load(path, map_location=device)
        except RuntimeError as exc:
            if "not a file written by tensorlib.jit.save" not in str(exc):
                raise
            module = _exported_module(path, device)
    except (CheckpointError, RuntimeError, KeyError, TypeError, ValueError, AttributeError,
            IndexError) as exc:         # a malformed file is the client's error, not ours
        raise BadRequest(f"'{path}' is not a loadable tensorlib.jit graph or exported "
                         f"program: {exc}") from None
    module.eval()
    return module


def _exported_module(path, device):
    """An ExportedProgram (tensorlib.export.save) as a served module. Requests are stacked
    along dim 0, so every input's dim 0 must have been exported dynamic (export.Dim)."""
    from tensorlib import export, jit
    program = export.load(path)
    shapes = program._inputs["shapes"]      # per input: ints, or [name, min, max] if dynamic
    static = [i for i, shape in enumerate(shapes) if not shape or not isinstance(shape[0], list)]
    if static:
        raise BadRequest(f"'{path}' is an exported program whose input(s) {static} have a "
                         f"static dim 0: export it with a dynamic batch dimension "
                         f"(dynamic_shapes with tensorlib.export.Dim) to serve it")
    module = program.module().to(device)
    module.input_signature = jit._signature(program.example_inputs[0])
    return module


class ModelEntry:
    """One served model: its graph, its input signature and its batching settings."""

    def __init__(self, name, url, module, batch_size, max_batch_delay_ms, device):
        self.name = name
        self.url = url
        self.module = module
        self.batch_size = batch_size
        self.max_batch_delay_ms = max_batch_delay_ms
        self.device = device
        self.n_inputs = sum(1 for n in module.graph.nodes if n.op == "placeholder")
        self.signature = module.input_signature
        if self.signature is not None and len(self.signature) != self.n_inputs:
            self.signature = None
        self.workers = None         # a workers.WorkerGroup once the store starts it

    def describe_signature(self):
        if self.signature is None:
            return f"{self.n_inputs} input(s), shapes not recorded in the file"
        parts = []
        for s in self.signature:
            dims = ", ".join(["N"] + [str(d) for d in s["shape"][1:]])
            parts.append(f"({dims}) {s['dtype']}")
        return "inputs: " + "; ".join(parts) + " (N: any batch size)"

    def signature_json(self):
        if self.signature is None:
            return [{"shape": None, "dtype": None} for _ in range(self.n_inputs)]
        return [{"shape": [None] + list(s["shape"][1:]), "dtype": s["dtype"]}
                for s in self.signature]


class ModelStore:
    """name -> ModelEntry, with the checks the management API answers with."""

    def __init__(self):
        self._models = {}

    def __contains__(self, name):
        return name in self._models

    def names(self):
        return list(self._models)

    def get(self, name):
        try:
            return self._models[name]
        except KeyError:
            raise ModelNotFound(f"Model not found: {name}") from None

    def check_new(self, name):
        if not name or "/" in name:
            raise BadRequest(f"invalid model name '{name}'")
        if name in self._models:
            raise Conflict(f"Model {name} is already registered.")

    def add(self, entry):
        self.check_new(entry.name)
        self._models[entry.name] = entry

    def remove(self, name):
        return self._models.pop(self.get(name).name)

    def entries(self):
        return list(self._models.values())
