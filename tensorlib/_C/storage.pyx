"""Storage: one backend buffer shared by a tensor and all of its views."""
cimport cython


@cython.no_gc        # its fields (a backend handle, the device, the allocator's release) never
cdef class Storage:  # lead back to it: the cyclic collector need not track every buffer
    """A backend buffer handle, its size in bytes and its device; views share one Storage."""

    def __init__(self, handle, Py_ssize_t nbytes, device dev, release=None):
        self.handle = handle
        self._nbytes = nbytes
        self.device = dev
        self.version = 0
        self._release = release

    def __dealloc__(self):
        if self._release is not None:
            self._release(self.handle, self._nbytes)

    def __repr__(self):
        return f"Storage(nbytes={self._nbytes}, device={self.device})"

    # torch.UntypedStorage's reading methods: a storage is bytes (tensorlib/_storage_typed.py
    # reads them through a uint8 tensor over the whole buffer)
    def nbytes(self):
        return self._nbytes

    def size(self):
        return self._nbytes

    def __len__(self):
        return self._nbytes

    def element_size(self):
        return 1

    def untyped(self):
        return self

    def data_ptr(self):
        from tensorlib._storage_typed import storage_data_ptr
        return storage_data_ptr(self)

    def tolist(self):
        from tensorlib._storage_typed import storage_elements
        return storage_elements(self, None).tolist()

    def __getitem__(self, index):
        if isinstance(index, slice):
            from tensorlib._storage_file import storage_slice
            return storage_slice(self, index)
        from tensorlib._storage_typed import storage_item
        return storage_item(self, None, index)

    def __setitem__(self, index, value):
        from tensorlib._storage_typed import storage_elements
        if isinstance(index, int) and not -self._nbytes <= index < self._nbytes:
            raise IndexError(f"index {index} out of range for storage of size {self._nbytes}")
        storage_elements(self, None)[index] = value

    @staticmethod
    def from_file(filename, shared=False, nbytes=0):
        """A CPU storage memory-mapping the file's first nbytes (torch.UntypedStorage's)."""
        from tensorlib._storage_file import storage_from_file
        return storage_from_file(filename, shared, nbytes)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"
