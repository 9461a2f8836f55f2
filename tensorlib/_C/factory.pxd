from tensorlib._C.dtypes cimport dtype
from tensorlib._C.device cimport device
from tensorlib._C.tensor_impl cimport TensorImpl

cpdef TensorImpl empty(tuple sizes, dtype dt, device dev)
cpdef TensorImpl scalar_tensor(object value, dtype dt, device dev)
cpdef TensorImpl cast(TensorImpl t, dtype dt)
