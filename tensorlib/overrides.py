"""torch.overrides: the __torch_function__ protocol. A public function, Tensor method or
nn.functional call given an object whose type overrides `__torch_function__` (fx's Proxy, a
user's tensor-like class, a Tensor subclass) hands the call to that type's
`__torch_function__(func, types, args, kwargs)`; a TorchFunctionMode on the stack sees every
call first.

The C wrapper of every public op (tensorlib/_C/aliased_call.h) hands a call to `_fallback` when
an argument's type overrides (an exact Tensor or a number costs one pointer compare; a type
whose `__torch_function__` is `_disabled_torch_function_impl`, such as Parameter, is skipped in
C), when a mode is on, and when the call raised (an overriding object deeper in a container).
Tensor's operators and properties reach `_dispatch` through the wrappers
`tensorlib._tensor_subclass` installs on subclasses (and on Tensor while a mode is on).
"""
import functools
import threading

from tensorlib import _C
from tensorlib._foreign import is_torch_tensor, refuse_torch_tensor
from tensorlib._C.opdef import (AliasedOp, set_torch_function_fallback,
                                set_torch_function_mode_active, with_aliases)

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "handle_torch_function", "is_tensor_like", "is_tensor_method_or_property",
           "get_overridable_functions", "get_ignored_functions", "TorchFunctionMode",
           "enable_reentrant_dispatch"]


class _ThreadState(threading.local):
    """Per thread, as in PyTorch: whether dispatch is off (DisableTorchFunction: all of it;
    DisableTorchFunctionSubclass: arguments' handlers, modes still run) and the stack of
    TorchFunctionModes (a new thread starts with none)."""
    all_disabled = False
    subclass_disabled = False

    def __init__(self):
        self.modes = []


class _Entered:
    """Modes entered and not exited, over all threads (one may be off its stack, running):
    while any is, every op call comes to `_fallback` (the C flag is process-wide), which
    looks at the calling thread's own stack."""
    count = 0
    lock = threading.Lock()


_State = _ThreadState()


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """The __torch_function__ of types that opt out (Parameter): the C wrapper skips their
    instances; called directly it runs func without argument dispatch."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


class DisableTorchFunctionSubclass:
    """Within it, arguments' __torch_function__ are not called (modes still are), so an
    override can run the plain function on its own instances."""

    def __enter__(self):
        self._prev = _State.subclass_disabled
        _State.subclass_disabled = True
        return self

    def __exit__(self, *exc):
        _State.subclass_disabled = self._prev
        return False


class DisableTorchFunction:
    """Within it, neither arguments' __torch_function__ nor modes are called."""

    def __enter__(self):
        self._prev = (_State.all_disabled, _State.subclass_disabled)
        _State.all_disabled = _State.subclass_disabled = True
        return self

    def __exit__(self, *exc):
        _State.all_disabled, _State.subclass_disabled = self._prev
        return False


def _is_torch_function_enabled():
    return not _State.all_disabled


def _is_torch_function_mode_enabled():
    return bool(_State.modes) and not _State.all_disabled


def _sync_mode_flag():
    """Tell the C wrapper whether every op call must come here: while a mode is entered in
    any thread (the flag is process-wide; `_dispatch` then looks at the calling thread's
    stack and switches). Called under _Entered.lock."""
    set_torch_function_mode_active(_Entered.count > 0)


def _intercept_operators():
    """Tensor's own operators and properties dispatch while a mode is entered (any thread)."""
    from tensorlib import _tensor_subclass
    _tensor_subclass.intercept_plain_tensors(_Entered.count > 0)


def _tensor_class():
    from tensorlib._tensor import Tensor
    return Tensor


def _overrides(obj):
    """obj's type overrides __torch_function__: it defines one other than
    `_disabled_torch_function_impl`, and it is not exactly Tensor."""
    cls = type(obj)
    impl = getattr(cls, "__torch_function__", None)
    return (impl is not None and impl is not _disabled_torch_function_impl
            and cls is not _tensor_class())


