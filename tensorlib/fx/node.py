"""fx.Node: one operation of a Graph, with PyTorch FX's fields (op, target, args, kwargs,
name, meta, users)."""
import builtins
from typing import Any, Callable, Optional, Union


OPCODES = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")


def map_aggregate(a, fn):
    """Apply fn to every leaf of nested tuples/lists/dicts/slices."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(x, fn) for x in a)
        return type(a)(*t) if hasattr(a, "_fields") else t
    if isinstance(a, list):
        return [map_aggregate(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """Apply fn to every Node inside a (the arguments of a node)."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


# the type aliases of torch.fx.node that annotations (a Tracer subclass's create_proxy) name
Target = Union[Callable[..., Any], str]
Argument = Optional[Union[tuple, list, dict, slice, range, "Node", str, int, float, bool,
                          complex]]


class Node:
    def __init__(self, graph, name, op, target, args, kwargs, type_expr=None):
        if op not in OPCODES:
            raise ValueError(f"fx.Node: unknown op '{op}'; expected one of {OPCODES}")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.type = type_expr
        self.meta = {}
        self.users = {}                 # Node -> None (an ordered set)
        self._args = ()
        self._kwargs = {}
        self._input_nodes = {}
        self._prev = self._next = self
        self._erased = False
        self._update_args_kwargs(args, kwargs)

    # -- arguments and use lists -----------------------------------------------------------
    def _update_args_kwargs(self, args, kwargs):
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args, self._kwargs = tuple(args), dict(kwargs)
        self._input_nodes = {}
        map_arg((self._args, self._kwargs), lambda n: self._input_nodes.setdefault(n))
        for n in self._input_nodes:
            n.users.setdefault(self)

    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, value):
        self._update_args_kwargs(value, self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value):
        self._update_args_kwargs(self._args, value)

    @property
    def all_input_nodes(self):
        return list(self._input_nodes)

    @property
    def next(self):
        return self._next

    @property
    def prev(self):
        return self._prev

    def update_arg(self, idx, arg):
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        kwargs = dict(self._kwargs)
        kwargs[key] = arg
        self.kwargs = kwargs

    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True):
        """Point every user of this node at `replace_with`; returns the users changed."""
        changed = []
        for user in list(self.users):
            if not delete_user_cb(user):
                continue
            user._update_args_kwargs(
                map_arg(user._args, lambda n: replace_with if n is self else n),
                map_arg(user._kwargs, lambda n: replace_with if n is self else n))
            changed.append(user)
        return changed

    def replace_input_with(self, old, new):
        self._update_args_kwargs(map_arg(self._args, lambda n: new if n is old else n),
                                 map_arg(self._kwargs, lambda n: new if n is old else n))

    # -- list order --------------------------------------------------------------------------
    def prepend(self, x):
        """Move/insert node x just before this one."""
        if x is self:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev, x._next, self._prev = x, p, self, x

    def append(self, x):
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    def is_impure(self):
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            name = getattr(self.target, "__name__", "")
            return name.endswith("_") and not name.endswith("__")
        if self.op == "call_method":
            return self.target.endswith("_") and not self.target.endswith("__")
        return False

    def format_node(self):
        def fmt(a):
            return map_arg(a, lambda n: f"%{n.name}")
        return (f"%{self.name} : [num_users={len(self.users)}] = {self.op}[target="
                f"{_target_name(self.target)}](args = {fmt(self.args)}, kwargs = "
                f"{fmt(self.kwargs)})")

    def __repr__(self):
        return self.name


def _target_name(target):
    if isinstance(target, str):
        return target
    if getattr(target, "__module__", None) in ("_operator", "operator"):
        return f"operator.{target.__name__}"
    if target is builtins.getattr:
        return "getattr"
    module = getattr(target, "__module__", None) or ""
    return f"{module}.{getattr(target, '__qualname__', getattr(target, '__name__', repr(target)))}"

