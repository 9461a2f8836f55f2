"""Factory functions: tensor, from_numpy, zeros/ones/full/empty (and _like), arange."""
import math
import numbers

import numpy as np

import tensorlib._C.dtypes as dt
from tensorlib._C.device import canonical
from tensorlib._C.factory import empty as _empty
from tensorlib._C.dispatch import lookup
from tensorlib._C.storage import Storage
from tensorlib._C.tensor_impl import TensorImpl, wrap
from tensorlib.ops._args import sizes_arg


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


def empty(*size, dtype=None, device=None, requires_grad=False, **_ignored):
    d = dtype or dt.get_default_dtype()
    return _finish(_empty(sizes_arg(size), d, canonical(device)), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = (dt.bool_ if isinstance(fill_value, bool) else
                 dt.int64 if isinstance(fill_value, numbers.Integral) else dt.get_default_dtype())
    t = _empty(sizes_arg((size,)), dtype, canonical(device))
    lookup("fill", t._device)(t, fill_value)
    return _finish(t, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return full(sizes_arg(size), 0, dtype=dtype or dt.get_default_dtype(), device=device,
                requires_grad=requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return full(sizes_arg(size), 1, dtype=dtype or dt.get_default_dtype(), device=device,
                requires_grad=requires_grad)


def _like(t, dtype, device):
    return dict(dtype=dtype or t._dtype, device=device if device is not None else t._device)


def empty_like(t, *, dtype=None, device=None, requires_grad=False):
    return empty(t._sizes, **_like(t, dtype, device), requires_grad=requires_grad)


def zeros_like(t, *, dtype=None, device=None, requires_grad=False):
    return full(t._sizes, 0, **_like(t, dtype, device), requires_grad=requires_grad)


def ones_like(t, *, dtype=None, device=None, requires_grad=False):
    return full(t._sizes, 1, **_like(t, dtype, device), requires_grad=requires_grad)


def full_like(t, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(t._sizes, fill_value, **_like(t, dtype, device), requires_grad=requires_grad)


def from_numpy(array):
    """A CPU tensor sharing memory with `array` (writes through either show in both)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    d = dt.from_numpy_dtype(array.dtype)
    item = array.itemsize
    if any(s < 0 for s in array.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and "
                         "tensors with negative strides are not currently supported. (You can "
                         "probably work around this by making a copy of your array with "
                         "array.copy().)")
    if any(s % item for s in array.strides):
        raise ValueError(f"given numpy array strides {array.strides} are not a multiple of "
                         f"the element byte size {item}; copy the numpy array to reallocate "
                         f"the memory.")
    extent = 0 if array.size == 0 else 1 + sum((n - 1) * s // item
                                               for n, s in zip(array.shape, array.strides))
    cpu = canonical("cpu")
    storage = Storage(array, extent * item, cpu)
    t = wrap(storage, tuple(array.shape), tuple(s // item for s in array.strides), 0, d)
    return t


def _infer_dtype(data):
    """torch.tensor's inference: bool < int (int64) < float (the default dtype)."""
    kind = 0
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, TensorImpl):
            return x._dtype if kind == 0 else None
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, bool) or isinstance(x, np.bool_):
            kind = max(kind, 0)
        elif isinstance(x, (numbers.Integral,)):
            kind = max(kind, 1)
        elif isinstance(x, numbers.Real):
            kind = max(kind, 2)
        else:
            raise TypeError(f"Could not infer dtype of {type(x).__name__}")
    return (dt.bool_, dt.int64, dt.get_default_dtype())[kind]


def _host_array(data, dtype):
    if isinstance(data, TensorImpl):
        return data.detach().cpu().numpy()
    if isinstance(data, (list, tuple)) and any(isinstance(x, TensorImpl) for x in data):
        return np.array([_host_array(x, dtype) for x in data], dtype=dtype.np)
    return np.asarray(data, dtype=dtype.np)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of `data` (nested sequences, numbers, numpy arrays)."""
    if isinstance(data, np.ndarray):
        d = dtype or dt.from_numpy_dtype(data.dtype)
    elif isinstance(data, TensorImpl):
        d = dtype or data._dtype
    else:
        d = dtype or _infer_dtype(data)
        if d is None:
            d = dt.get_default_dtype()
    host = np.asarray(_host_array(data, d), dtype=d.np, order="C")
    dev = canonical(device)
    t = _empty(tuple(host.shape), d, dev)
    dev._backend.copy_from_host(t, host)
    return _finish(t, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like tensor(), but reuses `data` when it already is a tensor or a CPU numpy array of
    the requested dtype and device."""
    if isinstance(data, TensorImpl):
        return data.to(device=device if device is not None else data._device,
                       dtype=dtype or data._dtype)
    if isinstance(data, np.ndarray) and canonical(device).type == "cpu" and (
            dtype is None or dtype.np == data.dtype) and all(s >= 0 for s in data.strides):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    values = (start, end, step)
    if dtype is None:
        is_float = any(isinstance(v, float) for v in values)
        dtype = dt.get_default_dtype() if is_float else dt.int64
    length = math.ceil((end - start) / step)
    if length < 0:
        raise RuntimeError(f"upper bound and larger bound inconsistent with step sign: start="
                           f"{start}, end={end}, step={step}")
    host = (start + step * np.arange(length, dtype=np.float64)).astype(dtype.np)
    if not dtype.is_floating_point:
        host = (start + step * np.arange(length, dtype=np.int64)).astype(dtype.np)
    dev = canonical(device)
    t = _empty((length,), dtype, dev)
    dev._backend.copy_from_host(t, host)
    return _finish(t, requires_grad)
