"""Factory functions: tensor, from_numpy, zeros/ones/full/empty (and _like), empty_strided,
scalar_tensor, arange, linspace, logspace, eye."""
import math
import numbers
import operator
import warnings

import numpy as np

import tensorlib._C.dtypes as dt
from tensorlib._C.device import canonical
from tensorlib._default_device import factory_device
from tensorlib._layout import SPARSE_TYPES
from tensorlib._C.factory import empty as _empty
from tensorlib._C.dispatch import lookup
from tensorlib._C.storage import Storage
from tensorlib._C.tensor_impl import TensorImpl, wrap
from tensorlib._global_flags import fill_uninitialized
from tensorlib.ops import memory_format as _mf
from tensorlib.ops._args import sizes_arg, sizes_or_keyword
from tensorlib.ops._unsigned import refuse_unsigned

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "empty", "zeros", "ones", "full", "empty_like",
           "zeros_like", "ones_like", "full_like", "empty_strided", "scalar_tensor", "arange",
           "linspace", "logspace", "eye"]


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


def dense_layout(layout, name):
    """The factories make dense (strided) tensors; a sparse layout asked of them raises
    instead of being ignored (sparse tensors come from sparse_coo_tensor / to_sparse)."""
    from tensorlib._layout import strided
    if layout is not None and layout is not strided:
        raise NotImplementedError(f"{name}(): layout={layout} is not supported; make sparse "
                                  f"tensors with sparse_coo_tensor or Tensor.to_sparse")


def empty(*sizes, size=None, dtype=None, device=None, requires_grad=False, memory_format=None,
          pin_memory=False):
    d = dtype or dt.get_default_dtype()
    sizes, dev = sizes_or_keyword(sizes, size), factory_device(device)
    if memory_format is None or memory_format is _mf.contiguous_format:
        t = _empty(sizes, d, dev)
    else:
        t = _mf.empty_in(sizes, d, dev, _mf.check(memory_format))
    return _finish(fill_uninitialized(t), requires_grad)


def _check_fill_value(name, fill_value):
    """fill_value is a Number to PyTorch's parser (a 0-dim tensor passes as one)."""
    if type(fill_value) in (float, int, bool) or isinstance(fill_value, (numbers.Number,
                                                                          np.generic)):
        return
    if isinstance(fill_value, TensorImpl) and not fill_value._sizes:
        return
    raise TypeError(f"{name}(): argument 'fill_value' (position 2) must be Number, not "
                    f"{type(fill_value).__name__}")


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    _check_fill_value("full", fill_value)
    if dtype is None:
        dtype = (dt.bool_ if isinstance(fill_value, bool) else
                 dt.int64 if isinstance(fill_value, numbers.Integral) else
                 _default_complex() if isinstance(fill_value, complex) else
                 dt.get_default_dtype())
    t = _empty(sizes_arg((size,)), dtype, factory_device(device))
    lookup("fill", t._device)(t, fill_value)
    return _finish(t, requires_grad)


def _default_complex():
    """The complex dtype of a Python complex number: complex128 under a float64 default."""
    return dt.complex128 if dt.get_default_dtype() is dt.float64 else dt.complex64


