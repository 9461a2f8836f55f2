"""Device memory: PyOpenCL's MemoryPool (power-of-two-ish bins, freed blocks held for reuse)
per device, with statistics, an optional limit, and out-of-memory handling that empties the
cache and retries once before raising OutOfMemoryError."""


class OutOfMemoryError(RuntimeError):
    """The device (or the configured limit) has no room for an allocation."""


def _mib(n):
    return f"{n / 2 ** 20:.2f} MiB"


class DeviceAllocator:
    def __init__(self, dev, label):
        import pyopencl.tools as cltools
        self.dev, self.label = dev, label
        self.pool = cltools.MemoryPool(cltools.ImmediateAllocator(dev.queue))
        self.allocated = 0              # bytes held by live storages
        self.peak = 0
        self.allocations = 0
        self.limit = None               # bytes; None = the device's global memory

    def _oom_codes(self):
        s = self.dev.cl.status_code
        return {s.MEM_OBJECT_ALLOCATION_FAILURE, s.OUT_OF_RESOURCES, s.OUT_OF_HOST_MEMORY,
                s.INVALID_BUFFER_SIZE}

    def _raise(self, nbytes, why):
        raise OutOfMemoryError(
            f"OpenCL out of memory on {self.label} ({self.dev.name}): tried to allocate "
            f"{_mib(nbytes)} ({why}); {_mib(self.allocated)} allocated by tensors, "
            f"{_mib(self.pool.managed_bytes)} reserved by the caching allocator; device memory "
            f"{_mib(self.dev.global_mem)}, largest single allocation {_mib(self.dev.max_alloc)}"
            + (f", limit {_mib(self.limit)}" if self.limit is not None else "")
            + ". Free tensors, or call tensorlib.opencl.empty_cache().")

    def _try(self, n):
        if self.limit is not None and self.pool.active_bytes + n > self.limit:
            return None, "over the memory limit"
        if self.limit is not None and self.pool.managed_bytes + n > self.limit:
            self.pool.free_held()
        try:
            return self.pool.allocate(n), None
        except self.dev.cl.Error as exc:
            code = getattr(exc, "code", None)
            if code not in self._oom_codes() and not isinstance(exc, self.dev.cl.MemoryError):
                raise
            return None, str(exc).strip().splitlines()[0]

    def allocate(self, nbytes):
        n = max(int(nbytes), 1)
        if n > self.dev.max_alloc:
            self._raise(nbytes, "larger than the device's largest single allocation")
        handle, why = self._try(n)
        if handle is None:                          # empty the cache, retry once
            self.pool.free_held()
            import gc
            gc.collect()
            handle, why = self._try(n)
            if handle is None:
                self._raise(nbytes, why)
        self.allocated += nbytes
        self.allocations += 1
        self.peak = max(self.peak, self.allocated)
        return handle

    def release(self, handle, nbytes):
        self.allocated -= nbytes
        try:
            handle.release()
        except Exception:                           # interpreter shutdown: nothing to return
            pass

    def empty_cache(self):
        self.pool.free_held()

    def stats(self):
        # reserved = live tensors + cached free blocks (the pool's own byte counts can miss
        # blocks it hands out outside its bins)
        cached = max(self.pool.managed_bytes - self.pool.active_bytes, 0)
        return {"allocated_bytes": self.allocated, "peak_allocated_bytes": self.peak,
                "reserved_bytes": self.allocated + cached, "active_blocks": self.pool.active_blocks,
                "held_blocks": self.pool.held_blocks, "allocations": self.allocations}
