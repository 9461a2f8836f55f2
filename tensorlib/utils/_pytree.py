"""torch.utils._pytree: nested containers ("pytrees") flattened to a list of leaves and a
TreeSpec that rebuilds them. Tuples, lists, dicts, namedtuples, OrderedDicts, defaultdicts
and deques are nodes; register_pytree_node adds more; everything else (None included) is a
leaf. Libraries written for PyTorch map functions over their arguments with these."""
import dataclasses
from collections import OrderedDict, defaultdict, deque, namedtuple
from typing import Any, Callable, NamedTuple, Optional

__all__ = ["TreeSpec", "LeafSpec", "register_pytree_node", "tree_flatten", "tree_unflatten",
           "tree_iter", "tree_leaves", "tree_structure", "tree_map", "tree_map_",
           "tree_map_only", "tree_map_only_", "tree_all", "tree_any", "tree_all_only",
           "tree_any_only", "treespec_pprint", "tree_flatten_with_path",
           "tree_leaves_with_path", "tree_map_with_path", "keystr", "SequenceKey",
           "MappingKey", "GetAttrKey", "is_namedtuple", "is_namedtuple_instance",
           "tree_is_leaf", "SUPPORTED_NODES"]


class NodeDef(NamedTuple):
    type: type
    flatten_fn: Callable
    unflatten_fn: Callable
    flatten_with_keys_fn: Optional[Callable]


SUPPORTED_NODES = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None):
    """Make `cls` a node: flatten_fn(obj) -> (children, context), unflatten_fn(children,
    context) -> obj."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


_register_pytree_node = register_pytree_node     # the older spelling libraries still use


# ---- key paths (tree_flatten_with_path) ----------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp):
    """A key path as source text: "[0]['a'].x"."""
    return "".join(str(k) for k in kp)


# ---- the built-in nodes --------------------------------------------------------------------
def is_namedtuple_class(cls):
    return isinstance(cls, type) and issubclass(cls, tuple) and \
        isinstance(getattr(cls, "_fields", None), tuple)


def is_namedtuple(obj):
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj):
    return is_namedtuple_class(type(obj))


def _seq_keys(children):
    return [SequenceKey(i) for i in range(len(children))]


def _register_builtin(cls, flatten, unflatten, keys):
    def with_keys(obj):
        children, context = flatten(obj)
        return list(zip(keys(obj, context), children)), context
    register_pytree_node(cls, flatten, unflatten, flatten_with_keys_fn=with_keys)


_register_builtin(tuple, lambda t: (list(t), None), lambda c, _: tuple(c),
                  lambda t, _: _seq_keys(t))
_register_builtin(list, lambda t: (list(t), None), lambda c, _: list(c),
                  lambda t, _: _seq_keys(t))
_register_builtin(dict, lambda d: (list(d.values()), list(d)),
                  lambda c, keys: dict(zip(keys, c)), lambda d, keys: [MappingKey(k) for k in keys])
_register_builtin(namedtuple, lambda t: (list(t), type(t)), lambda c, cls: cls(*c),
                  lambda t, cls: [GetAttrKey(f) for f in cls._fields])
_register_builtin(OrderedDict, lambda d: (list(d.values()), list(d)),
                  lambda c, keys: OrderedDict(zip(keys, c)),
                  lambda d, keys: [MappingKey(k) for k in keys])
_register_builtin(defaultdict,
                  lambda d: (list(d.values()), [d.default_factory, list(d)]),
                  lambda c, ctx: defaultdict(ctx[0], zip(ctx[1], c)),
                  lambda d, ctx: [MappingKey(k) for k in ctx[1]])
_register_builtin(deque, lambda d: (list(d), d.maxlen), lambda c, n: deque(c, maxlen=n),
                  lambda d, _: _seq_keys(d))


def _node_type(tree):
    return namedtuple if is_namedtuple_instance(tree) else type(tree)


def tree_is_leaf(tree, is_leaf=None):
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) not in SUPPORTED_NODES


# ---- TreeSpec ------------------------------------------------------------------------------
class TreeSpec:
    """The structure of a pytree: its node type, the context that node's unflatten needs
    (dict keys, the namedtuple class...) and one spec per child; a leaf's type is None."""

    def __init__(self, type, context, children_specs):
        self.type = type
        self.context = context
        self.children_specs = list(children_specs)
        self.num_nodes = 1 + sum(c.num_nodes for c in self.children_specs)
        self.num_leaves = 1 if type is None else sum(c.num_leaves for c in self.children_specs)
        self.num_children = len(self.children_specs)

    def is_leaf(self):
        return self.type is None

    def children(self):
        return list(self.children_specs)

    def child(self, index):
        return self.children_specs[index]

    def __eq__(self, other):
        return isinstance(other, TreeSpec) and self.type == other.type and \
            self.context == other.context and self.children_specs == other.children_specs

    def __hash__(self):
        return hash((self.type, repr(self.context), tuple(self.children_specs)))

    def __repr__(self, indent=0):
        if self.is_leaf():
            return "*"
        name = "namedtuple" if self.type is namedtuple else self.type.__name__
        inner = (",\n" + " " * (indent + 2)).join(c.__repr__(indent + 2)
                                                 for c in self.children_specs)
        return f"TreeSpec({name}, {self.context!r}, [{inner}])"

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
                             f"but the spec refers to a pytree that holds {self.num_leaves} "
                             f"items ({self}).")
        return self._build(iter(leaves))

    def _build(self, it):
        if self.is_leaf():
            return next(it)
        children = [c._build(it) for c in self.children_specs]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self.context)

    def flatten_up_to(self, tree):
        """The subtrees of `tree` that sit where this spec has its leaves (tree must have
        this spec's structure down to them)."""
        out = []
        self._up_to(tree, out)
        return out

    def _up_to(self, tree, out):
        if self.is_leaf():
            out.append(tree)
            return
        kind = _node_type(tree)
        if kind is not self.type:
            raise ValueError(f"Node type mismatch; expected {self.type}, but got {kind}.")
        children, context = SUPPORTED_NODES[kind].flatten_fn(tree)
        if len(children) != self.num_children:
            raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got "
                             f"{len(children)}.")
        if context != self.context:
            raise ValueError(f"Node context mismatch for custom node type {self.type}.")
        for c, spec in zip(children, self.children_specs):
            spec._up_to(c, out)


