from tensorlib._C.dtypes cimport dtype
from tensorlib._C.tensor_impl cimport TensorImpl

cpdef TensorImpl reduce(str op, TensorImpl x, object dim, bint keepdim, dtype out_dtype)
