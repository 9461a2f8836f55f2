"""Storage: one backend buffer shared by a tensor and all of its views."""
cimport cython


@cython.no_gc        # its fields (a backend handle, the device, the allocator's release) never
cdef class Storage:  # lead back to it: the cyclic collector need not track every buffer
    """A backend buffer handle, its size in bytes and its device; views share one Storage."""

    def __init__(self, handle, Py_ssize_t nbytes, device dev, release=None):
        self.handle = handle
        self.nbytes = nbytes
        self.device = dev
        self.version = 0
        self._release = release

    def __dealloc__(self):
        if self._release is not None:
            self._release(self.handle, self.nbytes)

    def __repr__(self):
        return f"Storage(nbytes={self.nbytes}, device={self.device})"

    def nbytes_(self):
        return self.nbytes
