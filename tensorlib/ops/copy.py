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


def to_device(x, dev):
    """x's values on `dev` (x itself when already there)."""
    dev = canonical(dev)
    if x._device is dev:
        return x
    if x._dtype.category == 3 and dev.type != "cpu":
        raise complex_off_cpu("to", x._dtype, dev)
    out = empty(x._sizes, x._dtype, dev)
    src_backend, dst_backend = x._device._backend, dev._backend
    if src_backend is dst_backend:
        dst_backend.copy_between_devices(out, x)
    else:
        if _capture_state.current is not None:
            _capture_state.materialize(f"a copy from {x._device.type} to {dev.type}")
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
        return record_overwrite("copy_", dst, lambda: _copy_values(dst, src), (src,))
    return _copy_values(dst, src)


def _copy_values(dst, src):
    if src._device is not dst._device:
        src = to_device(src, dst._device)
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
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    for a in args:
        if isinstance(a, dt.dtype):
            dtype = a
        elif isinstance(a, TensorImpl):
            device, dtype = a._device, a._dtype
        elif isinstance(a, (str, _device_cls)):
            device = a
        elif a is not None:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    return device, dtype


@differentiable("to_copy")
def to(x, *args, **kwargs):
    """x.to(device), x.to(dtype), x.to(device, dtype), x.to(other): x itself if nothing
    changes, unless copy=True."""
    device, dtype = _parse_to(args, kwargs)
    out = x
    if device is not None:
        out = to_device(out, device)
    if dtype is not None and dtype is not out._dtype:
        if dtype.is_complex and out._device.type != "cpu":
            raise complex_off_cpu("to", dtype, out._device)
        out = cast(out, dtype)
    if kwargs.get("copy") and out is x:
        out = cast(x, x._dtype)
    return out
