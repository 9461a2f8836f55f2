"""The shared call path of the reductions (tensorlib/ops/reduction.py): normalise the dims,
allocate the output, call the backend's primitive through a keepdim-shaped view. In C
because a small reduction's whole cost is this bookkeeping."""
from tensorlib._C.args cimport dims_arg
from tensorlib._C.device cimport device
from tensorlib._C.dispatch cimport lookup
from tensorlib._C.dtypes cimport dtype
from tensorlib._C.factory cimport cast, empty
from tensorlib._C.tensor_impl cimport TensorImpl, contiguous_strides, wrap


cpdef TensorImpl reduce(str op, TensorImpl x, object dim, bint keepdim, dtype out_dtype):
    """Primitive `op` of x over `dim` (see dims_arg) into a new tensor of out_dtype. Without
    keepdim the result owns its memory (not a view of a keepdim temporary): the kernel
    writes through a keepdim-shaped view of it."""
    cdef tuple sizes = x._sizes
    cdef Py_ssize_t nd = len(sizes), i
    cdef tuple dims = dims_arg(dim, nd)
    cdef TensorImpl src = x if x._dtype is out_dtype else cast(x, out_dtype)
    cdef list kept = list(sizes), dropped = []
    cdef Py_ssize_t j = 0, nred = len(dims)
    for i in range(nd):
        if j < nred and <Py_ssize_t>dims[j] == i:
            kept[i] = 1
            j += 1
        else:
            dropped.append(sizes[i])
    cdef tuple kept_t = tuple(kept)
    cdef device dev = x._device
    cdef TensorImpl out, target
    if keepdim or not nred:
        out = empty(kept_t, out_dtype, dev)
        target = out
    else:
        out = empty(tuple(dropped), out_dtype, dev)
        target = wrap(out._storage, kept_t, contiguous_strides(kept_t), 0, out_dtype)
    lookup(op, dev)(target, src, dims)
    return out
