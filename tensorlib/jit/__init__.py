"""tensorlib.jit: traced graphs that run and ship without the model's Python source.

`trace(module_or_fn, example_inputs)` runs the model once on the examples with fx's concrete
tracer (the graph capture `tensorlib.fx` gives compile's custom backends): every tensorlib
function, Tensor method and standard `nn` module called is a node; Python control flow on a
traced value follows the example and warns (`TracerWarning`), as torch.jit.trace does.
`script` compiles a module by a symbolic trace; where its forward branches on a value or
computes with a shape (which TorchScript compiles and a trace cannot), the scripted module
runs the Python forward, and only saving it raises, naming the construct. `save`/`load` keep the graph as data beside the
tensors and the standard modules it calls, in tensorlib's safe format: nothing is unpickled
and no code from the file runs (node targets are looked up by name in tensorlib, `operator`
and `builtins.getattr` only). A custom op of tensorlib.library (a C++ extension's kernel among
them) is saved by its name: loading needs it defined again, and says so when it is not."""
import builtins
import functools
import inspect
import operator
from typing import Final  # noqa: F401 - torch.jit.Final: a constant attribute's annotation

from tensorlib import _C
from tensorlib.fx import GraphModule, Tracer, TraceError
from tensorlib.fx.graph import Graph
from tensorlib.fx.graph_module import _get_path
from tensorlib.fx.node import Node
from tensorlib.fx.proxy import TracerWarning
from tensorlib.futures import Future  # noqa: F401 - torch.jit.Future is torch.futures.Future
from tensorlib.nn.modules.module import Module
from tensorlib.jit._markers import (_overload, _overload_method,  # noqa: F401 - torch.jit's
                                    _script_if_tracing, annotate, export, ignore, unused)

__all__ = ["Final", "ScriptModule", "TracedModule", "TracerWarning", "annotate", "export",
           "ignore", "is_scripting", "is_tracing", "load", "save", "script", "trace", "unused"]

_FORMAT = "tensorlib.jit/1"
_tracing = [None]              # the Tracer of the jit.trace running, if one is


class ScriptModule(Module):
    """What script returns (isinstance checks name it): a TracedModule, or a module whose
    forward stays in Python (`_python_forward_script`)."""

    def save(self, f):
        save(self, f)

    @property
    def original_name(self):
        return type(self).__name__


class TracedModule(GraphModule, ScriptModule):
    """What trace/script return: a GraphModule (`.graph`, `.code`) that can be saved.

    `input_signature` is what trace saw: [{"shape": [...], "dtype": "float32"}, ...] per
    example tensor (None after script, or when an example is not a tensor); it is saved with
    the graph so a server can check requests without the model's source."""

    input_signature = None
    # script's specialisation: {name: value} of forward arguments fixed at their defaults
    # (a `pre_logits: bool = False`), with the original signature to find them in a call;
    # a call with other values runs the scripted module's own forward (`_eager`)
    _specialized, _signature = {}, None

    def __call__(self, *args, **kwargs):
        if self._specialized:
            bound = self._signature.bind(*args, **kwargs).arguments
            for name, value in self._specialized.items():
                given = bound.pop(name, value)
                if not (given is value or (type(given) is type(value) and given == value)):
                    # another branch than the graph's: the module's own forward computes it
                    return self.__dict__["_eager"](*args, **kwargs)
            return super().__call__(**bound)
        return super().__call__(*args, **kwargs)

    def save(self, f):
        save(self, f)

    @property
    def original_name(self):
        return self._class_name


_script_classes = {}              # a module class -> its ScriptModule subclass


def _python_forward_script(module, error=None):
    """script of a module whose forward is marked @unused/@ignore (PyTorch compiles nothing
    of it and runs it in Python: torchmetrics' Metric), or that symbolic tracing cannot
    compile (its forward branches on a value, or does arithmetic on a shape: TorchScript
    compiles both, a trace cannot): a shallow copy of the module that is a ScriptModule, with
    the same parameters, buffers and submodules, running the Python forward, which is what
    the scripted one computes. Saving it raises `error`, why it has no graph."""
    cls = type(module)
    if cls not in _script_classes:
        _script_classes[cls] = type(cls.__name__, (cls, ScriptModule),
                                    {"__module__": cls.__module__})
    scripted = object.__new__(_script_classes[cls])
    scripted.__dict__.update(module.__dict__)
    for name in ("_parameters", "_buffers", "_modules"):
        if name in scripted.__dict__:
            scripted.__dict__[name] = type(module.__dict__[name])(module.__dict__[name])
    scripted.__dict__["_script_error"] = error
    return scripted


class ScriptFunction:
    """jit.script of a function that symbolic tracing cannot compile (its body calls another
    scripted function, writes through out=, branches on a value): calls run the Python
    function, which is what the scripted one computes; its graph, code and saving raise
    why it has none. Libraries script helpers at import (`@torch.jit.script`), so refusing
    there would refuse the whole library."""

    def __init__(self, fn, error):
        self._fn, self._error = fn, error
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    @property
    def graph(self):
        raise self._error

    @property
    def code(self):
        raise self._error

    def save(self, f):
        raise self._error


