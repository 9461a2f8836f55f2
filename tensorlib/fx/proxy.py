"""Symbolic tracing (fx.symbolic_trace, Tracer, Proxy): run a module's Python with Proxy
values that record every tensorlib function, Tensor method, operator and submodule call as a
Node instead of computing it. As in PyTorch FX, Python control flow on a traced value cannot
be recorded: `bool(proxy)`, `len(proxy)` and iteration raise TraceError.

Functions are intercepted by swapping the public functions of `tensorlib`,
`tensorlib.nn.functional` and `tensorlib.linalg` (and the traced function's own globals that
name them) for recording wrappers while a trace runs; modules by wrapping `Module.__call__`;
parameters and buffers by `Module.__getattr__`, so `self.weight` becomes a get_attr node.
"""
import builtins
import dis
import functools
import inspect
import operator
import warnings

from tensorlib._C.opdef import AliasedOp
from tensorlib.fx.graph import Graph
from tensorlib.fx.node import map_aggregate


class TraceError(ValueError):
    """What symbolic tracing cannot record (data-dependent control flow)."""


_NO_VALUE = object()


class TracerWarning(UserWarning):
    """A concrete trace (jit.trace) turned a traced value into a Python value: the graph
    holds the value this example gave, not the computation."""


class Proxy:
    """A value of the program being traced: operations on it add Nodes to its graph. In a
    concrete trace (`Tracer(concrete=True)`, jit.trace) it also holds the example's value."""
    __slots__ = ("node", "tracer", "value")

    def __init__(self, node, tracer=None, value=_NO_VALUE):
        if tracer is None:          # a Proxy over a Node of a hand-built Graph
            tracer = GraphAppendingTracer(node.graph)
        self.node, self.tracer, self.value = node, tracer, value

    def _concrete(self, what):
        if self.value is _NO_VALUE:
            return None
        return self.tracer.to_python(self, what)

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, name):
        if self.value is not _NO_VALUE and name not in ("node", "tracer", "value"):
            attr = getattr(self.value, name)
            if not callable(attr):      # x.shape, x.dtype...: the example's; x.T: a node
                return self.tracer.create_proxy("call_function", builtins.getattr,
                                                (self, name), {})
        return _Attribute(self, name)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __getitem__(self, key):
        return self.tracer.create_proxy("call_function", operator.getitem, (self, key), {})

    def __setitem__(self, key, value):
        self.tracer.create_proxy("call_function", operator.setitem, (self, key, value), {})

    def __bool__(self):
        if self.value is not _NO_VALUE:
            return bool(self._concrete("boolean"))
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         f"flow (bool() of {self.node.name})")

    def __iter__(self):
        frame = inspect.currentframe().f_back
        for inst in dis.get_instructions(frame.f_code):
            if inst.offset == frame.f_lasti and inst.opname == "UNPACK_SEQUENCE":
                # `a, b = proxy` (a module returning a tuple): one getitem node per name
                return iter([self[i] for i in range(inst.argval)])
        if self.value is not _NO_VALUE:
            return iter([self[i] for i in range(len(self.value))])
        raise TraceError(f"Proxy object cannot be iterated ({self.node.name}, at "
                         f"{frame.f_code.co_filename}:{frame.f_lineno})")

    def __len__(self):
        if self.value is not _NO_VALUE:
            return len(self._concrete("length"))
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want "
                           "this call to be recorded, please call tensorlib.fx.wrap('len') at "
                           "module scope")

    def __index__(self):
        if self.value is not _NO_VALUE:
            return self._concrete("index").__index__()
        raise TraceError(f"{self.node.name} cannot be used as a Python index while tracing")

    def __int__(self):
        if self.value is not _NO_VALUE:
            return int(self._concrete("int"))
        raise TraceError(f"int() of traced value {self.node.name}")

    def __float__(self):
        if self.value is not _NO_VALUE:
            return float(self._concrete("float"))
        raise TraceError(f"float() of traced value {self.node.name}")

    def __hash__(self):
        return id(self)

    @classmethod
    def __torch_function__(cls, orig_method, types, args=(), kwargs=None):
        """A tensorlib function called on a Proxy outside a trace's patching (a Proxy over a
        hand-built Graph's Node): one node in that Proxy's graph, call_method for a Tensor
        method, call_function otherwise."""
        from tensorlib.overrides import is_tensor_method_or_property
        kwargs = kwargs or {}
        tracer = _contains_proxy(args, kwargs)[0].tracer
        if is_tensor_method_or_property(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs)