def _overloaded_args(values):
    """The arguments (also inside list/tuple arguments) whose types override, one per type,
    subclasses before their base classes, as PyTorch orders them."""
    found, types = [], []
    for value in values:
        items = value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if type(item) in types or not _overrides(item):
                continue
            if is_torch_tensor(item):       # its __torch_function__ would call us back
                refuse_torch_tensor(item)
            position = len(found)
            for i, other in enumerate(found):
                if issubclass(type(item), type(other)):
                    position = i
                    break
            found.insert(position, item)
            types.insert(position, type(item))
    return found


def has_torch_function(relevant_args):
    """A mode is on, or an argument of relevant_args overrides __torch_function__ (and
    arguments' dispatch is not off)."""
    if _State.all_disabled:
        return False
    if _State.modes:
        return True
    return not _State.subclass_disabled and bool(_overloaded_args(relevant_args))


def has_torch_function_unary(obj):
    return has_torch_function((obj,))


def has_torch_function_variadic(*args):
    return has_torch_function(args)


def _call_mode(public_api, types, args, kwargs):
    """The top mode's __torch_function__, with that mode off the stack while it runs."""
    mode = _State.modes.pop()
    try:
        return mode.__torch_function__(public_api, types, args, kwargs)
    finally:
        _State.modes.append(mode)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Offer the call to the top TorchFunctionMode, then to relevant_args' overriding types
    (subclasses first) in turn, until one answers other than NotImplemented."""
    overloaded = [] if _State.subclass_disabled else _overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    if _is_torch_function_mode_enabled():
        result = _call_mode(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        result = type(arg).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = getattr(public_api, "__name__", repr(public_api))
    raise TypeError(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {[t for t in types]}")


def is_tensor_like(obj):
    """A tensor, or an object whose type implements __torch_function__."""
    return isinstance(obj, _tensor_class()) or hasattr(type(obj), "__torch_function__")


def is_tensor_method_or_property(func):
    """func is one of Tensor's methods or properties (fx records those as call_method)."""
    name = getattr(func, "__name__", None)
    from tensorlib import _tensor_subclass
    wrappers = list(_tensor_subclass._wrappers.values())
    if name == "__get__":
        owner = getattr(func, "__self__", None)
        return owner in vars(_tensor_class()).values() or owner in wrappers
    return name is not None and (getattr(_tensor_class(), name, None) is func or func in wrappers)


def _dispatch(func, args, kwargs):
    """func(*args, **kwargs) handled by a mode or an overriding argument; NotImplemented when
    dispatch is off or nothing overrides (the caller runs func itself)."""
    if _State.all_disabled:
        return NotImplemented
    if not _State.modes and (_State.subclass_disabled or not _overloaded_args(args)
                             and not _overloaded_args(kwargs.values())):
        return NotImplemented
    return handle_torch_function(func, list(args) + list(kwargs.values()), *args, **kwargs)


def _fallback(op, args, kwargs, failed):
    """The C wrapper's path: before the op runs (a mode is on or an argument overrides), or
    after it raised (failed: an overriding object that is not a tensor, deeper in a container,
    takes the call)."""
    if not failed:
        return _dispatch(op, args, kwargs)
    if _has_python_dtype(args, kwargs) and getattr(op, "python_types_as_dtypes", True):
        return _with_python_dtypes(op, args, kwargs)
    if _State.all_disabled or _State.subclass_disabled:
        return NotImplemented
    tensor = _tensor_class()
    overloaded = [a for a in _overloaded_args(list(args) + list(kwargs.values()))
                  if not isinstance(a, tensor)]
    if not overloaded:
        return NotImplemented
    return handle_torch_function(op, overloaded, *args, **kwargs)


def _python_dtypes():
    import tensorlib._C.dtypes as dt
    return {float: dt.float64, int: dt.int64, bool: dt.bool_, complex: dt.complex128}


_PYTHON_TYPES = (float, int, bool, complex)


def _is_python_type(a):
    return type(a) is type and a in _PYTHON_TYPES      # a class: `in` compares identities


def _has_python_dtype(args, kwargs):
    return any(map(_is_python_type, args)) or any(map(_is_python_type, kwargs.values()))


