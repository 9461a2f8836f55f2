"""The backward engine: count each node's dependencies, then run nodes when all of their
gradients have arrived (later-created nodes first among the ready ones), summing gradients
that meet at the same input and accumulating into leaves."""
import heapq

from tensorlib._C import grad_mode as _state
from tensorlib.autograd import anomaly_mode
from tensorlib.autograd.graph import AccumulateGrad


def _dependencies(roots):
    deps = {}
    seen = set()
    stack = [n for n in roots if n is not None]
    for n in stack:
        seen.add(n)
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return deps


def _check_nan(node, grads):
    for i, g in enumerate(grads):
        if g is not None and g._dtype.is_floating_point and bool(g.isnan().any()):
            trace = "".join(node._forward_trace or ["(no forward trace recorded)\n"])
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               f"output. The forward op that made this node was called "
                               f"from:\n{trace}")


def run_backward(roots, grad_roots, retain_graph, create_graph, capture=None):
    """roots: [(node, output_nr)], grad_roots: their gradients. With `capture` (a dict
    (node, output_nr) -> None) the gradients arriving there are returned instead of being
    accumulated into leaves (autograd.grad)."""
    deps = _dependencies([n for n, _ in roots])
    buffers = {}
    ready = []
    for (node, nr), g in zip(roots, grad_roots):
        if node is None:
            continue
        buf = buffers.setdefault(node, {})
        buf[nr] = g if nr not in buf else buf[nr] + g
    for node in buffers:
        if deps.get(node, 0) == 0:
            heapq.heappush(ready, (-node._sequence_nr, id(node), node))
    prev = _state.set_grad_enabled(create_graph)
    try:
        while ready:
            _, _, node = heapq.heappop(ready)
            grads_in = buffers.pop(node, {})
            grads_in = _run_pre_hooks(node, grads_in)
            if capture is not None:
                for nr, g in grads_in.items():
                    if (node, nr) in capture:
                        capture[(node, nr)] = g
            if isinstance(node, AccumulateGrad):
                if capture is None and 0 in grads_in:
                    node.accumulate(grads_in[0], create_graph)
                continue
            n_out = max(grads_in, default=-1) + 1
            grad_outputs = [grads_in.get(i) for i in range(n_out)]
            grads = node.apply(*grad_outputs)
            if anomaly_mode.is_enabled():
                _check_nan(node, grads)
            for hook in node._hooks:
                new = hook(grads, tuple(grad_outputs))
                if new is not None:
                    grads = tuple(new)
            if not retain_graph:
                node.release()
            for (nxt, nr), g in zip(node.next_functions, grads):
                if nxt is None:
                    continue
                if g is not None:
                    buf = buffers.setdefault(nxt, {})
                    buf[nr] = g if nr not in buf else buf[nr] + g
                deps[nxt] -= 1
                if deps[nxt] == 0 and nxt in buffers:
                    heapq.heappush(ready, (-nxt._sequence_nr, id(nxt), nxt))
                elif deps[nxt] == 0:
                    _skip(nxt, deps, buffers, ready)
    finally:
        _state.set_grad_enabled(prev)
    return capture


def _skip(node, deps, buffers, ready):
    """A node that received no gradient at all: its inputs lose one dependency each."""
    stack = [node]
    while stack:
        n = stack.pop()
        for nxt, _ in n.next_functions:
            if nxt is None:
                continue
            deps[nxt] -= 1
            if deps[nxt] == 0:
                if nxt in buffers:
                    heapq.heappush(ready, (-nxt._sequence_nr, id(nxt), nxt))
                else:
                    stack.append(nxt)


def _run_pre_hooks(node, grads_in):
    hooks = node._pre_hooks
    if not hooks:
        return grads_in
    for nr, fns in hooks.items():
        if nr is None or nr not in grads_in:
            continue
        for fn in fns:
            new = fn(grads_in[nr])
            if new is not None:
                grads_in[nr] = new
    for fn in hooks.get(None, ()):
        n_out = max(grads_in, default=-1) + 1
        new = fn(tuple(grads_in.get(i) for i in range(n_out)))
        if new is not None:
            grads_in = {i: g for i, g in enumerate(new) if g is not None}
    return grads_in