class _Attribute(Proxy):
    __slots__ = ("root", "attr", "_node")

    def __init__(self, root, attr):
        object.__setattr__(self, "root", root)
        object.__setattr__(self, "attr", attr)
        object.__setattr__(self, "tracer", root.tracer)
        object.__setattr__(self, "_node", None)
        object.__setattr__(self, "value", _NO_VALUE)

    @property
    def node(self):
        if self._node is None:
            object.__setattr__(self, "_node", self.tracer.create_proxy(
                "call_function", builtins.getattr, (self.root, self.attr), {}).node)
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _install_operators():
    binary = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_",
              "or_", "xor", "lshift", "rshift", "eq", "ne", "lt", "le", "gt", "ge")
    for name in binary:
        fn = getattr(operator, name)
        dunder = name.rstrip("_")

        def forward(self, other, fn=fn):
            return self.tracer.create_proxy("call_function", fn, (self, other), {})

        def reflected(self, other, fn=fn):
            return self.tracer.create_proxy("call_function", fn, (other, self), {})
        setattr(Proxy, f"__{dunder}__", forward)
        setattr(Proxy, f"__r{dunder}__", reflected)
    for name in ("neg", "pos", "invert", "abs"):
        fn = getattr(operator, name)

        def unary(self, fn=fn):
            return self.tracer.create_proxy("call_function", fn, (self,), {})
        setattr(Proxy, f"__{name}__", unary)


_install_operators()

_current_tracer = [None]
_extra_wrapped = []         # (namespace dict or module, name) registered by fx.wrap


def wrap(fn_or_name):
    """fx.wrap: record calls of this global function as one call_function node (called at
    module scope of the code that is traced)."""
    frame = inspect.currentframe().f_back
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    _extra_wrapped.append((frame.f_globals, name))
    return fn_or_name


def _namespaces():
    import tensorlib
    import tensorlib.linalg
    import tensorlib.nn.functional
    return [tensorlib, tensorlib.nn.functional, tensorlib.linalg]


def _is_op(obj):
    return (inspect.isfunction(obj) or inspect.isbuiltin(obj) or isinstance(obj, AliasedOp) or
            type(obj).__name__ in ("cython_function_or_method", "fused_cython_function")) \
        and not isinstance(obj, type)


def _contains_proxy(args, kwargs):
    found = []
    map_aggregate((args, kwargs), lambda x: found.append(x) if isinstance(x, Proxy) else None)
    return found


