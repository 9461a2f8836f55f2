"""TensorImpl: the fields of a tensor (sizes, strides, offset, dtype, device, storage, autograd
slots). The Python `Tensor` subclasses it; everything here is plain data plus contiguity."""
cimport numpy as cnp
from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_INCREF

cdef tuple _NO_ARGS = ()
import numpy as np

from tensorlib._C.grad_mode cimport inference_enabled

cnp.import_array()

cdef extern from "numpy/arrayobject.h":
    object PyArray_NewFromDescr(PyTypeObject* subtype, PyObject* descr, int nd,
                                cnp.npy_intp* dims, cnp.npy_intp* strides, void* data,
                                int flags, PyObject* obj)

DEF MAX_NDIM = 64
cdef object TENSOR_CLASS = None


def set_tensor_class(cls):
    """tensorlib._tensor registers the Python Tensor class so the core can make instances."""
    global TENSOR_CLASS
    TENSOR_CLASS = cls


cdef class TensorImpl:
    """The data of a tensor; see tensorlib.Tensor for the API."""


cpdef TensorImpl wrap(Storage storage, tuple sizes, tuple strides, Py_ssize_t offset, dtype dt):
    """A new Tensor over `storage` (no copy): the one way tensors are made."""
    # tp_new straight from the type: what Tensor.__new__(Tensor) does, minus the lookup
    cdef TensorImpl t = <TensorImpl>(<PyTypeObject*>TENSOR_CLASS).tp_new(
        TENSOR_CLASS, <PyObject*>_NO_ARGS, NULL)
    if len(sizes) > MAX_NDIM:
        raise RuntimeError(f"tensors have at most {MAX_NDIM} dimensions, got {len(sizes)}")
    t._sizes = sizes
    t._strides = strides
    t._offset = offset
    t._dtype = dt
    t._device = storage.device
    t._storage = storage
    t._is_inference = inference_enabled()
    return t


cpdef tuple contiguous_strides(tuple sizes):
    cdef Py_ssize_t n = len(sizes), i, acc = 1
    if n == 1:
        return (1,)
    cdef list out = [0] * n
    for i in range(n - 1, -1, -1):
        out[i] = acc
        s = <Py_ssize_t>sizes[i]
        if s > 1:
            acc *= s
    return tuple(out)


cpdef tuple int_tuple(object values):
    """tuple(int(v) for v in values), without a generator for the usual tuple of ints."""
    cdef Py_ssize_t i, n
    if type(values) is tuple:
        n = len(<tuple>values)
        for i in range(n):
            if type((<tuple>values)[i]) is not int:
                break
        else:
            return <tuple>values
    return tuple([int(v) for v in values])


cpdef Py_ssize_t numel(tuple sizes):
    cdef Py_ssize_t n = 1
    for s in sizes:
        n *= <Py_ssize_t>s
    return n


cpdef bint is_contiguous(TensorImpl t):
    """Row-major contiguous; size-1 dims may have any stride, and a tensor without elements
    is contiguous whatever its strides (as in PyTorch)."""
    cdef Py_ssize_t expected = 1, i, size
    cdef tuple sizes = t._sizes, strides = t._strides
    for size in sizes:
        if size == 0:
            return True
    for i in range(len(sizes) - 1, -1, -1):
        size = sizes[i]
        if size != 1:
            if <Py_ssize_t>strides[i] != expected:
                return False
            expected *= size
    return True


cpdef object host_array(TensorImpl t):
    """A numpy view of a tensor whose storage handle is a host numpy array (cpu and plugins
    that keep host memory). Cached on the tensor; its base keeps the Storage alive."""
    cdef object cached = t._cache
    if cached is not None:
        return cached
    cdef cnp.ndarray handle = <cnp.ndarray?>t._storage.handle
    cdef int nd = len(t._sizes), i
    cdef cnp.npy_intp dims[MAX_NDIM]
    cdef cnp.npy_intp strides[MAX_NDIM]
    cdef Py_ssize_t itemsize = t._dtype.itemsize
    for i in range(nd):
        dims[i] = <cnp.npy_intp>t._sizes[i]
        strides[i] = <cnp.npy_intp>t._strides[i] * itemsize
    cdef char* data = <char*>cnp.PyArray_DATA(handle) + t._offset * itemsize
    cdef object descr = t._dtype.np
    Py_INCREF(descr)                    # PyArray_NewFromDescr steals it
    cdef int flags = cnp.NPY_ARRAY_WRITEABLE if cnp.PyArray_ISWRITEABLE(handle) else 0
    arr = PyArray_NewFromDescr(<PyTypeObject*>np.ndarray, <PyObject*>descr, nd, dims, strides,
                               <void*>data, flags, NULL)
    cnp.set_array_base(arr, t._storage)
    t._cache = arr
    return arr