def _example_tuple(example_inputs):
    return example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)


def _graph_module(root, graph, name, extra):
    attrs = {}
    for node in graph.nodes:
        if node.op in ("call_module", "get_attr"):
            attrs[node.target] = extra[node.target] if node.target in extra else \
                _get_path(root, node.target)
    gm = TracedModule(attrs, graph, name)
    return gm


def trace(func, example_inputs=None, *, check_trace=False, strict=True, example_kwarg_inputs=None):
    """torch.jit.trace: the graph of one run of func (a Module or function) on the examples."""
    from tensorlib.nn.modules.module import Module
    if example_inputs is None:
        if example_kwarg_inputs is None:
            raise TypeError("jit.trace: give example_inputs (a tensor or a tuple of tensors)")
        example_inputs = tuple(example_kwarg_inputs.values())
    examples = _example_tuple(example_inputs)
    tracer = Tracer(concrete=True)
    _tracing[0] = tracer
    try:
        graph = tracer.trace(func, example_inputs=examples)
    finally:
        _tracing[0] = None
    name = type(func).__name__ if isinstance(func, Module) else func.__name__
    gm = _graph_module(tracer.root, graph, name, tracer._constant_values)
    if isinstance(func, Module):
        gm.training = func.training
    gm.input_signature = _signature(examples)
    if check_trace:
        import tensorlib
        want, got = func(*examples), gm(*examples)
        if not tensorlib.allclose(want, got, rtol=1e-5, atol=1e-6):
            raise RuntimeError("jit.trace: the traced graph does not reproduce the example's "
                               "output (check_trace)")
    return gm


def _signature(examples):
    from tensorlib._tensor import Tensor
    if not all(isinstance(x, Tensor) for x in examples):
        return None
    return [{"shape": list(x.shape), "dtype": str(x.dtype).rpartition(".")[2]} for x in examples]


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """torch.jit.script for modules and functions without data-dependent control flow (we
    compile them by symbolic tracing, not by parsing Python)."""
    from tensorlib.fx import symbolic_trace
    from tensorlib.nn.modules.module import Module
    if isinstance(obj, type):
        if issubclass(obj, Module):
            raise RuntimeError(f"Type '{obj}' cannot be compiled since it inherits from "
                               f"nn.Module, pass an instance instead")
        return obj      # a TorchScript class: PyTorch returns the class itself (PyG's dataclasses)
    if isinstance(obj, Module) and getattr(type(obj).forward, "_torchscript_modifier",
                                           None) in ("unused", "ignore"):
        return _python_forward_script(obj)
    what = getattr(obj, '__qualname__', type(obj).__name__)
    fixed = _python_defaults(obj)
    try:
        try:
            gm = symbolic_trace(obj)
            fixed = {}
        except TraceError:
            if not fixed:
                raise
            gm = symbolic_trace(obj, concrete_args=fixed)   # a `pre_logits: bool` branch
    except Exception as exc:
        if isinstance(exc, TraceError):
            error = RuntimeError(f"tensorlib.jit.script cannot compile {what}: {exc}. Its "
                                 f"forward steers Python control flow by a tensor's value; use "
                                 f"tensorlib.jit.trace with example inputs instead.")
        else:   # e.g. einops' layers look up a recipe by `input.ndim`, a proxy while tracing
            error = RuntimeError(
                f"tensorlib.jit.script cannot compile {what}: tracing its forward raised "
                f"{type(exc).__name__}: {exc}. script compiles by symbolic tracing, where a "
                f"tensor's shape, ndim and values are symbolic, so a forward that uses them "
                f"as Python values cannot be scripted; use tensorlib.jit.trace with example "
                f"inputs instead.")
        if isinstance(obj, Module):
            return _python_forward_script(obj, error)
        if not callable(obj):
            raise error from exc
        return ScriptFunction(obj, error)
    name = type(obj).__name__ if isinstance(obj, Module) else obj.__name__
    attrs = {n.target: _get_path(gm, n.target) for n in gm.graph.nodes
             if n.op in ("call_module", "get_attr")}
    out = TracedModule(attrs, gm.graph, name)
    out.training = gm.training
    if fixed:
        out._specialized = fixed
        out._signature = _forward_signature(obj)
        out.__dict__["_eager"] = obj          # not a submodule: its parameters are attrs
    return out


def _forward_signature(obj):
    from tensorlib.nn.modules.module import Module
    fn = type(obj).forward if isinstance(obj, Module) else obj
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    return sig.replace(parameters=params[1:] if isinstance(obj, Module) else params)


def _python_defaults(obj):
    """{name: default} of the forward's arguments whose default is a bool, number, string
    or None: what script may fix when the forward branches on them (TorchScript compiles
    both branches; a trace follows one)."""
    try:
        sig = _forward_signature(obj)
    except (TypeError, ValueError):
        return {}
    return {p.name: p.default for p in sig.parameters.values()
            if p.default is not inspect.Parameter.empty and p.kind not in (
                p.VAR_POSITIONAL, p.VAR_KEYWORD)
            and (p.default is None or isinstance(p.default, (bool, int, float, str)))}


