from tensorlib._C.dtypes cimport dtype
from tensorlib._C.device cimport device
from tensorlib._C.tensor_impl cimport TensorImpl

cpdef tuple channels_last_strides(tuple sizes)
cpdef bint is_channels_last(TensorImpl t)
cpdef TensorImpl empty_channels_last(tuple sizes, dtype dt, device dev)
cpdef TensorImpl empty_in_layout_of(TensorImpl like, dtype dt)
