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
        from tensorlib._storage_typed import storage_item
        return storage_item(self, None, index)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"
