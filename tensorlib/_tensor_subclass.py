"""Tensor subclasses, as PyTorch has them: the default `Tensor.__torch_function__` runs the
function with argument dispatch off and gives Tensor results the subclass's type (so
`x.as_subclass(MyT) + 1` is a MyT), `as_subclass` / `_make_subclass`, and the wrappers that
send Tensor's operators and properties (`+`, `x[i]`, `.T`...) to `__torch_function__`.

The wrappers go on each subclass that does not opt out (`__torch_function__ =
_disabled_torch_function_impl`, as Parameter does), and on Tensor itself only while a
TorchFunctionMode is entered, so `a + b` on exact Tensors runs the Cython dunder directly."""
from tensorlib import overrides
from tensorlib._foreign import refuse_torch_tensors
from tensorlib._C.grad_mode import is_grad_enabled

# operator -> (the Tensor method PyTorch reports to __torch_function__ for it, None: the
# operator itself; for a reflected operator, the forward one used when the left operand is a
# Tensor, since PyTorch runs the left Tensor's forward operator then)
_OPERATORS = {
    "__add__": ("add", None), "__radd__": ("add", "__add__"),
    "__sub__": ("sub", None), "__rsub__": (None, "__sub__"),
    "__mul__": ("mul", None), "__rmul__": ("mul", "__mul__"),
    "__truediv__": ("div", None), "__rtruediv__": (None, "__truediv__"),
    "__floordiv__": (None, None), "__rfloordiv__": (None, "__floordiv__"),
    "__mod__": ("remainder", None), "__rmod__": (None, "__mod__"),
    "__pow__": ("pow", None), "__rpow__": (None, "__pow__"),
    "__matmul__": ("matmul", None), "__rmatmul__": (None, "__matmul__"),
    "__and__": (None, None), "__rand__": ("bitwise_and", "__and__"),
    "__or__": (None, None), "__ror__": ("bitwise_or", "__or__"),
    "__xor__": (None, None), "__rxor__": ("bitwise_xor", "__xor__"),
    "__eq__": (None, None), "__ne__": ("ne", None), "__lt__": ("lt", None),
    "__le__": ("le", None), "__gt__": ("gt", None), "__ge__": ("ge", None),
    "__neg__": ("neg", None), "__pos__": ("positive", None), "__abs__": ("abs", None),
    "__invert__": (None, None), "__getitem__": (None, None), "__setitem__": (None, None),
    "__len__": (None, None), "__repr__": (None, None),
    "size": (None, None), "stride": (None, None),         # plain functions on Tensor, for speed
}
# the properties that dispatch (reading them; setting data/grad/requires_grad does not)
_PROPERTIES = ("T", "mT", "H", "mH", "shape", "dtype", "device", "layout", "ndim", "data",
               "grad", "requires_grad", "is_leaf", "grad_fn", "real", "imag")

_tensor = None      # tensorlib.Tensor, set by install
_base = {}          # name -> Tensor's own operator or property (before any wrapping)
_wrappers = {}      # name -> the dispatching wrapper installed on subclasses
_plain_intercepted = False


def _default_torch_function(cls, func, types, args=(), kwargs=None):
    """Tensor.__torch_function__: func with argument dispatch off, Tensor results as cls."""
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    refuse_torch_tensors(args)      # PyTorch calling us for its own op: it would call back
    refuse_torch_tensors((kwargs or {}).values())
    with overrides.DisableTorchFunctionSubclass():
        ret = func(*args, **(kwargs or {}))
        if getattr(func, "__self__", None) is _wrappers.get("grad"):  # PyTorch's nowrap
            return ret
        return _convert(ret, cls)


