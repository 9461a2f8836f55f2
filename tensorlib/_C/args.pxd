cpdef tuple dims_arg(object dim, Py_ssize_t ndim)
