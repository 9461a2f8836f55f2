from tensorlib._C.dtypes cimport dtype
cpdef dtype scalar_dtype(object value)
cpdef dtype result_type(tuple operands)
