"""Page-locked (pinned) host memory: what `Tensor.pin_memory()` allocates, so that a copy to
the GPU with `non_blocking=True` is a DMA the host does not wait for.

Pinned buffers are numpy arrays from `pagelocked_empty`; the CPU tensor that wraps one shares
its memory. `is_pinned` answers from the address ranges of the live buffers (a view of a pinned
tensor is pinned too, as in PyTorch). A host buffer in flight in an asynchronous copy is kept
alive until an event recorded after the copy says it is done, as PyTorch's caching host
allocator does, so dropping the source tensor right after `x.to("cuda", non_blocking=True)` is
safe.
"""
import bisect
import weakref


class PinnedHost:
    def __init__(self, driver):
        self._drv = driver
        self._starts = []           # sorted start addresses of live pinned buffers
        self._ends = {}             # start -> end
        self._in_flight = []        # (event, host array): kept until the event completes

    def empty(self, shape, np_dtype):
        """A new pinned numpy array, registered until it is garbage."""
        array = self._drv.pagelocked_empty(shape, np_dtype)
        start = array.__array_interface__["data"][0]
        if array.nbytes:
            bisect.insort(self._starts, start)
            self._ends[start] = start + array.nbytes
            weakref.finalize(array, self._forget, start)
        return array

    def _forget(self, start):
        i = bisect.bisect_left(self._starts, start)
        if i < len(self._starts) and self._starts[i] == start:
            del self._starts[i]
            del self._ends[start]

    def contains(self, address, nbytes):
        """True when [address, address + nbytes) lies inside one pinned buffer."""
        i = bisect.bisect_right(self._starts, address) - 1
        return i >= 0 and address + nbytes <= self._ends[self._starts[i]]

    def keep_until_done(self, host, stream):
        """Hold `host` until the work queued on `stream` so far is done."""
        self._collect()
        event = self._drv.Event(self._drv.event_flags.DISABLE_TIMING)
        event.record(stream)
        self._in_flight.append((event, host))

    def _collect(self):
        self._in_flight = [(e, h) for e, h in self._in_flight if not e.query()]

    def in_flight(self):
        self._collect()
        return len(self._in_flight)