def _with_python_dtypes(op, args, kwargs):
    """PyTorch takes the Python types float, int, bool and complex wherever a dtype goes
    (`zeros(3, dtype=float)` is float64, `x.to(int)` int64): an op that failed on one is
    called again with the dtypes they stand for. Only the failed calls pay this; an op whose
    `python_types_as_dtypes` attribute is False is not (Tensor.type: PyTorch refuses int)."""
    dtypes = _python_dtypes()
    args = [dtypes[a] if _is_python_type(a) else a for a in args]
    kwargs = {k: dtypes[v] if _is_python_type(v) else v for k, v in kwargs.items()}
    return op(*args, **kwargs)


class TorchFunctionMode:
    """A context manager whose __torch_function__(func, types, args=(), kwargs=None) sees every
    overridable call made inside it, before the arguments' types do. Modes stack; the top one
    runs with itself off the stack, so calling func inside it reaches the modes below."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError(f"{type(self).__name__} must define __torch_function__")

    def __enter__(self):
        _State.modes.append(self)
        with _Entered.lock:
            _Entered.count += 1
            _sync_mode_flag()
            _intercept_operators()
        return self

    def __exit__(self, *exc):
        _State.modes.remove(self)
        with _Entered.lock:
            _Entered.count -= 1
            _sync_mode_flag()
            _intercept_operators()
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        mode = cls(*args, **kwargs)
        mode.__enter__()
        return mode


def _get_current_function_mode_stack():
    return list(_State.modes)


def _namespaces():
    """{namespace: its public names} for the namespaces whose functions dispatch."""
    import tensorlib
    from tensorlib import linalg, special
    from tensorlib.nn import functional
    return {ns: getattr(ns, "__all__", None) or [n for n in vars(ns) if not n.startswith("_")]
            for ns in (tensorlib, functional, linalg, special)}


def get_overridable_functions():
    """{namespace: [functions]}: the public functions and Tensor methods that dispatch to
    __torch_function__ (tensorlib, nn.functional, linalg, special, Tensor)."""
    out = {}
    for namespace, names in _namespaces().items():
        out[namespace] = [getattr(namespace, n) for n in names
                          if isinstance(getattr(namespace, n, None), AliasedOp)]
    tensor = _tensor_class()
    out[tensor] = [v for v in vars(tensor).values() if isinstance(v, AliasedOp)]
    return out


def get_ignored_functions():
    """The public callables that do not dispatch to __torch_function__ (classes excluded)."""
    out = set()
    for namespace, names in _namespaces().items():
        for n in names:
            value = getattr(namespace, n, None)
            if callable(value) and not isinstance(value, type) and not isinstance(value, AliasedOp):
                out.add(value)
    return out


class enable_reentrant_dispatch:
    """PyTorch's guard for re-entering the dispatcher below autograd; tensorlib has no
    dispatcher below __torch_function__, so there is nothing to re-enable."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def overridable(fn):
    """fn dispatching to __torch_function__ (the C wrapper without keyword aliases); classes,
    values and wrapped ops are returned as they are."""
    if isinstance(fn, (AliasedOp, type)) or not callable(fn):
        return fn
    return functools.update_wrapper(with_aliases(fn, {}), fn)


def make_overridable(namespace, names):
    """Wrap namespace[name] (a module's or a dict's) with `overridable` for each name."""
    is_dict = isinstance(namespace, dict)
    for name in names:
        value = namespace[name] if is_dict else getattr(namespace, name)
        wrapped = overridable(value)
        if wrapped is not value:
            if is_dict:
                namespace[name] = wrapped
            else:
                setattr(namespace, name, wrapped)


set_torch_function_fallback(_fallback, _tensor_class(), _disabled_torch_function_impl)
# where PyTorch programs reach them: torch._C.DisableTorchFunction and the like
for _name in ("DisableTorchFunction", "DisableTorchFunctionSubclass",
              "_disabled_torch_function_impl", "_is_torch_function_enabled",
              "_is_torch_function_mode_enabled"):
    setattr(_C, _name, globals()[_name])
del _name
