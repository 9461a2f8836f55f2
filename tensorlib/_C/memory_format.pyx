"""Channels-last layouts (PyTorch's memory formats) at C speed: the strides of
channels_last (4-D, N H W C in memory) and channels_last_3d (5-D, N D H W C), the check
whether a tensor has them, and allocation in them. Elementwise ops allocate their output
with `empty_in_layout_of`, so a channels-last input gives a channels-last output as in
PyTorch; any other layout gives a contiguous output."""
from tensorlib._C.dtypes cimport dtype
from tensorlib._C.device cimport device
from tensorlib._C.storage cimport Storage
from tensorlib._C.tensor_impl cimport TensorImpl, wrap, is_contiguous
from tensorlib._C.factory cimport empty


cpdef tuple channels_last_strides(tuple sizes):
    """Strides of a dense channels-last tensor of 4 or 5 dims: the channel dim (1) fastest,
    then the spatial dims last to first, the batch slowest (size-0/1 dims count as 1)."""
    cdef Py_ssize_t nd = len(sizes), expected = 1, d, i
    if nd != 4 and nd != 5:
        raise RuntimeError(f"required rank {4 if nd < 5 else 5} tensor to use "
                           f"channels_last{'' if nd < 5 else '_3d'} format")
    strides = [0] * nd
    order = (1,) + tuple(range(nd - 1, 1, -1)) + (0,)
    for i in range(nd):
        d = order[i]
        strides[d] = expected
        expected *= max(<Py_ssize_t>sizes[d], 1)
    return tuple(strides)


cpdef bint is_channels_last(TensorImpl t):
    """Dense in channels-last order (PyTorch's is_contiguous(memory_format=channels_last*));
    dims of size 1 may have any stride."""
    cdef tuple sizes = t._sizes, strides = t._strides
    cdef Py_ssize_t nd = len(sizes), expected = 1, d, i, size
    if nd != 4 and nd != 5:
        return False
    for i in range(nd):
        d = 1 if i == 0 else (0 if i == nd - 1 else nd - i)
        size = sizes[d]
        if size == 0:
            return True
        if size != 1:
            if <Py_ssize_t>strides[d] != expected:
                return False
            expected *= size
    return True


cpdef TensorImpl empty_channels_last(tuple sizes, dtype dt, device dev):
    """An uninitialised channels-last tensor of 4-D or 5-D `sizes`."""
    cdef tuple strides = channels_last_strides(sizes)
    cdef TensorImpl flat = empty(sizes, dt, dev)
    return wrap(flat._storage, sizes, strides, 0, dt)


cpdef TensorImpl empty_in_layout_of(TensorImpl like, dtype dt):
    """An output of like's sizes for an elementwise op: channels-last when `like` is
    (and not also contiguous), else contiguous."""
    cdef Py_ssize_t nd = len(like._sizes)
    if (nd == 4 or nd == 5) and not is_contiguous(like) and is_channels_last(like):
        return empty_channels_last(like._sizes, dt, like._device)
    return empty(like._sizes, dt, like._device)
