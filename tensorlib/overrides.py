"""torch.overrides: the __torch_function__ protocol for objects that are not tensors but stand
in for them (fx's Proxy, a user's tensor-like class). A public function given such an object
hands the call to the object's `__torch_function__(func, types, args, kwargs)`.

The C wrapper of every public op (tensorlib/_C/aliased_call.h) hands a call to `_fallback`
when a positional argument's type defines __torch_function__, and when the call raised (an
overriding object inside a list or a keyword argument); a tensor or a number costs the scan one
pointer compare. Tensor subclasses that define
__torch_function__ are not dispatched to: their instances are tensors, and ops run on them as
on any tensor (the subclass's method is not called)."""
import functools

from tensorlib._C.opdef import AliasedOp, set_torch_function_fallback, with_aliases

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "handle_torch_function", "is_tensor_like", "is_tensor_method_or_property"]


def _tensor_class():
    from tensorlib._tensor import Tensor
    return Tensor


def _overrides(obj):
    """obj's type implements __torch_function__ and obj is not a tensor (tensor subclasses
    are not dispatched to: see the module's docstring)."""
    return hasattr(type(obj), "__torch_function__") and not isinstance(obj, _tensor_class())


def _overloaded_args(values):
    """The arguments (also inside list/tuple arguments) whose types override, one per type,
    subclasses before their base classes, as PyTorch orders them."""
    found, types = [], []
    for value in values:
        items = value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if type(item) in types or not _overrides(item):
                continue
            position = len(found)
            for i, other in enumerate(found):
                if issubclass(type(item), type(other)):
                    position = i
                    break
            found.insert(position, item)
            types.insert(position, type(item))
    return found


def has_torch_function(relevant_args):
    """An argument of relevant_args implements __torch_function__ (tensors do not)."""
    return bool(_overloaded_args(relevant_args))


def has_torch_function_unary(obj):
    return _overrides(obj)


def has_torch_function_variadic(*args):
    return any(_overrides(a) for a in args)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call the __torch_function__ of relevant_args' overriding types in turn until one
    answers other than NotImplemented."""
    overloaded = _overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
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
    return name is not None and getattr(_tensor_class(), name, None) is func


def _fallback(op, args, kwargs):
    """The C wrapper's path for a failed call: the call goes to an overriding argument, if any."""
    overloaded = _overloaded_args(list(args) + list(kwargs.values()))
    if not overloaded:
        return NotImplemented
    return handle_torch_function(op, overloaded, *args, **kwargs)


def overridable(fn):
    """fn dispatching to __torch_function__ when it fails on a tensor-like argument (the C
    wrapper without keyword aliases); classes, values and wrapped ops are returned as they
    are."""
    if type(fn) is AliasedOp or isinstance(fn, type) or not callable(fn):
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


set_torch_function_fallback(_fallback, _tensor_class())
