# The backward engine, included by autograd.pyx (one module: the engine reads the nodes' C
# fields and the module's anomaly switches directly). run_backward counts each node's
# dependencies from the roots, runs nodes as their gradients complete (the latest-recorded
# ready node first) and accumulates the leaves' .grad; with targets (autograd.grad) only the
# nodes that lead to them run.
cdef dict _dependencies(list roots):
    cdef dict deps = {}
    cdef set seen = set()
    cdef list stack = []
    for n in roots:                 # a root given twice (grad([y, y], x)) is walked once
        if n is not None and n not in seen:
            seen.add(n)
            stack.append(n)
    while stack:
        node = stack.pop()
        for nxt, _ in (<Node>node).next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return deps


cdef set _needed(list roots, set targets):
    """The nodes from which some target node is reachable (targets included)."""
    cdef set needed = set(), done = set()
    for root in roots:
        if root is None or root in done:
            continue
        stack = [(root, iter((<Node>root).next_functions))]
        done.add(root)
        while stack:
            node, children = stack[-1]
            for nxt, _ in children:
                if nxt is not None and nxt not in done:
                    done.add(nxt)
                    stack.append((nxt, iter((<Node>nxt).next_functions)))
                    break
            else:
                stack.pop()
                if node in targets or any(n in needed for n, _ in (<Node>node).next_functions):
                    needed.add(node)
    return needed


cdef _check_nan(Node node, grads):
    for i, g in enumerate(grads):
        if g is not None and g._dtype.is_floating_point and bool(g.isnan().any()):
            trace = "".join(node._forward_trace or ["(no forward trace recorded)\n"])
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               f"output. The forward op that made this node was called "
                               f"from:\n{trace}")


cdef bint _owned(object g, dict grads_in):
    """Nothing but this engine holds gradient g or its memory, so a leaf may keep it as its
    .grad without a copy: g is referenced only by `grads_in`, the caller's local and our
    argument, and its storage only by g, its base (a view of an op's temporary output, held
    by nothing else) and their cached host views."""
    cdef TensorImpl t = <TensorImpl>g                # (a typed local holds a reference)
    if Py_REFCNT(g) != 3:                           # grads_in, the caller's g, t
        return False
    cdef object storage = t._storage               # our local is one more holder
    cdef Py_ssize_t holders = 2 + (t._cache is not None)
    cdef object base = t._base
    if base is not None:
        if Py_REFCNT(base) != 2:                    # t._base and our local
            return False
        holders += 1 + ((<TensorImpl>base)._cache is not None)
    return Py_REFCNT(storage) == holders


cdef long long _leaf_order = 0
# below every -sequence_nr a node can have
cdef long long _LEAF_FIRST = -(1 << 62)


cdef inline void _push(list ready, Node node):
    """Ready nodes run later-created first; a leaf's accumulation runs as soon as it is
    ready, in the order leaves became ready (PyTorch gives AccumulateGrad the highest
    priority): its hooks fire last layer first, as programs that watch them expect."""
    global _leaf_order
    if isinstance(node, AccumulateGrad):
        _leaf_order += 1
        heapq.heappush(ready, (_LEAF_FIRST, _leaf_order, node))
    else:
        heapq.heappush(ready, (-node._sequence_nr, id(node), node))


cdef void _skip(Node node, dict deps, dict buffers, list ready) except *:
    """A node that sends no gradient on: its inputs lose one dependency each."""
    cdef list stack = [node]
    while stack:
        n = stack.pop()
        for nxt, _ in (<Node>n).next_functions:
            if nxt is None:
                continue
            left = deps[nxt] - 1
            deps[nxt] = left
            if left == 0:
                if nxt in buffers:
                    _push(ready, <Node>nxt)
                else:
                    stack.append(nxt)


cdef dict _run_pre_hooks(Node node, dict grads_in):
    cdef dict hooks = node._pre_hooks
    for nr, fns in hooks.items():
        if nr is None or nr not in grads_in:
            continue
        for fn in list(fns):
            grads_in[nr] = _hooked(grads_in[nr], fn(grads_in[nr]))
    for fn in list(hooks.get(None, ())):
        n_out = max(grads_in, default=-1) + 1
        new = fn(tuple(grads_in.get(i) for i in range(n_out)))
        if new is not None:
            grads_in = {i: g for i, g in enumerate(new) if g is not None}
    return grads_in


def run_backward(list roots, list grad_roots, bint retain_graph, bint create_graph,
                 dict capture=None, accumulate=None):
    """Run the graph backward from `roots` [(node, output_nr)] seeded with `grad_roots`,
    nodes in dependency order (later-created first among the ready ones), summing gradients
    that meet at the same input and accumulating into leaves.

    capture: a dict (node, output_nr) -> None; the gradient arriving at each key (after the
    tensor hooks of the tensor it belongs to) is stored there (autograd.grad).
    accumulate: the AccumulateGrad nodes that may add into their leaf's .grad; None means
    every leaf when nothing is captured, and none when something is.
    With either given, only the nodes that lead to those targets run, as in PyTorch."""
    cdef list root_nodes = [n for n, _ in roots]
    cdef dict deps = _dependencies(root_nodes)
    cdef set needed = None
    cdef dict buffers = {}
    cdef dict buf, grads_in
    cdef list ready = []
    cdef Node node
    cdef tuple grad_outputs, nexts
    if capture is not None or accumulate is not None:
        targets = {n for n, _ in capture or ()} | set(accumulate or ())
        needed = _needed(root_nodes, targets)
        if accumulate is None:
            accumulate = ()
    for (n, nr), g in zip(roots, grad_roots):
        if n is None:
            continue
        buf = buffers.setdefault(n, {})
        buf[nr] = g if nr not in buf else buf[nr] + g
    for n in buffers:
        if deps.get(n, 0) == 0:
            _push(ready, <Node>n)
    cdef bint check_nan = _anomaly_check_nan
    heappop = heapq.heappop
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
            if isinstance(node, AccumulateGrad):
                g = grads_in.get(0)
                if g is None:
                    continue
                if capture is not None and (node, 0) in capture:
                    capture[(node, 0)] = node.run_tensor_hooks(g)
                elif accumulate is None or node in accumulate:
                    (<AccumulateGrad>node).accumulate(g, create_graph, _owned(g, grads_in))
                # drop the gradient now: held by these locals it stayed alive through the
                # next node's backward (a checkpointed segment's recomputation included)
                g = grads_in = None
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
                grad_outputs = tuple([grads_in.get(i) for i in range(n_out)])
            if _plain_opnode(node):
                grads = (<OpNode>node)._backward(grad_outputs)
            else:
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
                        _push(ready, <Node>nxt)
                    else:
                        _skip(<Node>nxt, deps, buffers, ready)
            # held gradients would hide which ones leaves may keep (see _owned)
            grads = g = grads_in = grad_outputs = None
    finally:
        _state.set_grad_enabled(prev)
    return capture
