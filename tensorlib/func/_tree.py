"""Nested tuples, lists and dicts of tensors (PyTorch's pytrees, the containers func uses):
flatten to leaves and a spec, rebuild from them, and spread a prefix (in_dims, out_dims,
argnums' inputs) over a tree."""
from collections import namedtuple

LEAF = None                        # the spec of a leaf
Spec = namedtuple("Spec", "kind keys children")


def tree_flatten(tree):
    """(leaves in order, spec)."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    if isinstance(tree, (tuple, list)) and not hasattr(tree, "_fields"):
        return Spec(type(tree), None, tuple(_flatten(x, leaves) for x in tree))
    if isinstance(tree, dict):
        keys = tuple(tree)
        return Spec(dict, keys, tuple(_flatten(tree[k], leaves) for k in keys))
    leaves.append(tree)
    return LEAF


def tree_unflatten(leaves, spec):
    return _unflatten(iter(leaves), spec)


def _unflatten(it, spec):
    if spec is LEAF:
        return next(it)
    children = [_unflatten(it, c) for c in spec.children]
    if spec.kind is dict:
        return dict(zip(spec.keys, children))
    return spec.kind(children)


def spec_str(spec):
    """A short picture of a spec: `*` for a leaf, as PyTorch prints tree specs."""
    if spec is LEAF:
        return "*"
    if spec.kind is dict:
        items = (f"{k!r}: {spec_str(c)}" for k, c in zip(spec.keys, spec.children))
        return "{" + ", ".join(items) + "}"
    inner = ", ".join(spec_str(c) for c in spec.children)
    if spec.kind is not tuple:
        return f"[{inner}]"
    return f"({inner},)" if len(spec.children) == 1 else f"({inner})"


def broadcast_prefix(prefix, tree, is_leaf_value):
    """One value of `prefix` per leaf of `tree`: a prefix leaf (is_leaf_value(x)) covers
    its whole subtree; containers must match the tree's. None when they do not match."""
    out = []
    return out if _spread(prefix, tree, is_leaf_value, out) else None


def _spread(prefix, tree, is_leaf_value, out):
    if is_leaf_value(prefix):
        out.extend([prefix] * len(tree_flatten(tree)[0]))
        return True
    if isinstance(prefix, dict) and isinstance(tree, dict):
        if set(prefix) != set(tree):
            return False
        return all(_spread(prefix[k], tree[k], is_leaf_value, out) for k in tree)
    if isinstance(prefix, (tuple, list)) and isinstance(tree, (tuple, list)) \
            and type(prefix) is type(tree) and len(prefix) == len(tree):
        return all(_spread(p, t, is_leaf_value, out) for p, t in zip(prefix, tree))
    return False