class Tracer:
    """Turns a Module or function into a Graph. Override `is_leaf_module` to choose which
    submodules stay single call_module nodes (by default, those of tensorlib.nn except the
    containers)."""

    def __init__(self, autowrap_modules=(), autowrap_functions=(), concrete=False):
        self.autowrap_functions = tuple(autowrap_functions)
        self.graph = None
        self.root = None
        self.concrete = concrete        # compute each node's value from example inputs
        self._evaluating = False        # inside the computation of a concrete value

    # -- what becomes a node -----------------------------------------------------------------
    def is_leaf_module(self, m, module_qualified_name):
        from tensorlib.nn.modules.container import ModuleDict, ModuleList, Sequential
        return (m.__module__.startswith("tensorlib.nn") and
                not isinstance(m, (Sequential, ModuleList, ModuleDict)))

    def path_of_module(self, mod):
        for name, m in self.root.named_modules():
            if m is mod:
                return name
        raise NameError(f"module {type(mod).__name__} is not a submodule of the traced root")

    def call_module(self, m, forward, args, kwargs):
        name = self.path_of_module(m)
        if not self.is_leaf_module(m, name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", name, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        from tensorlib._tensor import Tensor
        if isinstance(attr_val, Tensor):
            for n, p in list(self.root.named_parameters()) + list(self.root.named_buffers()):
                if p is attr_val:
                    if n not in parameter_proxy_cache:
                        node = self.graph.get_attr(n)
                        node.meta["val"] = attr_val
                        parameter_proxy_cache[n] = Proxy(
                            node, self, attr_val if self.concrete else _NO_VALUE)
                    return parameter_proxy_cache[n]
        return attr_val

    def create_arg(self, a):
        from tensorlib._tensor import Tensor

        def one(x):
            if isinstance(x, Proxy):
                return x.node
            if isinstance(x, Tensor):
                for n, p in list(self.root.named_parameters()) + list(self.root.named_buffers()):
                    if p is x:
                        return self.graph.get_attr(n)
                name = f"_tensor_constant{len(self._constant_values)}"
                self._constant_values[name] = x
                return self.graph.get_attr(name)
            return x
        return map_aggregate(a, one)

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
        node = self.create_node(kind, target, self.create_arg(tuple(args)),
                                self.create_arg(dict(kwargs)), name, type_expr)
        if not self.concrete:
            return Proxy(node, self)
        value = self._evaluate(kind, target, args, kwargs)
        node.meta["val"] = value
        from tensorlib._tensor import Tensor
        if isinstance(value, Tensor):
            return Proxy(node, self, value)
        if isinstance(value, (tuple, list)) and any(isinstance(v, Tensor) for v in value):
            return Proxy(node, self, value)
        # shapes, sizes, flags: the trace keeps this example's value (as torch.jit.trace)
        self.graph.erase_node(node)
        return value

    def _evaluate(self, kind, target, args, kwargs):
        def real(a):
            return map_aggregate(a, lambda x: x.value if isinstance(x, Proxy) else x)
        a, k = real(tuple(args)), real(dict(kwargs))
        self._evaluating = True
        try:
            if kind == "call_function":
                return target(*a, **k)
            if kind == "call_method":
                return getattr(a[0], target)(*a[1:], **k)
            if kind == "call_module":
                from tensorlib.fx.graph_module import _get_path
                return _get_path(self.root, target)(*a, **k)
            raise RuntimeError(f"concrete trace: cannot evaluate a {kind} node")
        finally:
            self._evaluating = False

    def to_python(self, proxy, what):
        """A concrete trace turns a traced value into a Python value (bool(), int(), len()...):
        the example's value, with a TracerWarning (export refuses instead)."""
        warnings.warn(f"Converting a traced value ({proxy.node.name}) to a Python {what}: the "
                      f"trace holds this example's value and will not generalize to other "
                      f"inputs", TracerWarning, stacklevel=4)
        return proxy.value

    # -- the trace -------------------------------------------------------------------------
    def trace(self, root, concrete_args=None, example_inputs=None):
        from tensorlib.nn.modules.module import Module
        if _current_tracer[0] is not None:
            raise RuntimeError("symbolic_trace: nested tracing is not supported")
        self.graph = Graph(tracer_cls=type(self))
        self._constant_values = {}
        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
            fn_globals = getattr(fn, "__globals__", {})
            bound_self = [root]
        else:
            self.root = Module()
            fn = root
            fn_globals = getattr(fn, "__globals__", {})
            bound_self = []
        concrete_args = dict(concrete_args or {})
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())[len(bound_self):]
        args = []
        examples = list(example_inputs or ())
        if self.concrete and len(examples) > len(params):
            raise TypeError(f"trace: {len(examples)} example inputs for {len(params)} "
                            f"parameters of {getattr(fn, '__qualname__', fn)}")
        for p in params:
            if self.concrete:
                if examples:
                    node = self.graph.placeholder(p.name)
                    node.meta["val"] = examples[0]
                    args.append(Proxy(node, self, examples.pop(0)))
                elif p.default is not inspect.Parameter.empty:
                    args.append(p.default)
                else:
                    raise TypeError(f"trace: no example input for parameter '{p.name}'")
                continue
            if p.name in concrete_args:
                args.append(concrete_args[p.name])
                continue
            if p.kind == p.VAR_POSITIONAL:
                raise TraceError(f"symbolic_trace: *{p.name} is not supported; give concrete_args")
            if p.kind == p.VAR_KEYWORD:
                continue
            args.append(Proxy(self.graph.placeholder(p.name, default_value=p.default), self))
        result = self.run_traced(fn, bound_self, args, {}, fn_globals)
        self.graph.output(self.create_arg(result))
        return self.graph

    def run_traced(self, fn, bound_self, args, kwargs, fn_globals):
        """Call fn(*bound_self, *args, **kwargs) with tensorlib's functions, Module calls and
        parameter reads recording into self.graph; returns what fn returns."""
        from tensorlib.nn.modules.module import Module
        if _current_tracer[0] is not None:
            raise RuntimeError("symbolic_trace: nested tracing is not supported")
        patches = self._patches(fn_globals)
        param_cache = {}
        original_call = Module.__call__
        original_getattr = Module.__getattr__
        tracer = self

        def traced_call(mod, *a, **k):
            if tracer._evaluating:
                return original_call(mod, *a, **k)
            return tracer.call_module(mod, lambda *aa, **kk: original_call(mod, *aa, **kk), a, k)

        def traced_getattr(mod, name):
            value = original_getattr(mod, name)
            if tracer._evaluating:
                return value
            return tracer.getattr(name, value, param_cache)

        _current_tracer[0] = self
        for ns, name, wrapper in patches:
            _set(ns, name, wrapper)
        Module.__call__ = traced_call
        Module.__getattr__ = traced_getattr
        try:
            return fn(*bound_self, *args, **kwargs)
        finally:
            Module.__call__ = original_call
            Module.__getattr__ = original_getattr
            for ns, name, wrapper in patches:
                _set(ns, name, wrapper.__wrapped__)
            _current_tracer[0] = None

    def _patches(self, fn_globals):
        patches, originals = [], {}
        for ns in _namespaces():
            for name, obj in list(vars(ns).items()):
                if name.startswith("_") or not _is_op(obj):
                    continue
                wrapper = originals.get(id(obj))
                if wrapper is None:
                    wrapper = originals[id(obj)] = _recording(obj)
                patches.append((ns, name, wrapper))
        for name, obj in list(fn_globals.items()):
            if id(obj) in originals:
                patches.append((fn_globals, name, originals[id(obj)]))
        for g, name in _extra_wrapped:
            obj = g.get(name, getattr(builtins, name, None))
            if obj is not None and _is_op(obj):
                patches.append((g, name, originals.get(id(obj)) or _recording(obj)))
        for fn in self.autowrap_functions:
            g = fn.__globals__
            patches.append((g, fn.__name__, _recording(fn)))
        return patches


