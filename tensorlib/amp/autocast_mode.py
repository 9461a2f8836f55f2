"""tensorlib.autocast: regions in which listed ops run in a lower precision (PyTorch's names
and semantics). The state is per thread, as PyTorch's: per device type (enabled, dtype),
plus one cast cache and the nesting depth shared by the thread's device types. The ops see
only the hook in tensorlib/ops/_autocast.py, installed while any thread has a region on.

NOTE [ Weight cast cache ]
Inside a region, the lower-precision copy of a float32 leaf that requires grad (a weight) is
made once and reused by every op of the region, as torch does; the copy is an ordinary
differentiable cast, so gradients flow back to the weight in float32. Leaving the outermost
region clears the cache. Unlike torch's, an entry is remade when the weight was written in
place since (an optimizer step inside the region), so a cached cast is never stale."""
import functools
import threading
import warnings

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.amp import policy as _policy
from tensorlib.ops import _autocast as _hook

_DEFAULT_DTYPE = {"cpu": "bfloat16"}        # every GPU backend: float16, as CUDA
_SUPPORTED = ("bfloat16", "float16")


class _ThreadState(threading.local):
    """One thread's autocast state; a new thread starts with autocast off."""

    def __init__(self):
        self.enabled = {}                    # device type -> bool
        self.dtype = {}                      # device type -> dtype set for it
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}        # id(weight) -> (weight, its version, its lower-precision copy)
        self.region = None                   # an _ActiveRegion while some type is enabled


_state = _ThreadState()
_active_threads = 0            # threads with some device type enabled: the hook is on while > 0
_active_lock = threading.RLock()


class _ActiveRegion:
    """Held by a thread's state while it has a region enabled: counts the thread in, and out
    when released, on leaving the region or when the thread ends inside one (its thread-local
    state is dropped then; before, the ops' hook stayed installed for good)."""

    def __init__(self):
        _count_active(1)

    def __del__(self):
        _count_active(-1)


def _count_active(step):
    global _active_threads
    with _active_lock:
        _active_threads += step
        _hook.set_caster(_cast_inputs if _active_threads > 0 else None)


def _check_device_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in ("cpu", "cuda") and \
            device_type not in [b.name for b in tensorlib.backends.list()]:
        raise RuntimeError(f"User specified an unsupported autocast device_type "
                           f"'{device_type}'")


def is_autocast_enabled(device_type=None):
    """torch 2.4+: `is_autocast_enabled("cpu")`; without an argument, CUDA's (as torch)."""
    return _state.enabled.get("cuda" if device_type is None else device_type, False)


def get_autocast_dtype(device_type):
    _check_device_type(device_type)
    d = _state.dtype.get(device_type)
    return d if d is not None else getattr(tensorlib, _DEFAULT_DTYPE.get(device_type,
                                                                          "float16"))


def set_autocast_enabled(device_type, enabled):
    _state.enabled[device_type] = bool(enabled)
    _refresh()


def set_autocast_dtype(device_type, dtype):
    _state.dtype[device_type] = dtype


def is_autocast_cache_enabled():
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled):
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache():
    _state.cache.clear()


def enabled_state():
    """(enabled by device type, dtype by device type) of this thread: what a compiled call's
    guards read."""
    return _state.enabled, _state.dtype


def _refresh():
    """Count this thread in or out of the threads with a region on; the ops' hook is
    installed while any is."""
    state = _state
    active = any(state.enabled.values())
    if active != (state.region is not None):
        state.region = _ActiveRegion() if active else None


# ---- the casts (called by the ops' hook only while some region is enabled) -----------------
def _eligible(x, device_type):
    return (isinstance(x, TensorImpl) and x._dtype.is_floating_point
            and x._dtype is not tensorlib.float64 and x._device.type == device_type)


def _first_device_type(args):
    for a in args:
        if isinstance(a, TensorImpl):
            return a._device.type
        if isinstance(a, (list, tuple)):
            for t in a:
                if isinstance(t, TensorImpl):
                    return t._device.type
    return None


def _cached_cast(x, dtype):
    state = _state
    cacheable = (state.cache_enabled and x._dtype is tensorlib.float32 and x._requires_grad
                 and x._grad_fn is None and x._base is None)
    if not cacheable:
        return x.to(dtype)
    hit = state.cache.get(id(x))
    version = x._storage.version
    if hit is None or hit[0] is not x or hit[1] != version or hit[2]._dtype is not dtype:
        hit = state.cache[id(x)] = (x, version, x.to(dtype))
    return hit[2]


