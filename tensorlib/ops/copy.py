"""Moving and converting tensors: copy_, to(device/dtype), cpu(). Across backends the data
passes through host memory; within a backend the `copy` primitive does casts and strides."""
import tensorlib._C.dtypes as dt
from tensorlib._C.device import canonical, device as _device_cls
from tensorlib._C.dispatch import lookup
from tensorlib._C.factory import empty, cast
from tensorlib._C.pointwise import complex_off_cpu
from tensorlib._C.tensor_impl import TensorImpl, wrap
from tensorlib._C.views import expand_strides
from tensorlib._C import grad_mode as _grad_mode
from tensorlib.ops._opdef import differentiable
from tensorlib import _capture_state
from tensorlib.ops import pinned as _pinned


def to_device(x, dev, non_blocking=False):
    """x's values on `dev` (x itself when already there). non_blocking: a copy from pinned
    host memory to a device, or from a device into new pinned host memory, is queued without
    the host waiting for it (as in PyTorch; synchronize before reading a host result)."""
    dev = canonical(dev)
    if x._device is dev:
        return x
    if x._dtype.category == 3 and dev.type != "cpu":
        raise complex_off_cpu("to", x._dtype, dev)
    src_backend, dst_backend = x._device._backend, dev._backend
    if src_backend is not dst_backend and _capture_state.current is not None:
        _capture_state.materialize(f"a copy from {x._device.type} to {dev.type}")
    if non_blocking and dev.type == "cpu" and hasattr(src_backend, "copy_to_pinned"):
        return src_backend.copy_to_pinned(x)
    out = empty(x._sizes, x._dtype, dev)
    if src_backend is dst_backend:
        dst_backend.copy_between_devices(out, x)
    elif non_blocking and _pinned.is_pinned(x, dev):       # the DMA reads x's own memory
        dst_backend.copy_from_host(out, x.detach().numpy(), non_blocking=True)
    else:
        dst_backend.copy_from_host(out, src_backend.copy_to_host(x))
    return out


def check_no_internal_overlap(dst):
    """PyTorch refuses to write into a tensor whose elements share memory (an expanded
    tensor with elements)."""
    if 0 in dst._sizes:
        return
    for size, stride in zip(dst._sizes, dst._strides):
        if stride == 0 and size > 1:
            raise RuntimeError("unsupported operation: more than one element of the written-to "
                               "tensor refers to a single memory location. Please clone() the "
                               "tensor before performing the operation.")


def copy_(dst, src, non_blocking=False):
    """Write src into dst (broadcasting src, converting its dtype and device)."""
    if not isinstance(src, TensorImpl):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    check_no_internal_overlap(dst)
    if _grad_mode.is_grad_enabled() and (dst._requires_grad or src._requires_grad):
        from tensorlib.autograd.recording import record_overwrite
        return record_overwrite("copy_", dst,
                                lambda: _copy_values(dst, src, non_blocking), (src,))
    return _copy_values(dst, src, non_blocking)


def _copy_values(dst, src, non_blocking=False):
    if src._device is not dst._device:
        src = to_device(src, dst._device, non_blocking)
    if src._sizes != dst._sizes:
        sizes, strides = expand_strides(src._sizes, src._strides, dst._sizes)
        if sizes != dst._sizes:
            raise RuntimeError(f"output with shape {list(dst._sizes)} doesn't match the "
                               f"broadcast shape {list(sizes)}")
        src = wrap(src._storage, sizes, strides, src._offset, src._dtype)
    lookup("copy", dst._device)(dst, src)
    dst._storage.version += 1
    return dst


def _parse_to(args, kwargs):
    """(device, dtype, non_blocking, copy) from to()'s arguments; the bools may be
    positional after the device/dtype, as in PyTorch."""
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    flags = [kwargs.get("non_blocking", False), kwargs.get("copy", False)]
    given = 0
    for a in args:
        if isinstance(a, bool) and given < 2:
            flags[given] = a
            given += 1
        elif isinstance(a, dt.dtype):
            dtype = a
        elif isinstance(a, TensorImpl):
            device, dtype = a._device, a._dtype
        elif isinstance(a, (str, _device_cls)):
            device = a
        elif a is not None:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    return device, dtype, flags[0], flags[1]


def to(x, *args, **kwargs):
    """x.to(device), x.to(dtype), x.to(device, dtype), x.to(other): x itself if nothing
    changes, unless copy=True."""
    if any(isinstance(a, TensorImpl) for a in args):
        # `other` lends its device and dtype only: it is no input of the recorded copy (a
        # gradient path through it made b.to(x) require grad when x did)
        args = tuple(part for a in args
                     for part in ((a._device, a._dtype) if isinstance(a, TensorImpl) else (a,)))
    return _to_copy(x, *args, **kwargs)


@differentiable("to_copy")
def _to_copy(x, *args, **kwargs):
    device, dtype, non_blocking, copy = _parse_to(args, kwargs)
    out = x
    if device is not None:
        out = to_device(out, device, non_blocking)
    if dtype is not None and dtype is not out._dtype:
        if dtype.is_complex and out._device.type != "cpu":
            raise complex_off_cpu("to", dtype, out._device)
        out = cast(out, dtype)
    if copy and out is x:
        out = cast(x, x._dtype)
    fmt = kwargs.get("memory_format")
    if fmt is not None or out is not x:
        out = _in_format(out, x, fmt)
    return out


def _in_format(out, x, fmt):
    """A converted tensor in memory_format (default preserve_format: x's layout; the
    conversions above make contiguous copies)."""
    from tensorlib.ops import memory_format as mf
    fmt = mf.resolve(mf.preserve_format if fmt is None else fmt, x)
    if fmt is mf.contiguous_format and (out is not x or mf.is_in(out, fmt)):
        return out
    if fmt is not mf.contiguous_format and mf.is_in(out, fmt):
        return out
    converted = mf.empty_in(out._sizes, out._dtype, out._device, fmt)   # checks the rank
    lookup("copy", out._device)(converted, out)
    return converted
