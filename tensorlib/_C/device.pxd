cdef class device:
    cdef readonly str type
    cdef readonly object index      # int, or None for "the current one"
    cdef public dict _kernels       # the backend's op -> kernel table, bound on first use
    cdef public object _backend
    cdef public object _allocate    # backend.allocate, bound once
    cdef public object _release     # backend.release or None

cpdef device canonical(object spec)
