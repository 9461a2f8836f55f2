from tensorlib._C.tensor_impl cimport TensorImpl

cpdef bint run(int op, TensorImpl out, TensorImpl a, TensorImpl b)
