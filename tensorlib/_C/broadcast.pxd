cpdef tuple broadcast_shapes2(tuple a, tuple b)
