"""The one flag that eager code checks for `tensorlib.compile`: the capture in progress, or
None. Free of tensorlib imports so `_tensor.py` and the ops can read it at no cost; a host
read of a tensor (item, tolist, numpy, printing, a copy to another backend) calls
`materialize` so the recorded kernels run first (a graph break)."""

from _thread import get_ident

current = None

# (devices, fuse) when a compiled call returned tensors that require grad: the next
# `backward()` runs under a capture too, so the backward's kernels fuse as the forward's do
backward = None

# callable(run_backward, roots, grads, retain_graph, create_graph) running that backward
# under a capture; set by tensorlib.compiler.api at import, so autograd needs no compiler import
run_backward_compiled = None


def materialize(what):
    """Run every kernel recorded so far: `what` (e.g. 'item()') needs real values. Another
    thread's read is no break of this recording: its kernels ran when it called them."""
    if current is not None and current.thread == get_ident():
        current.graph_break(what)
