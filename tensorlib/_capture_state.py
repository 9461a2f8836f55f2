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


class internal_reads:
    """`with internal_reads():` around a host read inside one of tensorlib's own ops (a
    LAPACK or FFT call on numpy arrays). The recorded kernels still run first (the segment
    ends), but the read is no break in the user's program, so `fullgraph=True` accepts it, as
    PyTorch's one-graph capture accepts torch.linalg and torch.fft calls."""

    def __enter__(self):
        capture = current
        self.capture = capture if capture is not None and capture.thread == get_ident() \
            else None
        if self.capture is not None:
            self.capture.internal_reads += 1
        return self

    def __exit__(self, *exc):
        if self.capture is not None:
            self.capture.internal_reads -= 1
        return False
