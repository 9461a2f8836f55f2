"""The CUDA caching allocator: stream-aware bookkeeping over a small driver interface, so the
logic runs (and is tested) without a GPU.

Blocks are sized in 512-byte steps (2 MiB steps past 1 MiB) and cached per stream when freed:
a block is handed out again only for work on the stream it was allocated on, because that
stream's order already makes the reuse safe. A block that other streams used
(`record_stream`) gets an event recorded on each of them when it is freed, and goes back to
the cache only once all those events have completed. When the driver is out of memory the
cache is emptied and the allocation retried once; then OutOfMemoryError says how much was
asked for and how much is free.

The driver interface (`PyCudaDriver` on a GPU, a fake in the tests):
    malloc(nbytes) -> int pointer, raising MemoryError when the device is full
    free(ptr);  mem_get_info() -> (free, total)
    record_event(stream) -> event;  event_done(event) -> bool
"""
import bisect

from tensorlib.cuda.memory import OutOfMemoryError

SMALL = 1 << 20            # up to here sizes round to 512 B, past it to 2 MiB
_ROUND_SMALL, _ROUND_LARGE = 512, 2 << 20


def round_size(nbytes):
    n = max(int(nbytes), 1)
    step = _ROUND_SMALL if n <= SMALL else _ROUND_LARGE
    return -(-n // step) * step


def _mib(n):
    return f"{n / 2 ** 20:.2f} MiB"


class Block:
    __slots__ = ("ptr", "size", "stream", "streams", "requested")

    def __init__(self, ptr, size, stream):
        self.ptr, self.size, self.stream = ptr, size, stream
        self.streams = set()        # other streams that used the block (record_stream)
        self.requested = 0


class CachingAllocator:
    def __init__(self, driver, label="cuda:0"):
        self.driver, self.label = driver, label
        self.active = {}            # ptr -> Block handed out
        self.cached = {}            # stream key -> sorted [(size, ptr)] of free blocks
        self.blocks = {}            # ptr -> Block for every cached block
        self.pending = []           # (Block, [events]) freed while other streams use them
        self.limit = None           # bytes (set_per_process_memory_fraction)
        self.allocated = self.peak = 0
        self.reserved = self.peak_reserved = 0
        self.allocations = self.frees = self.retries = self.ooms = 0

    # -- handing out -------------------------------------------------------------------
    def allocate(self, nbytes, stream):
        size = round_size(nbytes)
        self._collect_pending()
        block = self._from_cache(size, stream)
        if block is None:
            block = self._fresh(size, stream, nbytes)
        block.requested = int(nbytes)
        block.streams = set()
        self.active[block.ptr] = block
        self.allocated += block.size
        self.peak = max(self.peak, self.allocated)
        self.allocations += 1
        return block.ptr

    def _from_cache(self, size, stream):
        """The smallest cached block of this stream that fits (at most twice the size for
        large requests, so a big block isn't tied up by a small one)."""
        free = self.cached.get(_key(stream))
        if not free:
            return None
        i = bisect.bisect_left(free, (size, -1))
        if i == len(free):
            return None
        bsize, ptr = free[i]
        if size > SMALL and bsize > 2 * size:
            return None
        del free[i]
        return self.blocks.pop(ptr)

    def _fresh(self, size, stream, nbytes):
        if self.limit is not None and self.reserved + size > self.limit:
            self.release_cached()
            if self.reserved + size > self.limit:
                self._raise(nbytes, f"over the memory limit of {_mib(self.limit)}")
        try:
            ptr = self.driver.malloc(size)
        except MemoryError:
            self.retries += 1
            self.release_cached()
            try:
                ptr = self.driver.malloc(size)
            except MemoryError:
                self._raise(nbytes, "the device is full")
        self.reserved += size
        self.peak_reserved = max(self.peak_reserved, self.reserved)
        return Block(ptr, size, stream)

    def _raise(self, nbytes, why):
        self.ooms += 1
        try:
            free, total = self.driver.mem_get_info()
            device = f"; the device has {_mib(free)} free of {_mib(total)}"
        except Exception:
            device = ""
        raise OutOfMemoryError(
            f"CUDA out of memory on {self.label}: tried to allocate {_mib(nbytes)} ({why}); "
            f"{_mib(self.allocated)} allocated by tensors, {_mib(self.reserved)} reserved by "
            f"the caching allocator{device}. Free tensors, or call "
            f"tensorlib.cuda.empty_cache().")

    # -- giving back -------------------------------------------------------------------
    def record_stream(self, ptr, stream):
        """The block at `ptr` is also used by work on `stream` (Tensor.record_stream)."""
        block = self.active.get(ptr)
        if block is not None and _key(stream) != _key(block.stream):
            block.streams.add(stream)

    def free(self, ptr):
        block = self.active.pop(ptr, None)
        if block is None:
            return
        self.allocated -= block.size
        self.frees += 1
        if block.streams:
            events = [self.driver.record_event(s) for s in block.streams]
            self.pending.append((block, events))
        else:
            self._cache(block)

    def _cache(self, block):
        self.blocks[block.ptr] = block
        bisect.insort(self.cached.setdefault(_key(block.stream), []), (block.size, block.ptr))

    def _collect_pending(self):
        if not self.pending:
            return
        still = []
        for block, events in self.pending:
            if all(self.driver.event_done(e) for e in events):
                self._cache(block)
            else:
                still.append((block, events))
        self.pending = still

    def release_cached(self):
        """Return every cached block to the driver (empty_cache); blocks whose other streams
        are still busy stay pending."""
        self._collect_pending()
        for ptr, block in list(self.blocks.items()):
            self.driver.free(ptr)
            self.reserved -= block.size
        self.blocks.clear()
        self.cached.clear()

    # -- statistics --------------------------------------------------------------------
    def reset_peak(self):
        self.peak, self.peak_reserved = self.allocated, self.reserved

    def stats(self):
        return {"allocated_bytes": self.allocated, "peak_allocated_bytes": self.peak,
                "reserved_bytes": self.reserved, "peak_reserved_bytes": self.peak_reserved,
                "active_blocks": len(self.active), "cached_blocks": len(self.blocks),
                "pending_blocks": len(self.pending), "allocations": self.allocations,
                "frees": self.frees, "alloc_retries": self.retries, "ooms": self.ooms}


def _key(stream):
    """Streams compare by their driver handle (None is the default stream)."""
    return getattr(stream, "handle", stream)


class PyCudaDriver:
    """The allocator's driver interface over pycuda, for one device's context."""

    def __init__(self, drv, activate):
        self.drv, self.activate = drv, activate
        self._live = {}             # ptr -> DeviceAllocation (kept alive until freed)

    def malloc(self, nbytes):
        self.activate()
        try:
            alloc = self.drv.mem_alloc(nbytes)
        except self.drv.MemoryError as exc:
            raise MemoryError(str(exc)) from None
        ptr = int(alloc)
        self._live[ptr] = alloc
        return ptr

    def free(self, ptr):
        alloc = self._live.pop(ptr, None)
        if alloc is not None:
            self.activate()
            alloc.free()

    def mem_get_info(self):
        self.activate()
        return self.drv.mem_get_info()

    def record_event(self, stream):
        event = self.drv.Event(self.drv.event_flags.DISABLE_TIMING)
        event.record(stream)
        return event

    def event_done(self, event):
        return event.query()