def is_scripting():
    return False


def is_tracing():
    return _tracing[0] is not None


def _get_tracing_state():
    """torch._C._get_tracing_state: the tracer while jit.trace runs, else None (code asks it to
    take a trace-friendly path)."""
    return _tracing[0]


# -- save / load -------------------------------------------------------------------------------

def _target_name(target):
    if isinstance(target, str):
        return target
    if target is builtins.getattr:
        return "builtins.getattr"
    from tensorlib.library.custom_ops import CustomOpDef
    if isinstance(target, CustomOpDef):
        return "custom_op:" + target._qualname
    from tensorlib.fx.graph import _import_path
    path = _import_path(target)
    if path is None or path.startswith("builtins."):
        raise RuntimeError(f"jit.save: the graph calls {target!r}, which is not a tensorlib "
                           f"function or an operator; it cannot be saved by name")
    return path


def _resolve(path):
    if path == "builtins.getattr":
        return builtins.getattr
    if path.startswith("custom_op:"):
        from tensorlib.library.custom_ops import _OPS
        qualname = path.split(":", 1)[1]
        if qualname not in _OPS:
            raise RuntimeError(f"jit.load: the graph calls the custom op {qualname}, which is "
                               f"not defined in this process; define it with "
                               f"tensorlib.library.custom_op (and register its kernels, e.g. "
                               f"from its C++ extension) before loading")
        return _OPS[qualname]
    if path.startswith("operator."):
        fn = getattr(operator, path.split(".", 1)[1], None)
    elif path.startswith("tensorlib."):
        import importlib
        module, _, name = path.rpartition(".")
        fn = getattr(importlib.import_module(module), name, None)
    else:
        fn = None
    if fn is None or not callable(fn):
        raise RuntimeError(f"jit.load: unknown call target '{path}' (only tensorlib functions, "
                           f"operators and getattr are loaded)")
    return fn


def _encode(a):
    def one(x):
        if isinstance(x, Node):
            return {"node": x.name}
        return x
    if isinstance(a, tuple):
        return {"tuple": [_encode(x) for x in a]}
    if isinstance(a, list):
        return [_encode(x) for x in a]
    if isinstance(a, dict):
        return {"dict": {k: _encode(v) for k, v in a.items()}}
    if isinstance(a, slice):
        return {"slice": [_encode(a.start), _encode(a.stop), _encode(a.step)]}
    return one(a)


def _decode(a, nodes):
    if isinstance(a, dict):
        if "node" in a:
            return nodes[a["node"]]
        if "tuple" in a:
            return tuple(_decode(x, nodes) for x in a["tuple"])
        if "dict" in a:
            return {k: _decode(v, nodes) for k, v in a["dict"].items()}
        if "slice" in a:
            return slice(*(_decode(x, nodes) for x in a["slice"]))
    if isinstance(a, list):
        return [_decode(x, nodes) for x in a]
    return a


def save(m, f, _extra_files=None):
    """torch.jit.save: the graph as data, the tensors and the standard modules it calls."""
    import tensorlib
    if isinstance(m, ScriptFunction):
        m.save(f)
    if isinstance(m, ScriptModule) and m.__dict__.get("_script_error") is not None:
        raise m.__dict__["_script_error"]
    if not isinstance(m, GraphModule):
        raise RuntimeError("jit.save takes the result of tensorlib.jit.trace or jit.script")
    graph = []
    attrs = {}
    for node in m.graph.nodes:
        graph.append({"op": node.op, "name": node.name, "target": _target_name(node.target),
                      "args": _encode(node.args), "kwargs": _encode(node.kwargs)})
        if node.op in ("call_module", "get_attr"):
            attrs[node.target] = _get_path(m, node.target)
    tensorlib.save({"format": _FORMAT, "name": m._class_name, "training": m.training,
                    "graph": graph, "attrs": attrs,
                    "inputs": getattr(m, "input_signature", None)}, f)


def load(f, map_location=None, _extra_files=None):
    """torch.jit.load: rebuild a saved trace without the model's source."""
    import tensorlib
    data = tensorlib.load(f, map_location=map_location)
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        raise RuntimeError("jit.load: not a file written by tensorlib.jit.save")
    graph = Graph()
    nodes = {}
    for entry in data["graph"]:
        op = entry["op"]
        target = entry["target"] if op in ("placeholder", "get_attr", "call_module",
                                           "call_method", "output") else _resolve(entry["target"])
        node = graph.create_node(op, target, _decode(entry["args"], nodes),
                                 _decode(entry["kwargs"], nodes), name=entry["name"])
        nodes[entry["name"]] = node
    gm = TracedModule(data["attrs"], graph, data["name"])
    gm.training = data["training"]
    gm.input_signature = data.get("inputs")
    return gm


# where PyTorch programs reach it
_C._get_tracing_state = _get_tracing_state