def _convert(ret, cls):
    """ret with its Tensors (also inside tuples and lists) made instances of cls."""
    if cls is _tensor:
        return ret
    if isinstance(ret, _tensor):
        return ret if isinstance(ret, cls) else as_subclass(ret, cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        if hasattr(type(ret), "_fields"):                   # the named return types
            return type(ret)(*items)
        return type(ret)(items)
    return ret


def as_subclass(self, cls):
    """An instance of cls over this tensor's memory, still in its autograd graph."""
    from tensorlib._legacy import _as_subclass
    if not (isinstance(cls, type) and issubclass(cls, _tensor)):
        raise TypeError(f"as_subclass(): argument 'cls' must be a subclass of Tensor, not "
                        f"{cls!r}")
    if self._requires_grad and is_grad_enabled():
        from tensorlib.ops.shape import as_strided
        out = as_strided(self, self._sizes, self._strides, self._offset)
        out.__class__ = cls
        return out
    return _as_subclass(self, cls)


def _make_subclass(cls, data, require_grad=False, **_dispatch_flags):
    """Tensor._make_subclass: an instance of cls sharing data's memory, detached, a leaf that
    requires grad when asked. PyTorch's dispatch_strides/dispatch_device/... flags steer
    __torch_dispatch__, which tensorlib does not have: they change nothing here."""
    from tensorlib._legacy import _as_subclass
    out = _as_subclass(data, cls)
    if require_grad:
        out.requires_grad_(True)
    return out


def _make_wrapper_subclass(cls, size, *args, **kwargs):
    """Tensor._make_wrapper_subclass: PyTorch's tensor without storage whose every op goes to
    cls.__torch_dispatch__. tensorlib has no dispatcher below autograd, so it is refused."""
    refuse_dispatch_subclass(cls)
    raise NotImplementedError(f"_make_wrapper_subclass({cls.__name__}): tensorlib has no "
                              f"dispatcher below autograd for a wrapper subclass")


def refuse_dispatch_subclass(cls):
    """An instance of a class with __torch_dispatch__ would skip it silently: refuse it."""
    if getattr(cls, "__torch_dispatch__", None) is not None:
        raise NotImplementedError(
            f"{cls.__name__} defines __torch_dispatch__: tensorlib has no dispatcher below "
            f"autograd, so it cannot make {cls.__name__} instances; override "
            f"__torch_function__ instead")


def _operator(name, report, forward):
    """The dispatching `name` operator. What a handler sees as func dispatches again when
    called (so a mode calling func reaches the modes below it): the Tensor method PyTorch
    reports, or this wrapper itself."""
    base = _base[name]

    def method(self, *args, **kwargs):
        if forward is not None and isinstance(args[0], _tensor):
            out = overrides._dispatch(_reported(forward), (args[0], self), kwargs)
        else:
            out = overrides._dispatch(_reported(name), (self,) + args, kwargs)
        return base(self, *args, **kwargs) if out is NotImplemented else out
    method.__name__ = method.__qualname__ = name
    return method


def _reported(name):
    report = _OPERATORS[name][0]
    return vars(_tensor)[report] if report else _wrappers[name]


def _property(name):
    """The dispatching property; handlers see its __get__ (as PyTorch's getset descriptor's)."""
    prop = _base[name]

    def get(self):
        out = overrides._dispatch(_wrappers[name].__get__, (self,), {})
        return prop.__get__(self) if out is NotImplemented else out
    return property(get, prop.fset, prop.fdel, prop.__doc__)


def prepare_subclass(cls, **kwargs):
    """Tensor.__init_subclass__: give a subclass that does not opt out of __torch_function__
    the dispatching operators it does not define itself. A class defining __torch_dispatch__
    may be defined (libraries define them at import); making an instance is refused
    (`_legacy._as_subclass`, `_make_wrapper_subclass`)."""
    super(_tensor, cls).__init_subclass__(**kwargs)
    if getattr(cls, "__torch_function__", None) is overrides._disabled_torch_function_impl:
        return
    for name, wrapper in _wrappers.items():
        for klass in cls.__mro__:
            if klass is _tensor:
                setattr(cls, name, wrapper)
                break
            if name in vars(klass):                     # its own, or inherited wrappers
                break


def intercept_plain_tensors(on):
    """While a TorchFunctionMode is entered Tensor's own operators dispatch too."""
    global _plain_intercepted
    if on == _plain_intercepted:
        return
    _plain_intercepted = on
    for name in _wrappers:
        setattr(_tensor, name, _wrappers[name] if on else _base[name])


def install(tensor_cls):
    """Give Tensor its default __torch_function__, as_subclass, _make_subclass and subclass
    hook, and build the wrappers from its operators (after ops.install)."""
    global _tensor
    _tensor = tensor_cls
    tensor_cls.__torch_function__ = classmethod(_default_torch_function)
    tensor_cls.as_subclass = as_subclass
    tensor_cls._make_subclass = staticmethod(_make_subclass)
    tensor_cls._make_wrapper_subclass = staticmethod(_make_wrapper_subclass)
    tensor_cls.__init_subclass__ = classmethod(prepare_subclass)
    for name in list(_OPERATORS) + [p for p in _PROPERTIES if p in vars(tensor_cls)]:
        _base[name] = vars(tensor_cls)[name]
    for name, (report, forward) in _OPERATORS.items():
        _wrappers[name] = _operator(name, report, forward)
    for name in _PROPERTIES:
        if isinstance(_base.get(name), property):
            _wrappers[name] = _property(name)
