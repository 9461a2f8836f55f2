"""Tensors from and to other libraries' memory: frombuffer (a Python buffer), and DLPack
(from_dlpack / to_dlpack and Tensor.__dlpack__), through NumPy's DLPack support, so host
tensors share memory with the producer. Other devices have no DLPack exchange here."""
import numpy as np

__all__ = ["from_dlpack", "frombuffer", "to_dlpack"]


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D host tensor over `buffer`'s bytes (shared: writes show in both)."""
    from tensorlib.ops.creation import from_numpy
    view = memoryview(buffer)
    length, item = view.nbytes, dtype.itemsize
    if length == 0:
        raise ValueError("both buffer length (0) and count (-1) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0 and (length - offset) % item:
        raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                         f"bytes) must be a multiple of element size ({item})")
    if count > 0 and length - offset < count * item:
        raise ValueError(f"requested buffer length ({count} * {item} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    array = np.frombuffer(view, dtype=_numpy_dtype(dtype), count=count, offset=offset)
    if not array.flags.writeable:
        # an immutable buffer (bytes): PyTorch warns and aliases it; a copy holds the same
        # values without letting the tensor write into an immutable object
        import warnings
        warnings.warn("The given buffer is not writable, and PyTorch does not support "
                      "non-writable tensors. This means you can write to the underlying "
                      "(supposedly non-writable) buffer using the tensor. You may want to copy "
                      "the buffer to protect its data or make it writable before converting it "
                      "to a tensor.", UserWarning, stacklevel=2)
        array = array.copy()
    return from_numpy(array).requires_grad_(requires_grad)


def _numpy_dtype(dtype):
    return dtype.to_numpy()


class _Capsule:
    """Hands a bare DLPack capsule (to_dlpack's result) to numpy.from_dlpack."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, *args, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def from_dlpack(ext_tensor):
    """A host tensor sharing memory with a DLPack producer (an object with __dlpack__, or a
    capsule)."""
    from tensorlib.ops.creation import from_numpy
    source = ext_tensor if hasattr(ext_tensor, "__dlpack__") else _Capsule(ext_tensor)
    device_type = source.__dlpack_device__()[0] if hasattr(source, "__dlpack_device__") else 1
    if device_type != 1:
        raise RuntimeError(f"from_dlpack(): tensorlib imports host (kDLCPU) memory only, got "
                           f"DLPack device type {device_type}")
    array = np.from_dlpack(source)
    return from_numpy(array if array.flags.writeable else _writable_alias(array))


class _Alias:
    """The same memory as `array`, declared writable (NumPy marks DLPack imports read-only;
    a PyTorch tensor from DLPack writes through to the producer). Keeps `array` alive."""

    def __init__(self, array):
        self.base = array
        interface = dict(array.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface


def _writable_alias(array):
    return np.asarray(_Alias(array))


def _host_array(tensor):
    if tensor.device.type != "cpu":
        raise RuntimeError(f"to_dlpack(): tensorlib exports host tensors only, not "
                           f"{tensor.device.type} ones; move it with .cpu() first")
    if tensor.requires_grad:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    return tensor.numpy()


def to_dlpack(tensor):
    """A DLPack capsule over the host tensor's memory."""
    return _host_array(tensor).__dlpack__()


def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    kwargs = {} if max_version is None else {"max_version": max_version}
    return _host_array(self).__dlpack__(**kwargs)


def __dlpack_device__(self):
    if self.device.type != "cpu":
        raise RuntimeError("__dlpack_device__(): tensorlib exports host tensors only")
    return (1, 0)


TENSOR_METHODS = {"__dlpack__": __dlpack__, "__dlpack_device__": __dlpack_device__}
