"""Pinned host memory and the device-facing Tensor methods: `pin_memory`, `is_pinned`,
`cuda()`, `record_stream`, and `pin_memory=True` on the factories.

Page-locked memory belongs to an accelerator backend (one whose devices are not the host CPU)
that offers it: its optional `pin_memory(tensor)` and `is_pinned(tensor)`. With none, as on a
CPU-only machine, pinning raises PyTorch's RuntimeError and `is_pinned()` is False.
"""
import functools

from tensorlib.ops.creation import dense_layout


__all__ = []

_NO_ACCELERATOR = "Cannot access accelerator device when none is available."
# the factories that take pin_memory= in PyTorch
_FACTORIES = ("empty", "empty_strided", "zeros", "ones", "full", "tensor", "arange", "range",
              "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm",
              "scalar_tensor", "tril_indices", "triu_indices", "empty_like", "zeros_like",
              "ones_like", "full_like", "rand_like", "randn_like", "randint_like")


def pinning_backend(device=None):
    """The backend that pins host memory: `device`'s, else the first accelerator with pinned
    memory; None when there is none."""
    import tensorlib
    from tensorlib.accelerator import accelerator_indices
    if device is not None:
        names = [str(device).split(":")[0]]
    else:
        names = [n for n in tensorlib.backends.available() if accelerator_indices(n)]
    for name in names:
        try:
            backend = tensorlib.backends.get(name)
        except Exception:
            continue
        if getattr(backend, "pin_memory", None) is not None:
            return backend
    return None


def is_pinned(x, device=None):
    """True when x's memory is page-locked host memory (a view of a pinned tensor is)."""
    if x._device.type != "cpu":
        return False
    backend = pinning_backend(device)
    return backend is not None and backend.is_pinned(x)


def pin_memory(x, device=None):
    """x copied into page-locked host memory (x itself when it is pinned already)."""
    if x._device.type != "cpu":
        raise RuntimeError(f"cannot pin '{x.type()}' on {x._device}: only dense CPU tensors "
                           f"can be pinned")
    backend = pinning_backend(device)
    if backend is None:
        raise RuntimeError(_NO_ACCELERATOR)
    if backend.is_pinned(x):
        return x
    return backend.pin_memory(x)


def cuda(x, device=None, non_blocking=False, memory_format=None):
    """x on a CUDA device (the current one by default)."""
    target = "cuda" if device is None else (f"cuda:{device}" if isinstance(device, int)
                                            else device)
    kwargs = {} if memory_format is None else {"memory_format": memory_format}
    return x.to(target, non_blocking=non_blocking, **kwargs)


def record_stream(x, stream):
    """x's memory is also used by the work queued on `stream`: the caching allocator does not
    hand it out again, after x is freed, until that work is done."""
    from tensorlib.cuda.streams import Stream
    if not isinstance(stream, Stream):
        raise TypeError(f"record_stream(): argument 'stream' must be a tensorlib.cuda.Stream, "
                        f"not {type(stream).__name__}")
    if x._device.type != "cuda" or x._device.index != stream.device_index:
        raise RuntimeError(f"record_stream(): the tensor is on {x._device}, the stream on "
                           f"{stream.device}")
    x._device._backend.record_stream(x, stream._raw)


def install_factories(namespace):
    """Give the factories their `pin_memory=` (the result, pinned, when True) and, but for
    `tensor`, `layout=` (strided; a sparse layout raises)."""
    for name in _FACTORIES:
        fn = namespace.get(name)
        if fn is not None:
            namespace[name] = _with_pin_memory(fn)


def _with_pin_memory(fn):
    takes_layout = fn.__name__ != "tensor"

    @functools.wraps(fn)
    def factory(*args, pin_memory=False, **kwargs):
        if takes_layout and "layout" in kwargs:
            dense_layout(kwargs.pop("layout"), fn.__name__)
        result = fn(*args, **kwargs)
        if not pin_memory:
            return result
        if pinning_backend() is None:
            raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; "
                               "no pinned memory allocator is available on this system.")
        if result._device.type != "cpu":
            raise RuntimeError(f"{fn.__name__}(): only CPU tensors can be pinned, not "
                               f"{result._device}")
        pinned = pin_memory_of(result)
        pinned.requires_grad_(result.requires_grad)
        return pinned
    return factory


def pin_memory_of(x):
    """x's values in pinned memory, not recorded by autograd (a factory's result)."""
    from tensorlib.autograd.grad_mode import no_grad
    with no_grad():
        return pin_memory(x.detach())


TENSOR_METHODS = {"pin_memory": pin_memory, "is_pinned": is_pinned, "cuda": cuda,
                  "record_stream": record_stream}
