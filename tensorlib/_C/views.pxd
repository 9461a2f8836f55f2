from tensorlib._C.tensor_impl cimport TensorImpl
cpdef Py_ssize_t wrap_dim(Py_ssize_t dim, Py_ssize_t ndim) except? -1
cpdef tuple infer_size(object shape, Py_ssize_t total)
cpdef object view_strides(tuple old_sizes, tuple old_strides, tuple new_sizes)
cpdef tuple expand_strides(tuple sizes, tuple strides, tuple target)
cpdef TensorImpl alias(TensorImpl t)
cdef void note_view(TensorImpl out, tuple args, bint recorded)
