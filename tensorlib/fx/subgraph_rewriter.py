"""fx.subgraph_rewriter.replace_pattern: find every non-overlapping copy of a pattern
function's graph in a GraphModule and put the replacement function's graph in its place."""
from typing import NamedTuple

from tensorlib.fx.node import Node, map_arg


class Match(NamedTuple):
    anchor: Node
    nodes_map: dict


def _trace(fn):
    from tensorlib.fx.proxy import symbolic_trace
    return fn.graph if hasattr(fn, "graph") else symbolic_trace(fn).graph


def _match(pn, gn, mapping, placeholders):
    if pn in mapping:
        return mapping[pn] is gn
    if pn.op == "placeholder":
        mapping[pn] = gn
        placeholders.append(pn)
        return True
    if pn.op != gn.op or pn.target != gn.target or len(pn.args) != len(gn.args) \
            or set(pn.kwargs) != set(gn.kwargs):
        return False
    mapping[pn] = gn

    def same(a, b):
        if isinstance(a, Node):
            return isinstance(b, Node) and _match(a, b, mapping, placeholders)
        if isinstance(a, (tuple, list)):
            return isinstance(b, (tuple, list)) and len(a) == len(b) and \
                all(same(x, y) for x, y in zip(a, b))
        return a == b
    return all(same(a, b) for a, b in zip(pn.args, gn.args)) and \
        all(same(pn.kwargs[k], gn.kwargs[k]) for k in pn.kwargs)


def replace_pattern(gm, pattern, replacement):
    """Returns the list of Matches replaced (PyTorch's replace_pattern)."""
    pgraph, rgraph = _trace(pattern), _trace(replacement)
    p_out = next(n for n in pgraph.nodes if n.op == "output")
    anchor_p = p_out.args[0]
    if not isinstance(anchor_p, Node):
        raise ValueError("replace_pattern: the pattern must return one traced value")
    p_inputs = [n for n in pgraph.nodes if n.op == "placeholder"]
    matches, used = [], set()
    for gn in list(gm.graph.nodes):
        mapping, placeholders = {}, []
        if not _match(anchor_p, gn, mapping, placeholders):
            continue
        inner = [mapping[n] for n in mapping if n.op != "placeholder"]
        if any(n in used for n in inner):
            continue
        # every matched node but the anchor must be used only inside the match
        if any(u not in inner for n in inner if n is not gn for u in n.users):
            continue
        used.update(inner)
        matches.append(Match(gn, dict(mapping)))
    for m in matches:
        gn = m.anchor
        r_inputs = [n for n in rgraph.nodes if n.op == "placeholder"]
        val_map = {r: m.nodes_map[p] for r, p in zip(r_inputs, p_inputs)}
        with gm.graph.inserting_before(gn):
            for rn in rgraph.nodes:
                if rn.op == "placeholder":
                    continue
                if rn.op == "output":
                    new_out = map_arg(rn.args[0], lambda n: val_map[n])
                    break
                val_map[rn] = gm.graph.node_copy(rn, lambda n: val_map[n])
        gn.replace_all_uses_with(new_out)
        for pn in reversed(list(pgraph.nodes)):
            if pn.op in ("placeholder", "output"):
                continue
            node = m.nodes_map[pn]
            if not node.users:
                gm.graph.erase_node(node)
    gm.recompile()
    return matches
