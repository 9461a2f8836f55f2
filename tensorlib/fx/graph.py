"""fx.Graph: the nodes of a traced program in order, and the Python code they stand for."""
import builtins
import inspect
import keyword
import operator
import re

from tensorlib.fx.node import Node, map_arg

_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
           operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
           operator.matmul: "@", operator.and_: "&", operator.or_: "|", operator.xor: "^",
           operator.lshift: "<<", operator.rshift: ">>", operator.eq: "==", operator.ne: "!=",
           operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}


def _snake(name):
    name = re.sub(r"[^0-9a-zA-Z_]+", "_", name)
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    if not name or name[0].isdigit():
        name = "_" + name
    return name


class _InsertPoint:
    def __init__(self, graph, fn):
        self.graph, self.fn = graph, fn

    def __enter__(self):
        self.saved = self.graph._insert
        self.graph._insert = self.fn

    def __exit__(self, *exc):
        self.graph._insert = self.saved


class _NodeList:
    def __init__(self, root, reverse=False):
        self.root, self.reverse = root, reverse

    def __iter__(self):
        n = self.root._prev if self.reverse else self.root._next
        while n is not self.root:
            nxt = n._prev if self.reverse else n._next
            yield n
            n = nxt

    def __len__(self):
        return sum(1 for _ in self)

    def __reversed__(self):
        return iter(_NodeList(self.root, not self.reverse))


