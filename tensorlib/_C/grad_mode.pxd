cdef bint grad_enabled()
cdef object recorder()
cdef object inplace_recorder()
cdef bint inference_enabled()
