"""export's graph capture: fx's concrete tracer run through every submodule (so parameters
and buffers are read in the graph, then lifted to inputs), refusing Python control flow on
tensor data, and keeping shape arithmetic (`x.size(0)`, `x.shape[1:]`) as nodes so a graph
exported with a dynamic dimension computes its sizes from the input it is given."""
import builtins
import functools
import inspect

from tensorlib.export import dynamic_shapes as _dyn
from tensorlib.export.errors import GuardOnDataDependentSymNode, UserError
from tensorlib.fx.graph import Graph
from tensorlib.fx.node import map_aggregate
from tensorlib.fx.proxy import Proxy, Tracer

_DATA_METHODS = ("item", "tolist", "numpy", "__bool__", "__int__", "__float__", "__index__")
_SHAPE_METHODS = ("size", "numel")


class ExportTracer(Tracer):
    def __init__(self):
        super().__init__(concrete=True)
        self.conversions = []       # shape-valued nodes turned into Python values
        self.lengths = []           # tensors (and lists of them) whose len() was taken

    def is_leaf_module(self, m, module_qualified_name):
        return False

    def _patches(self, fn_globals):
        """fx's patches, plus the tensorlib functions that tensorlib.nn modules reach without
        the public namespaces (names imported into their files, internal modules' attributes,
        staticmethods such as Conv2d._fn): export traces through those modules rather than
        keeping them whole, so each is recorded as the public function it implements."""
        import sys
        patches = super()._patches(fn_globals)
        done = {(id(ns), name) for ns, name, _ in patches}
        public = {}
        for _, _, w in patches:         # the public wrapper of every function in its chain
            inner = w.__wrapped__
            while inner is not None and id(inner) not in public:
                public[id(inner)] = w
                inner = getattr(inner, "__wrapped__", None)

        def add(ns, key, name, obj):
            if (key, name) not in done:
                done.add((key, name))
                patches.append((ns, name, _alias(public[id(obj)], obj)))

        spaces = [sys.modules.get(getattr(f, "__module__", None) or "") for f in
                  {id(w.__wrapped__): w.__wrapped__ for _, _, w in patches}.values()]
        for m in self.root.modules():
            spaces += [sys.modules.get(cls.__module__) for cls in type(m).__mro__
                       if cls.__module__.startswith("tensorlib.nn")]
            for cls in type(m).__mro__:
                if cls.__module__.startswith("tensorlib.nn"):
                    for name, obj in list(vars(cls).items()):
                        if isinstance(obj, staticmethod) and id(obj.__func__) in public:
                            add(_StaticSlot(cls), id(cls), name, obj.__func__)
        for module in {id(m): m for m in spaces if m is not None and
                       m.__name__.startswith("tensorlib")}.values():
            for name, obj in list(vars(module).items()):
                if id(obj) in public and not name.startswith("__"):
                    add(module, id(module), name, obj)
        return patches

    def to_python(self, proxy, what):
        if what == "length" and _holds_tensor(proxy.value):
            self.lengths.append(proxy.node.name)    # len(x) is x.size(0): a shape, not data
            return proxy.value
        if _holds_tensor(proxy.value):
            raise GuardOnDataDependentSymNode(
                f"Could not guard on data-dependent expression: a Python {what} of the tensor "
                f"{proxy.node.name} steers the program. export records one graph for every "
                f"input; write the branch with tensor ops (tensorlib.where, masks) or move "
                f"it out of the exported forward.")
        self.conversions.append(proxy.node.name)
        return proxy.value

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
        from tensorlib._tensor import Tensor
        if kind == "call_method" and target in _DATA_METHODS:
            raise GuardOnDataDependentSymNode(
                f"Could not guard on data-dependent expression: Tensor.{target}() makes a "
                f"Python value of tensor data while exporting; keep the computation in "
                f"tensor ops")
        node = self.create_node(kind, target, self.create_arg(tuple(args)),
                                self.create_arg(dict(kwargs)), name, type_expr)
        value = self._evaluate(kind, target, args, kwargs)
        node.meta["val"] = value
        if isinstance(value, Tensor) or (isinstance(value, (tuple, list)) and
                                         any(isinstance(v, Tensor) for v in value)):
            return Proxy(node, self, value)
        if isinstance(value, (int, tuple)) and _is_shape(kind, target, args, kwargs):
            return Proxy(node, self, value)     # a size: kept, so it follows the input
        self.graph.erase_node(node)
        return value


def _alias(wrapper, original):
    """wrapper's recording under the name `original` has in another namespace (restored to
    `original` after the trace)."""
    @functools.wraps(original)
    def alias(*args, **kwargs):
        return wrapper(*args, **kwargs)
    return alias


class _StaticSlot:
    """A class seen as a namespace whose functions are staticmethods (for fx's patching)."""

    def __init__(self, cls):
        object.__setattr__(self, "cls", cls)

    def __setattr__(self, name, value):
        setattr(self.cls, name, staticmethod(value))


def _from_shape(args, kwargs):
    found = []
    map_aggregate((args, kwargs), lambda x: found.append(x) if isinstance(x, Proxy) and
                  not _holds_tensor(x.value) else None)
    return bool(found)


def _holds_tensor(value):
    from tensorlib._tensor import Tensor
    return isinstance(value, Tensor) or (isinstance(value, (tuple, list)) and
                                         any(isinstance(v, Tensor) for v in value))


def _is_shape(kind, target, args, kwargs):
    if kind == "call_function" and target is builtins.getattr and args[1] == "shape":
        return True
    if kind == "call_method" and target in _SHAPE_METHODS:
        return True
    return _from_shape(args, kwargs)


