"""Host memory for CPU tensors. Small buffers come straight from numpy (malloc reuses them);
freed buffers of 128 KiB or more wait in a size-keyed pool, because taking fresh pages from the
OS on every large op costs more than the op (DESIGN.md: PyTorch loses 1.5-3x to this). The
bound is glibc's default mmap threshold: buffers between it and 1 MiB (a CNN's pooled
activations, its ReLU masks) came back as fresh pages often enough to cost a compiled CNN
step ~800 page faults."""
cimport numpy as cnp

from tensorlib._C.tensor_impl cimport TensorImpl
import threading

cnp.import_array()

# C constants: release() also runs while the interpreter shuts down, after module globals are gone
cdef Py_ssize_t POOL_MIN_BYTES = 1 << 17
cdef Py_ssize_t GRANULE = 1 << 16          # pooled sizes are rounded up to 64 KiB
cdef Py_ssize_t PAGE = 4096


cdef object _page_aligned(cnp.npy_intp n):
    """n bytes starting on a page boundary. malloc puts a large buffer 16 bytes past the end of
    the previous one, so an op's output began 16 bytes (mod 4 KiB) after its input: each store
    then 4K-aliased the loads a few elements ahead and stalled them (exp of a fresh tensor
    read 2.5-4x slower than of a numpy-allocated one). Page-aligned buffers alias only at
    4 KiB of distance, far behind the loop."""
    cdef cnp.npy_intp m = n + PAGE
    cdef cnp.ndarray raw = cnp.PyArray_EMPTY(1, &m, cnp.NPY_UINT8, 0)
    cdef Py_ssize_t skip = (-<Py_ssize_t>cnp.PyArray_DATA(raw)) % PAGE
    return raw[skip:skip + n]


cdef class HostAllocator:
    cdef public Py_ssize_t max_cached_bytes
    cdef public Py_ssize_t cached_bytes, pooled_in_use, hits, misses
    cdef dict _pool
    cdef object _lock

    def __init__(self, Py_ssize_t max_cached_bytes=1 << 30):
        self.max_cached_bytes = max_cached_bytes
        self._pool = {}
        self._lock = threading.Lock()

    cpdef object allocate(self, Py_ssize_t nbytes, object index=None):
        cdef cnp.npy_intp n = nbytes
        if nbytes < POOL_MIN_BYTES:
            return cnp.PyArray_EMPTY(1, &n, cnp.NPY_UINT8, 0)
        n = -(-nbytes // GRANULE) * GRANULE
        with self._lock:
            free = self._pool.get(n)
            if free:
                self.hits += 1
                self.cached_bytes -= n
                self.pooled_in_use += n
                return free.pop()
            self.misses += 1
            self.pooled_in_use += n
        return _page_aligned(n)

    cpdef release(self, object handle, Py_ssize_t nbytes):
        """Called when a Storage dies: keep a large buffer for the next allocation."""
        cdef Py_ssize_t size = (<cnp.ndarray>handle).nbytes
        if size < POOL_MIN_BYTES:
            return
        with self._lock:
            self.pooled_in_use -= size
            if self.cached_bytes + size <= self.max_cached_bytes:
                self._pool.setdefault(size, []).append(handle)
                self.cached_bytes += size

    def empty_cache(self):
        with self._lock:
            self._pool.clear()
            self.cached_bytes = 0


def fill_pointers(tensors, Py_ssize_t address, Py_ssize_t count):
    """Write each of (at most `count`) CPU tensors' data address (its buffer's start plus its offset)
    into the array of pointers at `address`: the generated fused kernels' operand table,
    filled on every call (numpy's __array_interface__ builds a dict per tensor: ~1 us
    each)."""
    if len(tensors) > count:
        raise ValueError(f"fill_pointers: {len(tensors)} tensors for {count} pointers")
    cdef void** out = <void**>address
    cdef Py_ssize_t k = 0
    cdef TensorImpl t
    for obj in tensors:
        t = <TensorImpl?>obj
        out[k] = <char*>cnp.PyArray_DATA(<cnp.ndarray?>t._storage.handle) + \
            t._offset * t._dtype.itemsize
        k += 1