class Graph:
    def __init__(self, owning_module=None, tracer_cls=None):
        self._root = Node(self, "_root", "placeholder", "_root", (), {})
        self._insert = self._root.prepend
        self._names = {}
        self.owning_module = owning_module
        self._tracer_cls = tracer_cls

    @property
    def nodes(self):
        return _NodeList(self._root)

    def _unique(self, candidate):
        base = _snake(candidate)
        if keyword.iskeyword(base) or base in dir(builtins) or base in ("self", "torch",
                                                                         "tensorlib"):
            base = base + "_1"
        count = self._names.get(base)
        if count is None:
            self._names[base] = 0
            return base
        while True:
            count += 1
            name = f"{base}_{count}"
            if name not in self._names:
                self._names[base] = count
                self._names[name] = 0
                return name

    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        if name is None:
            name = _candidate(op, target)
        node = Node(self, self._unique(name), op, target, args or (), kwargs or {}, type_expr)
        self._insert(node)
        return node

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        """An input of the graph's function; `default_value` (None included) makes it
        optional, as a forward's `mask=None` is."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr, name=name)

    def get_attr(self, qualified_name, type_expr=None):
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def output(self, result, type_expr=None):
        return self.create_node("output", "output", (result,), type_expr=type_expr,
                                name="output")

    def inserting_before(self, n=None):
        return _InsertPoint(self, (n or self._root._next).prepend)

    def inserting_after(self, n=None):
        return _InsertPoint(self, (n or self._root._prev).append)

    def erase_node(self, to_erase):
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {list(to_erase.users)}!")
        to_erase._remove_from_list()
        to_erase._update_args_kwargs((), {})
        to_erase._erased = True

    def node_copy(self, node, arg_transform=lambda x: x):
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        new = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        new.meta = dict(node.meta)
        return new

    def graph_copy(self, g, val_map):
        """Copy g's nodes (but its output) into self; returns what g's output returns."""
        for node in g.nodes:
            if node.op == "output":
                return map_arg(node.args[0], lambda n: val_map[n])
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def eliminate_dead_code(self):
        """Erase nodes whose values nothing uses (impure ones stay); True if any was."""
        changed = False
        for node in reversed(self.nodes):
            if not node.users and not node.is_impure():
                self.erase_node(node)
                changed = True
        return changed

    def lint(self):
        seen = set()
        for node in self.nodes:
            for inp in node.all_input_nodes:
                if inp not in seen:
                    raise RuntimeError(f"Argument '{inp}' of Node '{node}' is used before it "
                                       f"is defined")
            seen.add(node)

    # -- code ------------------------------------------------------------------------------
    def python_code(self, root_module="self"):
        """(source of `def forward(self, ...)`, globals it needs)."""
        globals_ = {"tensorlib": __import__("tensorlib"), "operator": operator,
                    "builtins": builtins}
        names = {}

        def ref(obj):
            path = _import_path(obj)
            if path is not None:
                return path
            key = names.get(id(obj))
            if key is None:
                key = f"_fn_{_snake(getattr(obj, '__name__', 'fn'))}_{len(names)}"
                names[id(obj)] = key
                globals_[key] = obj
            return key

        def arg(a):
            if isinstance(a, Node):
                return a.name
            if isinstance(a, tuple):
                inner = ", ".join(arg(x) for x in a)
                return f"({inner},)" if len(a) == 1 else f"({inner})"
            if isinstance(a, list):
                return "[" + ", ".join(arg(x) for x in a) + "]"
            if isinstance(a, dict):
                return "{" + ", ".join(f"{k!r}: {arg(v)}" for k, v in a.items()) + "}"
            if isinstance(a, slice):
                return f"slice({arg(a.start)}, {arg(a.stop)}, {arg(a.step)})"
            if a is None or isinstance(a, (bool, int, str)):
                return repr(a)
            if isinstance(a, float):
                return repr(a) if a == a and a not in (float("inf"), float("-inf")) \
                    else f"float({str(a)!r})"
            return ref(a)

        def call(args, kwargs):
            parts = [arg(a) for a in args] + [f"{k} = {arg(v)}" for k, v in kwargs.items()]
            return ", ".join(parts)

        params, body = [], []
        for node in self.nodes:
            if node.op == "placeholder":
                default = f" = {arg(node.args[0])}" if node.args else ""
                params.append(f"{node.target}{default}" if not node.target.startswith("*")
                              else node.target)
                if node.name != node.target.lstrip("*"):
                    body.append(f"{node.name} = {node.target.lstrip('*')}")
            elif node.op == "get_attr":
                body.append(f"{node.name} = {_attr_path(root_module, node.target)}")
            elif node.op == "call_module":
                body.append(f"{node.name} = {_attr_path(root_module, node.target)}"
                            f"({call(node.args, node.kwargs)})")
            elif node.op == "call_method":
                obj, rest = node.args[0], node.args[1:]
                body.append(f"{node.name} = {arg(obj)}.{node.target}({call(rest, node.kwargs)})")
            elif node.op == "call_function":
                t = node.target
                if t in _BINARY and len(node.args) == 2 and not node.kwargs:
                    body.append(f"{node.name} = {arg(node.args[0])} {_BINARY[t]} {arg(node.args[1])}")
                elif t in _UNARY and len(node.args) == 1 and not node.kwargs:
                    body.append(f"{node.name} = {_UNARY[t]}{arg(node.args[0])}")
                elif t is operator.getitem and len(node.args) == 2:
                    body.append(f"{node.name} = {arg(node.args[0])}[{arg(node.args[1])}]")
                elif t is builtins.getattr and len(node.args) == 2:
                    body.append(f"{node.name} = {arg(node.args[0])}.{node.args[1]}")
                else:
                    body.append(f"{node.name} = {ref(t)}({call(node.args, node.kwargs)})")
            elif node.op == "output":
                body.append(f"return {arg(node.args[0])}")
        src = (f"def forward(self{''.join(', ' + p for p in params)}):\n"
               + "".join(f"    {line}\n" for line in body or ["pass"]))
        return src, globals_

    def __str__(self):
        lines = ["graph():"] + [f"    {n.format_node()}" for n in self.nodes]
        return "\n".join(lines)

    def print_tabular(self):
        rows = [(n.op, n.name, _short(n.target), n.args, n.kwargs) for n in self.nodes]
        header = ("opcode", "name", "target", "args", "kwargs")
        widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(5)]
        for r in [header] + rows:
            print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))


def _attr_path(root, target):
    expr = root
    for part in target.split("."):
        expr = f"{expr}.{part}" if part.isidentifier() and not keyword.iskeyword(part) \
            else f"getattr({expr}, {part!r})"
    return expr


def _short(target):
    return target if isinstance(target, str) else getattr(target, "__name__", repr(target))


def _candidate(op, target):
    if op == "call_module" or op == "get_attr":
        return target.replace(".", "_")
    if op == "call_method":
        return target
    name = getattr(target, "__name__", "fn")
    return name.strip("_") or "fn"


def _import_path(obj):
    """`tensorlib.x.y` when obj is reachable under that name (for readable code)."""
    import tensorlib
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__name__", None)
    if name is None:
        return None
    if module in ("_operator", "operator") and getattr(operator, name, None) is obj:
        return f"operator.{name}"
    if getattr(builtins, name, None) is obj:
        return f"builtins.{name}"
    for path, ns in (("tensorlib", tensorlib), ("tensorlib.nn.functional", tensorlib.nn.functional),
                     ("tensorlib.linalg", tensorlib.linalg)):
        if getattr(ns, name, None) is obj:
            return f"{path}.{name}"
    return None