def zeros(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    return full(sizes_or_keyword(sizes, size), 0, dtype=dtype or dt.get_default_dtype(), device=device,
                requires_grad=requires_grad)


def ones(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    return full(sizes_or_keyword(sizes, size), 1, dtype=dtype or dt.get_default_dtype(), device=device,
                requires_grad=requires_grad)


def _like(t, dtype, device):
    return dict(dtype=dtype or t._dtype, device=device if device is not None else t._device)


def _like_in(t, fill_value, dtype, device, requires_grad, memory_format):
    """A tensor of t's sizes, filled with fill_value (None: uninitialised), in
    memory_format (default preserve_format: t's layout, see ops/memory_format.py). A sparse
    t's class makes its own (`_sparse_like`: tensorlib/sparse/_mixed.py)."""
    if type(t) in SPARSE_TYPES:
        return type(t)._sparse_like(t, fill_value, dtype, device, requires_grad)
    kw = _like(t, dtype, device)
    fmt = _mf.resolve(_mf.preserve_format if memory_format is None else memory_format, t)
    out = _mf.empty_in(t._sizes, kw["dtype"], factory_device(kw["device"]), fmt)
    if fill_value is not None:
        lookup("fill", out._device)(out, fill_value)
    else:
        fill_uninitialized(out)
    return _finish(out, requires_grad)


def empty_like(t, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like_in(t, None, dtype, device, requires_grad, memory_format)


def zeros_like(t, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like_in(t, 0, dtype, device, requires_grad, memory_format)


def ones_like(t, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like_in(t, 1, dtype, device, requires_grad, memory_format)


def full_like(t, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    _check_fill_value("full_like", fill_value)
    return _like_in(t, fill_value, dtype, device, requires_grad, memory_format)


# ---- Tensor.new_*: factories taking this tensor's dtype and device by default --------------
def new_empty(self, *sizes, size=None, dtype=None, device=None, requires_grad=False,
              layout=None, pin_memory=False):
    dense_layout(layout, "new_empty")
    return empty(sizes_or_keyword(sizes, size), **_like(self, dtype, device),
                 requires_grad=requires_grad)


def new_zeros(self, *sizes, size=None, dtype=None, device=None, requires_grad=False):
    return full(sizes_or_keyword(sizes, size), 0, **_like(self, dtype, device), requires_grad=requires_grad)


def new_ones(self, *sizes, size=None, dtype=None, device=None, requires_grad=False):
    return full(sizes_or_keyword(sizes, size), 1, **_like(self, dtype, device), requires_grad=requires_grad)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    _check_fill_value("new_full", fill_value)
    return full(size, fill_value, **_like(self, dtype, device), requires_grad=requires_grad)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """A copy of data (torch warns when it is a tensor: clone().detach() says so better)."""
    if isinstance(data, TensorImpl):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        data = data.detach()
    return tensor(data, **_like(self, dtype, device), requires_grad=requires_grad)


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


def is_sequence(x):
    """What PyTorch reads as data: a type with __getitem__ and __len__ that is not a mapping
    (lists, tuples, deque, range, array.array, user sequences); str and bytes are refused."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
    cls = type(x)
    return (hasattr(cls, "__getitem__") and hasattr(cls, "__len__")
            and not isinstance(x, (dict, TensorImpl, np.ndarray)))


def _leaf_dtype(x):
    """torch's inference for one scalar: bool, int64, the default float, or a tensor's dtype."""
    if isinstance(x, TensorImpl):
        return x._dtype
    if isinstance(x, (np.ndarray, np.generic)):     # numpy scalars keep their dtype, as in torch
        return dt.from_numpy_dtype(x.dtype)
    if isinstance(x, (bool, np.bool_)):
        return dt.bool_
    if isinstance(x, numbers.Integral):
        return dt.int64
    if isinstance(x, numbers.Real):
        return dt.get_default_dtype()
    if isinstance(x, numbers.Complex):
        return dt.complex128 if dt.get_default_dtype() is dt.float64 else dt.complex64
    if isinstance(x, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
    raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")


def _infer_dtype(data):
    """torch.tensor's inference: the promotion of every leaf's type (bool < int64 < float;
    tensors inside lists count with their own dtype)."""
    result = None
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
            continue
        if not isinstance(x, (numbers.Number, np.generic)) and is_sequence(x):
            stack.extend(list(x))
            continue
        d = _leaf_dtype(x)
        result = d if result is None else dt.promote_types(result, d)
    return result


def _scalars(data):
    """Nested lists with every tensor inside replaced by its Python number (torch accepts only
    one-element tensors there) and every other sequence read as a list."""
    if isinstance(data, (list, tuple)):
        return [_scalars(x) for x in data]
    if isinstance(data, TensorImpl):
        if data.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return data.item()
    if not isinstance(data, (numbers.Number, np.generic)) and is_sequence(data):
        return [_scalars(x) for x in data]
    return data


def _host_array(data, dtype):
    if isinstance(data, TensorImpl):
        return data.detach().cpu().numpy()
    values = _scalars(data)
    try:
        return np.asarray(values, dtype=dtype.np)
    except OverflowError:
        return _checked_integers(values, dtype)


def _checked_integers(values, dtype):
    """Python ints into an integer dtype as PyTorch converts them: through int64 (a value
    outside int64 is a ValueError), then checked against the dtype, unsigned dtypes taking
    negative values modulo 2**bits."""
    try:
        wide = np.asarray(values, dtype=np.int64)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    if wide.size and overflows(wide.min(), dtype) or wide.size and overflows(wide.max(), dtype):
        raise RuntimeError(f"value cannot be converted to type {str(dtype).split('.')[-1]} "
                           f"without overflow")
    return wide.astype(dtype.np)


def overflows(value, dtype):
    """Whether number `value` does not fit `dtype` (PyTorch's c10::overflows: for integers,
    unsigned dtypes accept -max..max, negative values wrapping; a float must lie in the
    dtype's range, nan and inf never do)."""
    if dtype.category >= 2 or dtype is dt.bool_:        # floating, complex
        return False
    info = np.iinfo(dtype.np)
    if isinstance(value, float):
        return not info.min <= value <= info.max
    if info.min == 0:
        return value > info.max or value < -int(info.max)
    return value < info.min or value > info.max


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
    dev = factory_device(device)
    t = _empty(tuple(host.shape), d, dev)
    dev._backend.copy_from_host(t, host)
    return _finish(t, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like tensor(), but reuses `data` when it already is a tensor or a CPU numpy array of
    the requested dtype and device."""
    if isinstance(data, TensorImpl):
        return data.to(device=device if device is not None else data._device,
                       dtype=dtype or data._dtype)
    if isinstance(data, np.ndarray) and factory_device(device).type == "cpu" and (
            dtype is None or dtype.np == data.dtype) and all(s >= 0 for s in data.strides):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """`obj` as a tensor, sharing its memory when it can (a tensor, a CPU numpy array or a
    buffer of the requested dtype and device); copy=True always copies, copy=False refuses
    to."""
    dev = None if device is None else factory_device(device)
    if isinstance(obj, TensorImpl):
        t = obj.to(device=dev if dev is not None else obj._device, dtype=dtype or obj._dtype)
        if t is not obj and copy is False:
            raise ValueError(f"can't alias tensor from device '{obj._device}' and dtype "
                             f"'{obj._dtype}' into device '{t._device}' and dtype '{t._dtype}'.")
        t = t.clone() if copy and t is obj else t
    elif isinstance(obj, np.ndarray):
        if copy:
            t = tensor(obj, dtype=dtype, device=device)
        else:
            t = as_tensor(obj, dtype=dtype, device=device)
            if copy is False and not np.shares_memory(t.numpy(), obj):
                raise ValueError("can't alias NumPy array into a tensor of another dtype or "
                                 "device.")
    elif isinstance(obj, Storage):
        # a storage's bytes read as dtype (PyTorch 2.13 reads int64 when none is given)
        d = dtype or dt.int64
        t = wrap(obj, (obj._nbytes // d.itemsize,), (1,), 0, d)
        if dev is not None and dev != t._device:
            if copy is False:
                raise ValueError(f"can't alias storage into a tensor on device '{dev}'.")
            t = t.to(dev)
        elif copy:
            t = t.clone()
    elif _is_buffer(obj) and not isinstance(obj, np.generic):
        host = np.frombuffer(obj, dtype=(dtype or dt.get_default_dtype()).np)
        t = from_numpy(host.copy() if copy else host)
        if dev is not None and dev != t._device:
            if copy is False:
                raise ValueError(f"can't alias buffer into a tensor on device '{dev}'.")
            t = t.to(dev)
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        t = tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _is_buffer(obj):
    """Whether obj exposes the buffer protocol (bytes, bytearray, memoryview, array.array)."""
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def _bound(value, name):
    """An arange bound or step as the Python number PyTorch's Scalar reads: a 0-dim tensor
    or a NumPy scalar keeps its kind (a float tensor makes the range floating)."""
    if isinstance(value, TensorImpl) and value.dim() != 0:
        raise TypeError(f"arange(): argument '{name}' must be Number, not Tensor")
    return value.item() if isinstance(value, (TensorImpl, np.generic)) else value


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    start, end, step = _bound(start, "start"), _bound(end, "end"), _bound(step, "step")
    refuse_unsigned("arange_cpu", dtype)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"upper bound and larger bound inconsistent with step sign: start="
                           f"{start}, end={end}, step={step}")
    if dtype is dt.int64:
        # int64 truncates the bounds and the step first, as PyTorch's arange
        start, end, step = (int(v) for v in (start, end, step))
        if step == 0:
            raise ValueError("step must be nonzero")
    elif dtype is not None and dtype.category < 2:
        # other integer dtypes: the length from the float bounds, the values from the
        # truncated start and step (PyTorch's arithmetic)
        length = math.ceil((end - start) / step)
        host = int(start) + int(step) * np.arange(length, dtype=np.int64)
        t = _empty((length,), dtype, factory_device(device))
        t._device._backend.copy_from_host(t, host.astype(dtype.np))
        return _finish(t, requires_grad)
    values = (start, end, step)
    if dtype is None and type(start) is int and type(end) is int and type(step) is int:
        return _int64_arange(start, end, step, device, requires_grad)
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
    dev = factory_device(device)
    t = _empty((length,), dtype, dev)
    dev._backend.copy_from_host(t, host)
    return _finish(t, requires_grad)


def _int64_arange(start, end, step, device, requires_grad):
    """arange of Python ints: numpy's exact integer arange, once (the general path builds a
    float64 one too; ~2 us of a 6 us call)."""
    host = np.arange(start, end, step, dtype=np.int64)
    dev = factory_device(device)
    t = _empty(host.shape, dt.int64, dev)
    dev._backend.copy_from_host(t, host)
    return _finish(t, requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor with the given strides over a fresh storage just big enough."""
    sizes, strides = sizes_arg((size,)), sizes_arg((stride,), "stride")
    if len(sizes) != len(strides):
        raise RuntimeError(f"dimensionality of sizes ({len(sizes)}) must match "
                           f"dimensionality of strides ({len(strides)})")
    if any(s < 0 for s in strides):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(strides)}")
    d = dtype or dt.get_default_dtype()
    extent = 0 if 0 in sizes else 1 + sum((n - 1) * st for n, st in zip(sizes, strides))
    base = fill_uninitialized(_empty((extent,), d, factory_device(device)))
    return _finish(wrap(base._storage, sizes, strides, 0, d), requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    """A 0-dim tensor; unlike tensor(), an int or bool still gets the default float dtype."""
    if isinstance(s, TensorImpl):
        s = s.item()
    return full((), s, dtype=dtype or dt.get_default_dtype(), device=device,
                requires_grad=requires_grad)


def _number(x, name):
    if isinstance(x, TensorImpl):
        if x.dim() != 0:
            raise RuntimeError(f"linspace only supports 0-dimensional start and end tensors, "
                               f"but got {name} with {x.dim()} dimension(s).")
        return x.item()
    return x


def _linspace_values(start, end, steps):
    """torch's symmetric formula (the first half counts up from start, the second down from
    end), in float64, so both ends are exact."""
    if steps == 1:
        return np.array([start], dtype=np.float64)
    step = (end - start) / (steps - 1)
    i = np.arange(steps, dtype=np.float64)
    return np.where(i < steps // 2, start + step * i, end - step * (steps - 1 - i))


def _split(a):
    """a = hi + lo with hi holding 26 bits (Veltkamp), so products of halves are exact."""
    t = 134217729.0 * a
    hi = t - (t - a)
    return hi, a - hi


def _fma(a, b, c):
    """a * b + c rounded once, in float64 (the product's error term by Dekker's split, the
    sum's by Knuth's two-sum)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    product_error = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    back = s - p
    return s + (((p - (s - back)) + (c - back)) + product_error)


def _linspace_half(start, end, steps, half):
    """float16/bfloat16 as PyTorch's Half arithmetic goes: every operation (the index
    converted too) rounded to the dtype."""
    s, e = half(start), half(end)
    step = (e - s) / half(steps - 1)
    i = np.arange(steps)
    up = s + step * i.astype(half)
    down = e - step * (steps - 1 - i).astype(half)
    return np.where(i < steps // 2, up, down)


def _linspace_like_torch(start, end, steps, dtype):
    """PyTorch's CPU linspace values, bit for bit: the step computed in the dtype itself for
    float32 (in float64 for float64 and the integer dtypes), each value start + step * i (or
    end - step * (steps - 1 - i) past halfway) as one fused multiply-add. Code compares the
    grid it builds with the spacing it reads back (grid[1] - grid[0]): a step rounded
    differently moved a GP's interpolation weights by 3e-4."""
    if steps == 1 or dtype.is_complex:
        return _linspace_values(start, end, steps)
    if dtype in (dt.float16, dt.bfloat16):
        return _linspace_half(start, end, steps, dtype.np.type)
    if dtype is dt.float32:
        s, e = np.float32(start), np.float32(end)
        step = np.float64((e - s) / np.float32(steps - 1))
        s, e = np.float64(s), np.float64(e)
    else:
        s, e = np.float64(start), np.float64(end)
        step = (e - s) / np.float64(steps - 1)
    i = np.arange(steps, dtype=np.float64)
    steps_vec = np.full(steps, step)
    return np.where(i < steps // 2, _fma(steps_vec, i, s), _fma(-steps_vec, steps - 1 - i, e))


def _from_host(host, dtype, device, requires_grad):
    dev = factory_device(device)
    t = _empty(tuple(host.shape), dtype, dev)
    dev._backend.copy_from_host(t, np.ascontiguousarray(host.astype(dtype.np)))
    return _finish(t, requires_grad)


def _check_steps(steps):
    """steps as an int: an int, or an integer scalar (a 0-dim integer tensor, as torch's
    int arguments take)."""
    if isinstance(steps, TensorImpl) and steps.ndim == 0 and steps.dtype.category == 1:
        steps = operator.index(steps)
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral):
        raise TypeError(f"linspace(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return int(steps)


def _no_bool_range(name, dtype):
    if dtype is dt.bool_:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for 'Bool'")


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """`steps` evenly spaced values from start to end inclusive (default float dtype)."""
    _no_bool_range("linspace", dtype)
    refuse_unsigned("linspace_cpu", dtype)
    steps = _check_steps(steps)
    start, end = _number(start, "start"), _number(end, "end")
    if dtype is not None and dtype.category < 2:         # integer dtypes truncate the ends
        start, end = int(start), int(end)                # first (PyTorch's)
    dtype = dtype or dt.get_default_dtype()
    host = _linspace_like_torch(start, end, int(steps), dtype)
    return _from_host(host, dtype, device, requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """base ** linspace(start, end, steps), computed in float64."""
    _no_bool_range("logspace", dtype)
    steps = _check_steps(steps)
    start, end = _number(start, "start"), _number(end, "end")
    host = np.power(float(base), _linspace_values(start, end, int(steps)))
    return _from_host(host, dtype or dt.get_default_dtype(), device, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """An n x m matrix with ones on the diagonal (written through the fill primitive on a
    diagonal view, so it is built on the device)."""
    if m is None:
        m = n
    refuse_unsigned("eye", dtype)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    t = zeros(n, m, dtype=dtype, device=device)
    if min(n, m) > 0:
        from tensorlib._C.views import diagonal
        lookup("fill", t._device)(diagonal(t, 0, 0, 1), 1)
    return _finish(t, requires_grad)


TENSOR_METHODS = {"new_empty": new_empty, "new_zeros": new_zeros, "new_ones": new_ones,
                  "new_full": new_full, "new_tensor": new_tensor}
