"""fx.Interpreter (run a GraphModule node by node, overridable per op kind) and
fx.Transformer (the same walk producing a new GraphModule)."""
import inspect

from tensorlib.fx.node import map_arg


class Interpreter:
    def __init__(self, module, garbage_collect_values=True):
        self.module = module
        self.graph = module.graph
        self.env = {}
        self.garbage_collect_values = garbage_collect_values
        self._last_use = {}
        for node in self.graph.nodes:
            for inp in node.all_input_nodes:
                self._last_use[inp] = node

    def run(self, *args, initial_env=None):
        self.env = dict(initial_env or {})
        self.args_iter = iter(args)
        dropped = {}
        for node, last in self._last_use.items():
            dropped.setdefault(last, []).append(node)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            self.env[node] = self.run_node(node)
            if self.garbage_collect_values:
                for dead in dropped.get(node, ()):
                    self.env.pop(dead, None)
            if node.op == "output":
                return self.env[node]
        return None

    def run_node(self, n):
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    def fetch_args_kwargs_from_env(self, n):
        return map_arg(n.args, lambda a: self.env[a]), map_arg(n.kwargs, lambda a: self.env[a])

    def fetch_attr(self, target):
        obj = self.module
        for part in target.split("."):
            obj = getattr(obj, part)
        return obj

    def placeholder(self, target, args, kwargs):
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one "
                               f"was not passed in!")

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]


class Transformer(Interpreter):
    """Re-traces the graph: each overridable method returns a Proxy in a new graph."""

    def __init__(self, module):
        super().__init__(module, garbage_collect_values=False)
        from tensorlib.fx.graph import Graph
        from tensorlib.fx.proxy import Tracer
        self.new_graph = Graph()
        self.tracer = Tracer()
        self.tracer.graph = self.new_graph
        self.tracer.root = module

    def placeholder(self, target, args, kwargs):
        from tensorlib.fx.proxy import Proxy
        default = args[0] if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target, args, kwargs):
        from tensorlib.fx.proxy import Proxy
        return Proxy(self.new_graph.get_attr(target), self.tracer)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target, args, kwargs):
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        return self.tracer.create_proxy("call_module", target, args, kwargs)

    def output(self, target, args, kwargs):
        return args[0]

    def run_node(self, n):
        result = super().run_node(n)
        from tensorlib.fx.proxy import Proxy
        if isinstance(result, Proxy):
            result.node.meta = dict(n.meta)
        return result

    def transform(self):
        from tensorlib.fx.graph_module import GraphModule
        self.env = {}
        self.args_iter = iter(())
        result = None
        for node in self.graph.nodes:
            if node.op == "output":
                args, _ = self.fetch_args_kwargs_from_env(node)
                result = args[0]
                break
            self.env[node] = self.run_node(node)
        self.new_graph.output(map_arg_proxy(result))
        return GraphModule(self.module, self.new_graph)


def map_arg_proxy(a):
    from tensorlib.fx.node import map_aggregate
    from tensorlib.fx.proxy import Proxy
    return map_aggregate(a, lambda x: x.node if isinstance(x, Proxy) else x)
