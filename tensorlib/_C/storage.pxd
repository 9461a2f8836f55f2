from tensorlib._C.device cimport device

cdef class Storage:
    cdef public object handle       # what the backend's allocator returned
    cdef public Py_ssize_t _nbytes  # (the nbytes() method reads it, as torch's)
    cdef public device device
    cdef public Py_ssize_t version  # bumped by every in-place write; shared by all views
    cdef public object _release     # callable(handle, nbytes) run when the storage dies
    cdef object __weakref__