class GraphAppendingTracer(Tracer):
    """The tracer of Proxies made around the Nodes of a hand-built Graph: operations on them
    append Nodes to that Graph (fx.proxy.GraphAppendingTracer)."""

    def __init__(self, graph):
        super().__init__()
        from tensorlib.nn.modules.module import Module
        self.graph = graph
        self.root = Module()
        self._constant_values = {}


def _set(ns, name, value):
    if isinstance(ns, dict):
        ns[name] = value
    else:
        setattr(ns, name, value)


def _recording(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        proxies = _contains_proxy(args, kwargs)
        if not proxies or proxies[0].tracer._evaluating:
            return fn(*args, **kwargs)
        return proxies[0].tracer.create_proxy("call_function", fn, args, kwargs)
    return wrapper


def symbolic_trace(root, concrete_args=None):
    """fx.symbolic_trace: the GraphModule of a Module's forward (or a function)."""
    from tensorlib.fx.graph_module import GraphModule, _get_path
    from tensorlib.nn.modules.module import Module
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    attrs = {}
    for node in graph.nodes:
        if node.op in ("call_module", "get_attr"):
            constant = tracer._constant_values.get(node.target)
            attrs[node.target] = constant if constant is not None else \
                _get_path(tracer.root, node.target)
    gm = GraphModule(attrs, graph, name)
    if isinstance(root, Module):
        gm.training = root.training
    return gm