def flatten_inputs(fn, args, kwargs):
    """Bind the example to forward's signature: (bound arguments, [(input name, path)] of
    each tensor leaf, tensor leaves, {name: value} of inputs holding no tensor)."""
    from tensorlib._tensor import Tensor
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as exc:
        raise UserError(f"export: the example inputs do not match forward's signature: "
                        f"{exc}") from exc
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
           for p in bound.signature.parameters.values()):
        raise UserError("export: forward takes *args or **kwargs; export needs named "
                        "parameters")
    bound.apply_defaults()
    names, leaves, constants = [], [], {}
    for name, value in bound.arguments.items():
        found = []
        map_aggregate(value, lambda x: found.append(x) if isinstance(x, Tensor) else None)
        if not found:
            constants[name] = value
        names += [name] * len(found)
        leaves += found
    return bound, names, leaves, constants


def trace(root, bound, names, leaves):
    """The graph of root.forward on the bound example; its user inputs are placeholders
    named after forward's parameters (`x`, or `x_0`, `x_1`... for tensors in a list)."""
    from tensorlib._tensor import Tensor
    tracer = ExportTracer()
    tracer.graph = Graph(tracer_cls=ExportTracer)
    tracer.root = root
    tracer._constant_values = {}
    it = iter(leaves)
    counts = {n: names.count(n) for n in names}
    index = {}

    def placeholder(x, name):
        if not isinstance(x, Tensor):
            return x
        i = index[name] = index.get(name, -1) + 1
        node = tracer.graph.placeholder(name if counts[name] == 1 else f"{name}_{i}")
        value = next(it)
        node.meta["val"] = value
        return Proxy(node, tracer, value)

    arguments = {k: map_aggregate(v, lambda x, k=k: placeholder(x, k))
                 for k, v in bound.arguments.items()}
    call = bound.signature.bind_partial()
    call.arguments.update(arguments)
    fn = type(root).forward
    try:
        result = tracer.run_traced(fn, [root], call.args, call.kwargs,
                                   getattr(fn, "__globals__", {}))
    except TypeError as exc:
        if "Proxy" not in str(exc):
            raise
        raise UserError(f"export cannot trace through a call that takes traced values to a "
                        f"tensorlib internal no public function records ({exc}); see the "
                        f"limits in docs/compile.md") from exc
    tracer.graph.output(tracer.create_arg(result))
    return tracer


def check_dynamic(root, bound, names, leaves, shapes, first):
    """Retrace with each dynamic dimension at another size: a graph that differs, or a Python
    value taken from a size that changed, means the code specialized that dimension."""
    import tensorlib
    sizes = _dyn.other_sizes(shapes, leaves)
    if not sizes:
        return
    moved = []
    for shape, x in zip(shapes, leaves):
        y = x
        for i, d in enumerate(shape):
            if isinstance(d, list) and d[0] in sizes:
                old, new = sizes[d[0]]
                # one row fewer, or the first row again: the example's values stay
                y = y.narrow(i, 0, new) if new < old else tensorlib.cat([y, y.narrow(i, 0, 1)], i)
        moved.append(y)
    swap = dict(zip(map(id, leaves), moved))
    again = bound.signature.bind_partial()
    again.arguments.update({k: map_aggregate(v, lambda x: swap.get(id(x), x))
                            for k, v in bound.arguments.items()})
    dims = ", ".join(sorted(sizes))
    try:
        second = trace(root, again, names, moved)
    except Exception as exc:
        raise UserError(f"Constraints violated ({dims})! export retraced with "
                        f"{ {k: v[1] for k, v in sizes.items()} } and the program failed: "
                        f"{exc}") from exc
    a, b = str(first.graph).splitlines(), str(second.graph).splitlines()
    for la, lb in zip(a, b):
        if la != lb:
            raise UserError(
                f"Constraints violated ({dims})! You marked {dims} as dynamic but your code "
                f"specialized it to the example's size: the graph at another size differs "
                f"at\n  {la.strip()}\n  {lb.strip()}\nCompute sizes from the input "
                f"(x.size(0), x.shape) rather than fixing them, or drop the Dim.")
    if len(a) != len(b):
        raise UserError(f"Constraints violated ({dims})! The graph's length depends on "
                        f"the size of {dims} (a Python loop over it?)")
    lengths = {n.name: n.meta.get("val") for n in first.graph.nodes}
    for n in second.graph.nodes:
        if n.name in second.lengths and len(n.meta["val"]) != len(lengths[n.name]):
            raise UserError(
                f"Constraints violated ({dims})! You marked {dims} as dynamic but your code "
                f"specialized it: len() of {n.name}, whose length follows {dims} (a Python "
                f"loop over a dynamic dimension).")
    changed = _changed(first.graph, second.graph)
    for name in second.conversions:
        if name in changed:
            raise UserError(
                f"Constraints violated ({dims})! You marked {dims} as dynamic but your code "
                f"specialized it: Python control flow or conversion on the size value "
                f"{name}. Use a static size or tensor ops.")


def _changed(g1, g2):
    """Names of non-tensor nodes whose value moves with the dynamic sizes (and the bools
    computed from them)."""
    before = {n.name: n.meta.get("val") for n in g1.nodes}
    changed = set()
    for n in g2.nodes:
        val = n.meta.get("val")
        if n.op == "placeholder" or _holds_tensor(val):
            continue
        if before.get(n.name) != val or (isinstance(val, bool) and
                                          any(i.name in changed for i in n.all_input_nodes)):
            changed.add(n.name)
    return changed
