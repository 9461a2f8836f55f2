"""tensorlib.utils._pytree against torch.utils._pytree: the same leaves, structures (as
printed), maps and key paths for the built-in containers and registered classes."""
import collections
import subprocess
import sys

import pytest

import tensorlib
from tensorlib.utils import _pytree as ours

torch = pytest.importorskip("torch")
theirs = pytest.importorskip("torch.utils._pytree")

Point = collections.namedtuple("Point", "x y")


def _trees():
    return [
        1, None, [1, None, (2, 3)], {"b": 1, "a": [2, {"c": 3}]},
        Point(1, [2, 3]), collections.OrderedDict(z=1, y=(2,)),
        collections.defaultdict(list, {1: [4], 2: 5}), collections.deque([1, (2, 3)]),
        ((), [], {}), [Point(x=(1,), y={"k": None})],
    ]


@pytest.mark.parametrize("tree", _trees(), ids=repr)
def test_flatten_and_specs_match_torch(tree):
    leaves, spec = ours.tree_flatten(tree)
    t_leaves, t_spec = theirs.tree_flatten(tree)
    assert leaves == t_leaves
    assert repr(spec) == repr(t_spec)
    assert (spec.num_leaves, spec.num_nodes, spec.num_children) == \
        (t_spec.num_leaves, t_spec.num_nodes, t_spec.num_children)
    assert ours.treespec_pprint(spec) == theirs.treespec_pprint(t_spec)
    rebuilt = ours.tree_unflatten(leaves, spec)
    assert rebuilt == tree and type(rebuilt) is type(tree)
    assert ours.tree_leaves(tree) == theirs.tree_leaves(tree)
    keyed, _ = ours.tree_flatten_with_path(tree)
    t_keyed, _ = theirs.tree_flatten_with_path(tree)
    assert [(ours.keystr(k), v) for k, v in keyed] == \
        [(theirs.keystr(k), v) for k, v in t_keyed]


def test_maps_and_predicates():
    tree = {"a": [1, 2.0], "b": (3, "s")}
    assert ours.tree_map(lambda v: v * 2, tree) == theirs.tree_map(lambda v: v * 2, tree)
    assert ours.tree_map(lambda a, b: (a, b), [1, (2,)], [10, (20,)]) == [(1, 10), ((2, 20),)]
    assert ours.tree_map_only(int, lambda v: -v, tree) == \
        theirs.tree_map_only(int, lambda v: -v, tree)
    assert ours.tree_map_only((int, float), lambda v: 0, tree) == \
        {"a": [0, 0], "b": (0, "s")}
    assert ours.tree_all(lambda v: v is not None, tree) and not ours.tree_any(
        lambda v: v is None, tree)
    assert ours.tree_all_only(int, lambda v: v > 0, tree)
    assert not ours.tree_any_only(str, lambda v: v == "t", tree)
    seen = []
    assert ours.tree_map_(seen.append, tree) is tree and seen == [1, 2.0, 3, "s"]
    assert ours.tree_leaves([1, [2, 3]], is_leaf=lambda v: isinstance(v, list)) == [[1, [2, 3]]]
    assert ours.tree_leaves((1, [2, 3]), is_leaf=lambda v: isinstance(v, list)) == [1, [2, 3]]
    paths = ours.tree_map_with_path(lambda kp, v: ours.keystr(kp), {"a": [0]})
    assert paths == {"a": ["['a'][0]"]}


def test_tensors_are_leaves_and_structures_compare():
    x = tensorlib.ones(2)
    leaves, spec = ours.tree_flatten((x, [x]))
    assert leaves[0] is x and spec == ours.tree_structure((0, [0]))
    assert ours.tree_structure(x) == ours.LeafSpec() and spec.child(1).num_leaves == 1
    assert spec.flatten_up_to(((1, 2), [3])) == [(1, 2), 3]
    with pytest.raises(ValueError):
        spec.unflatten([1])
    with pytest.raises(ValueError):
        spec.flatten_up_to(([1], (2,)))


def test_registered_classes():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    ours.register_pytree_node(Pair, lambda p: ([p.a, p.b], "ctx"),
                              lambda children, ctx: Pair(*children))
    try:
        tree = ours.tree_map(lambda v: v + 1, [Pair(1, (2,))])
        assert tree[0].a == 2 and tree[0].b == (3,)
        assert ours.tree_leaves(Pair(1, 2)) == [1, 2]
        with pytest.raises(ValueError):
            ours.register_pytree_node(Pair, lambda p: ([], None), lambda c, x: Pair(0, 0))
        with pytest.raises(ValueError):                 # no flatten_with_keys_fn
            ours.tree_flatten_with_path(Pair(1, 2))
    finally:
        del ours.SUPPORTED_NODES[Pair]


def test_reachable_after_importing_tensorlib_alone():
    code = ("import tensorlib; u = tensorlib.utils; "
            "print(u.checkpoint.checkpoint.__name__, u._pytree.tree_map.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["checkpoint", "tree_map"]