class LeafSpec(TreeSpec):
    def __init__(self):
        super().__init__(None, None, [])


_LEAF_SPEC = LeafSpec()


# ---- flatten, unflatten and the maps -------------------------------------------------------
def tree_flatten(tree, is_leaf=None):
    """(leaves, TreeSpec)."""
    leaves = []
    return leaves, _flatten(tree, is_leaf, leaves)


def _flatten(tree, is_leaf, leaves):
    if tree_is_leaf(tree, is_leaf):
        leaves.append(tree)
        return _LEAF_SPEC
    kind = _node_type(tree)
    children, context = SUPPORTED_NODES[kind].flatten_fn(tree)
    return TreeSpec(kind, context, [_flatten(c, is_leaf, leaves) for c in children])


def tree_unflatten(leaves, treespec):
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be "
                        f"instance of TreeSpec but got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """The leaves one by one, depth first."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    for child in SUPPORTED_NODES[_node_type(tree)].flatten_fn(tree)[0]:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf=None):
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """The tree with func(leaf, *matching leaves of rests) at each leaf."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(leaves, *others))


def tree_map_(func, tree, *rests, is_leaf=None):
    """func applied to every leaf for its effect; returns `tree` itself."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def _type_pred(type_or_types_or_pred):
    if isinstance(type_or_types_or_pred, (type, tuple)):
        return lambda x: isinstance(x, type_or_types_or_pred)
    if callable(type_or_types_or_pred):
        return type_or_types_or_pred
    raise TypeError("Argument must be a type, a tuple of types, or a callable.")


def map_only(type_or_types_or_pred):
    """Decorator: func applied to leaves of the given types, other leaves kept."""
    pred = _type_pred(type_or_types_or_pred)

    def wrap(func):
        def mapped(x):
            return func(x) if pred(x) else x
        return mapped
    return wrap


def tree_map_only(type_or_types_or_pred, func, tree, is_leaf=None):
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, func, tree, is_leaf=None):
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, pred, tree, is_leaf=None):
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, pred, tree, is_leaf=None):
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def treespec_pprint(treespec):
    """The spec drawn as its container with `*` at each leaf."""
    return repr(tree_unflatten([_Star()] * treespec.num_leaves, treespec))


class _Star:
    def __repr__(self):
        return "*"


# ---- with key paths ------------------------------------------------------------------------
def tree_flatten_with_path(tree, is_leaf=None):
    """([(key path, leaf)], TreeSpec)."""
    return list(_with_path(tree, is_leaf, ())), tree_structure(tree, is_leaf)


def _with_path(tree, is_leaf, path):
    if tree_is_leaf(tree, is_leaf):
        yield path, tree
        return
    node = SUPPORTED_NODES[_node_type(tree)]
    if node.flatten_with_keys_fn is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node.type}. Please "
                         f"pass a flatten_with_keys_fn argument to register_pytree_node.")
    for key, child in node.flatten_with_keys_fn(tree)[0]:
        yield from _with_path(child, is_leaf, path + (key,))


def tree_leaves_with_path(tree, is_leaf=None):
    return list(_with_path(tree, is_leaf, ()))


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """tree_map whose func also gets each leaf's key path first."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(kp, x, *xs) for (kp, x), *xs in zip(pairs, *others))
