from tensorlib._C.dtypes cimport dtype
from tensorlib._C.device cimport device
from tensorlib._C.storage cimport Storage

cdef class TensorImpl:
    cdef public tuple _sizes
    cdef public tuple _strides
    cdef public Py_ssize_t _offset
    cdef public dtype _dtype
    cdef public device _device
    cdef public Storage _storage
    cdef public object _cache          # a backend's view of this tensor (numpy array on cpu)
    # autograd slots; the engine in tensorlib.autograd owns their meaning
    cdef public bint _requires_grad
    cdef public object _grad
    cdef public object _grad_fn
    cdef public int _output_nr
    cdef public object _base            # the root tensor when this is a view
    cdef public object _hooks
    cdef public bint _retains_grad
    cdef public object _grad_accumulator  # weakref to the leaf's AccumulateGrad node
    cdef public bint _is_inference       # made under inference_mode: never joins a graph
    # a view made under no_grad (PyTorch's CreationMeta::NO_GRAD_MODE), or a view of one:
    # it requires grad when its base does but sends no gradient on, and in-place writes into
    # it while recording are refused (views.note_view, autograd.edge)
    cdef public bint _no_grad_view
    cdef public Py_ssize_t _view_version  # its storage's version when it was made
    cdef public bint _own_requires_grad   # requires_grad_(True) on it: it keeps its own .grad
    cdef object __weakref__
    cdef dict __dict__

cdef object TENSOR_CLASS
cpdef TensorImpl wrap(Storage storage, tuple sizes, tuple strides, Py_ssize_t offset, dtype dt)
cpdef tuple contiguous_strides(tuple sizes)
cpdef bint is_contiguous(TensorImpl t)
cpdef Py_ssize_t numel(tuple sizes)
cpdef tuple int_tuple(object values)
cpdef object host_array(TensorImpl t)