def _map(value, fn):
    if isinstance(value, TensorImpl):
        return fn(value)
    if isinstance(value, list):
        return [_map(v, fn) for v in value]
    if isinstance(value, tuple):
        return tuple(_map(v, fn) for v in value)
    return value


def _widest(args, kwargs, device_type):
    widest = None
    for value in list(args) + list(kwargs.values()):
        for t in (value if isinstance(value, (list, tuple)) else (value,)):
            if _eligible(t, device_type):
                widest = t._dtype if widest is None else tensorlib.promote_types(widest,
                                                                                 t._dtype)
    return widest


def _cast_inputs(name, args, kwargs):
    """The inputs of op `name` as the region's policy wants them."""
    device_type = _first_device_type(args) or _first_device_type(tuple(kwargs.values()))
    if device_type is None or not _state.enabled.get(device_type, False):
        return args, kwargs
    rule = _policy.for_device(device_type).get(name)
    if rule is None:
        return args, kwargs
    if rule == _policy.BANNED:
        raise RuntimeError(
            f"torch.nn.functional.{name} and torch.nn.BCELoss are unsafe to autocast.\n"
            f"Many models use a sigmoid layer right before the binary cross entropy layer.\n"
            f"In this case, combine the two layers using torch.nn.functional."
            f"binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss.  "
            f"binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast.")
    if rule == _policy.FP32_OPT and kwargs.get("dtype") is not None:
        return args, kwargs
    if rule == _policy.LOWER:
        target = get_autocast_dtype(device_type)

        def cast(t):
            return _cached_cast(t, target) if _eligible(t, device_type) and \
                t._dtype is not target else t
    else:
        target = tensorlib.float32 if rule != _policy.PROMOTE else \
            _widest(args, kwargs, device_type)

        def cast(t):
            return t.to(target) if _eligible(t, device_type) and t._dtype is not target else t
    if target is None:
        return args, kwargs
    return _map(args, cast), {k: _map(v, cast) for k, v in kwargs.items()}


# ---- the region ---------------------------------------------------------------------------
class autocast:
    """`with tensorlib.autocast("cpu"):` or `@tensorlib.autocast("cpu")`: listed ops run in
    `dtype` (bfloat16 on the CPU, float16 on GPUs by default) on tensors of `device_type`."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        _check_device_type(device_type)
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._enabled = bool(enabled)
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None \
            else bool(cache_enabled)
        if self._enabled and self.fast_dtype.name not in _SUPPORTED:
            kind = "CPU" if device_type == "cpu" else device_type.upper()
            warnings.warn(f"In {kind} autocast, but the target dtype {self.fast_dtype} is "
                          f"not supported. Disabling autocast.\n{kind} Autocast only supports "
                          f"dtypes of torch.bfloat16 and torch.float16 currently.")
            self._enabled = False

    def __enter__(self):
        state = _state
        self._prev = (state.enabled.get(self.device, False), state.dtype.get(self.device),
                      state.cache_enabled)
        state.enabled[self.device] = self._enabled
        state.dtype[self.device] = self.fast_dtype
        state.cache_enabled = self._cache_enabled
        state.nesting += 1
        _refresh()
        return self

    def __exit__(self, *exc):
        state = _state
        state.nesting -= 1
        if state.nesting == 0:
            state.cache.clear()
        state.enabled[self.device], state.dtype[self.device], state.cache_enabled = self._prev
        _refresh()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)
        return decorated


def is_autocast_available(device_type):
    """Whether autocast regions can be opened for `device_type` (cpu, cuda and every
    registered backend); an unknown device string raises RuntimeError, as torch's."""
    tensorlib.device(device_type)
    try:
        _check_device_type(device_type)
    except RuntimeError:
        return False
    return True


# ---- custom autograd functions -----------------------------------------------------------
def _cast(value, device_type, dtype):
    """Floating tensors of `device_type` (not float64) in `dtype`, through containers."""
    if isinstance(value, TensorImpl):
        eligible = value.is_floating_point() and value.device.type == device_type and \
            value.dtype is not tensorlib.float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def _check_device_type_arg(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorates an autograd.Function's forward: records the autocast state for custom_bwd;
    with `cast_inputs`, inside an enabled region, floating inputs are cast to it and forward
    runs with autocast off (outside a region it is a no-op)."""
    _check_device_type_arg(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs),
                       **_cast(kwargs, device_type, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorates an autograd.Function's backward: it runs with forward's autocast state."""
    _check_device_type_arg(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                      dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
