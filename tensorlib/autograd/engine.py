"""The backward engine: count each node's dependencies, then run nodes when all of their
gradients have arrived (later-created nodes first among the ready ones), summing gradients
that meet at the same input and accumulating into leaves.

autograd.grad (and backward(inputs=...)) run only the part of the graph that leads to the
requested tensors, as PyTorch does: other nodes neither execute nor fire their hooks."""
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


def _needed(roots, targets):
    """The nodes from which some target node is reachable (targets included)."""
    needed = set()
    done = set()
    for root in roots:
        if root is None or root in done:
            continue
        stack = [(root, iter(root.next_functions))]
        done.add(root)
        while stack:
            node, children = stack[-1]
            for nxt, _ in children:
                if nxt is not None and nxt not in done:
                    done.add(nxt)
                    stack.append((nxt, iter(nxt.next_functions)))
                    break
            else:
                stack.pop()
                if node in targets or any(n in needed for n, _ in node.next_functions):
                    needed.add(node)
    return needed


def _check_nan(node, grads):
    for i, g in enumerate(grads):
        if g is not None and g._dtype.is_floating_point and bool(g.isnan().any()):
            trace = "".join(node._forward_trace or ["(no forward trace recorded)\n"])
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               f"output. The forward op that made this node was called "
                               f"from:\n{trace}")


def run_backward(roots, grad_roots, retain_graph, create_graph, capture=None,
                 accumulate=None):
    """roots: [(node, output_nr)], grad_roots: their gradients.

    capture: a dict (node, output_nr) -> None; the gradient arriving at each key (after the
    tensor hooks of the tensor it belongs to) is stored there (autograd.grad).
    accumulate: the AccumulateGrad nodes that may add into their leaf's .grad; None means
    every leaf when nothing is captured, and none when something is.
    With either given, only the nodes that lead to those targets run."""
    root_nodes = [n for n, _ in roots]
    deps = _dependencies(root_nodes)
    needed = None
    if capture is not None or accumulate is not None:
        targets = {n for n, _ in capture or ()} | set(accumulate or ())
        needed = _needed(root_nodes, targets)
        if accumulate is None:
            accumulate = ()
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
    check_nan = anomaly_mode.is_check_nan_enabled()
    heappop, heappush = heapq.heappop, heapq.heappush
    prev = _state.set_grad_enabled(create_graph)
    try:
        while ready:
            node = heappop(ready)[2]
            grads_in = buffers.pop(node, {})
            if needed is not None and node not in needed:
                _skip(node, deps, buffers, ready)
                continue
            if node._pre_hooks:
                grads_in = _run_pre_hooks(node, grads_in)
            if type(node) is AccumulateGrad or isinstance(node, AccumulateGrad):
                g = grads_in.get(0)
                if g is None:
                    continue
                if capture is not None and (node, 0) in capture:
                    capture[(node, 0)] = node.run_tensor_hooks(g)
                elif accumulate is None or node in accumulate:
                    node.accumulate(g, create_graph)
                continue
            if capture is not None:
                for nr, g in grads_in.items():
                    if (node, nr) in capture:
                        capture[(node, nr)] = g
            nexts = node.next_functions
            if needed is not None and not any(n in needed for n, _ in nexts):
                _skip(node, deps, buffers, ready)     # a target with nothing needed below
                continue
            if len(grads_in) == 1 and 0 in grads_in:      # the common single-output case
                grad_outputs = (grads_in[0],)
            else:
                n_out = max(grads_in, default=-1) + 1
                grad_outputs = tuple(grads_in.get(i) for i in range(n_out))
            grads = node.apply(*grad_outputs)
            if check_nan:
                _check_nan(node, grads)
            if node._hooks:
                for hook in node._hooks:
                    new = hook(grads, grad_outputs)
                    if new is not None:
                        grads = tuple(new)
            if not retain_graph:
                node.release()
            for (nxt, nr), g in zip(nexts, grads):
                if nxt is None:
                    continue
                if g is not None:
                    buf = buffers.get(nxt)
                    if buf is None:
                        buffers[nxt] = {nr: g}
                    elif nr in buf:
                        buf[nr] = buf[nr] + g
                    else:
                        buf[nr] = g
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    if nxt in buffers:
                        heappush(ready, (-nxt._sequence_nr, id(nxt), nxt))
                    else:
                        _skip(nxt, deps, buffers, ready)
    finally:
        _state.set_grad_enabled(prev)
    return capture


def _skip(node, deps, buffers, ready):
    """A node that sends no gradient on: its inputs lose one dependency each."""
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
        for fn in list(fns):
            new = fn(grads_in[nr])
            if new is not None:
                grads_in[nr] = new
    for fn in list(hooks.get(None, ())):
        n_out = max(grads_in, default=-1) + 1
        new = fn(tuple(grads_in.get(i) for i in range(n_out)))
        if new is not None:
            grads_in = {i: g for i, g in enumerate(new) if g is not None}
    return grads_in
