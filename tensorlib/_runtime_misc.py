"""Small process-wide switches and queries PyTorch programs call at start-up
(torch.typename, set_warn_always, set_num_interop_threads, set_default_tensor_type, ...)."""
import os
import warnings

from tensorlib import _C
import tensorlib._C.dtypes as dt
from tensorlib._C.storage import Storage
from tensorlib._C.tensor_impl import TensorImpl

__all__ = ["typename", "is_storage", "set_flush_denormal", "set_warn_always",
           "is_warn_always_enabled", "get_num_interop_threads", "set_num_interop_threads",
           "set_default_tensor_type", "_assert", "_assert_async"]

_warn_always = False
_interop_threads = os.cpu_count() or 1


def typename(obj):
    """The type's name as torch.typename spells it: `tensorlib.FloatTensor` for a tensor."""
    if isinstance(obj, TensorImpl):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module, qualname = obj.__class__.__module__ or "", obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def is_storage(obj):
    from tensorlib._storage_typed import TypedStorage
    return isinstance(obj, (Storage, TypedStorage))


def set_flush_denormal(mode):
    """Flushing denormals needs the CPU's control register, which the kernels do not set:
    False, PyTorch's answer on a CPU without the feature."""
    if not isinstance(mode, bool):
        raise TypeError(f"set_flush_denormal(): argument 'mode' (position 1) must be bool, "
                        f"not {type(mode).__name__}")
    return False


def set_warn_always(b):
    """Kept and reported: PyTorch repeats its once-per-process warnings under it; tensorlib
    has no once-per-process warning for it to repeat."""
    global _warn_always
    if not isinstance(b, bool):
        raise TypeError(f"_set_warnAlways(): argument 'enabled' (position 1) must be bool, "
                        f"not {type(b).__name__}")
    _warn_always = b


def is_warn_always_enabled():
    return _warn_always


def get_num_interop_threads():
    return _interop_threads


def set_num_interop_threads(n):
    """Kept and reported: tensorlib runs independent ops one after another, with no
    inter-op pool for the number to size."""
    global _interop_threads
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"set_num_interop_threads(): argument 'num' (position 1) must be int, "
                        f"not {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    _interop_threads = n


def set_default_tensor_type(t):
    """Deprecated in PyTorch for set_default_dtype: a legacy type (or its name) sets the
    default floating dtype."""
    import tensorlib
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                  "use torch.set_default_dtype() and torch.set_default_device() as "
                  "alternatives.", UserWarning, stacklevel=2)
    if isinstance(t, str):
        name = t.split(".")[-1]
        cls = getattr(tensorlib, name, None) if t.count(".") == 1 else None
        if cls is None or not hasattr(cls, "dtype"):
            raise TypeError(f"invalid type: '{t}'")
        t = cls
    dtype = getattr(t, "dtype", None)
    if not isinstance(dtype, dt.dtype):
        raise TypeError(f"invalid type: '{t}'")
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    tensorlib.set_default_dtype(dtype)


_api_usage_logged = set()


def _log_api_usage_once(event):
    """torch._C._log_api_usage_once: libraries report which API they use. PyTorch sends it to
    its usage logger, which prints `PYTORCH_API_USAGE <event>` once per event to stderr when
    PYTORCH_API_USAGE_STDERR is set and drops it otherwise; so does this."""
    if not isinstance(event, str):
        raise TypeError(f"_log_api_usage_once(): argument 'event' must be str, not "
                        f"{type(event).__name__}")
    if event in _api_usage_logged:
        return
    _api_usage_logged.add(event)
    if os.environ.get("PYTORCH_API_USAGE_STDERR"):
        import sys
        print(f"PYTORCH_API_USAGE {event}", file=sys.stderr)


# where PyTorch programs reach it
_C._log_api_usage_once = _log_api_usage_once


def _assert(condition, message):
    """torch._assert: `assert` that symbolic tracing can record (a function call, not a
    statement); raises AssertionError(message) when condition is false."""
    if not isinstance(condition, TensorImpl):
        from tensorlib.overrides import handle_torch_function, has_torch_function
        if has_torch_function((condition,)):
            return handle_torch_function(_assert, (condition,), condition, message)
    assert condition, message


def _assert_async(tensor, assert_msg=None):
    """torch._assert_async: a value check that compiled graphs keep (unlike `if t: raise`);
    raises RuntimeError when the one-element tensor is zero. Host tensors are checked at
    once, as PyTorch checks CPU ones."""
    if not isinstance(tensor, TensorImpl):
        raise TypeError(f"_assert_async(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    if not tensor.is_nonzero():
        raise RuntimeError("Expected Tensor with single nonzero value, but got zero"
                           if assert_msg is None else assert_msg)
