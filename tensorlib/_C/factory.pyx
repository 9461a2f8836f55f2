"""Allocation of new tensors on any device, through the backend's allocator."""
from tensorlib._C.dtypes cimport dtype
from tensorlib._C.device cimport device
from tensorlib._C.storage cimport Storage
from tensorlib._C.tensor_impl cimport TensorImpl, wrap, contiguous_strides, numel
from tensorlib._C.dispatch cimport lookup
from tensorlib import _capture_state


cpdef TensorImpl empty(tuple sizes, dtype dt, device dev):
    """An uninitialised contiguous tensor of `sizes` on `dev`."""
    cdef Py_ssize_t n = 1, s
    for size in sizes:
        s = size
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(sizes)}")
        n *= s
    if dt.category == 3 and dev.type != "cpu":
        raise RuntimeError(f"complex tensors ({dt.name}) are only supported on the cpu so far; "
                           f"the {dev.type} backend has no complex kernels")
    cdef Py_ssize_t nbytes = n * dt.itemsize
    cdef Storage st = Storage.__new__(Storage)
    st.handle = dev._allocate(nbytes, dev.index)
    st._nbytes = nbytes
    st.device = dev
    st._release = dev._release
    return wrap(st, sizes, contiguous_strides(sizes), 0, dt)


cdef dict _scalars = {}               # (type, value, dtype, device) -> 0-dim tensor
DEF SCALAR_CACHE_SIZE = 512


cdef TensorImpl _filled(object value, dtype dt, device dev):
    cdef TensorImpl t = empty((), dt, dev)
    lookup("fill", dev)(t, value)
    return t


cpdef TensorImpl scalar_tensor(object value, dtype dt, device dev):
    """A 0-dim tensor holding `value`, for a Python number taking part in an op. Filled on the
    device (no host transfer) and cached: `x * 2` in a loop allocates nothing for the 2. The
    cached tensors are operands only; no op writes into its inputs. One first needed while a
    tensorlib.compile capture records is made outside the recording (filled now, with the real
    kernel): it is a constant of every call, so the first call records the same program as
    the next ones whether or not eager code made that scalar in between."""
    # float keys by their bits: -0.0 == 0.0 would hand a -0.0 tensor to a 0.0 operand
    key = (type(value), value.hex() if type(value) is float else value, dt, dev)
    cdef TensorImpl t = _scalars.get(key)
    if t is not None:
        if len(_scalars) >= SCALAR_CACHE_SIZE:
            # a full cache evicts its least recently used: a hit moves to the end, so the
            # scalars a compiled step keeps using are not evicted by others made between
            # its calls (a new fill would change its recording and delay its replay)
            del _scalars[key]
            _scalars[key] = t
        return t
    capture = _capture_state.current
    if capture is not None:
        t = capture.outside(_filled, value, dt, dev)
    else:
        t = _filled(value, dt, dev)
    if len(_scalars) >= SCALAR_CACHE_SIZE:
        # the least recently used goes (dicts keep insertion order); clearing the whole cache made every
        # scalar of the next calls a new fill, so a compiled call recorded a different program
        # each time and its replay started calls later
        del _scalars[next(iter(_scalars))]
    _scalars[key] = t
    return t


cpdef TensorImpl cast(TensorImpl t, dtype dt):
    """A copy of `t` converted to `dt` (same device, contiguous)."""
    cdef TensorImpl out = empty(t._sizes, dt, t._device)
    lookup("copy", t._device)(out, t)
    return out
