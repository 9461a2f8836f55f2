from tensorlib._C.device cimport device
cpdef object lookup(str op, device dev)
cpdef bint has_kernel(str op, device dev)
