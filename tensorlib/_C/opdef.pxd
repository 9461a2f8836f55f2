cpdef bint requires_grad(tuple args)
