"""What `conj()` of a complex tensor returns: its conjugate, computed, that writes back.

NOTE [ conj: a computed conjugate that writes back, not a conj bit ]
PyTorch's conj() is a lazy view: it shares memory with its input and carries a conj bit that
every kernel honours on reading and on writing. In tensorlib every CPU kernel reads and
writes raw storage (numpy views and raw-pointer Cython loops), so a conj bit would have to be
honoured by each of them, and by the core's eager fast paths; for a rarely used view that is
not worth its cost on every op. conj() therefore computes the conjugate (as conj_physical)
into a `ConjView`, a Tensor that remembers its input and keeps PyTorch's observable rules:
- `is_conj()` is True; `resolve_conj()` returns a plain copy; `conj()` of it is its input
  again (an alias, as conj(conj(x)) is x's memory in PyTorch); conj() of a real tensor is
  the tensor itself;
- an in-place write into it (an in-place method, `y[k] = v`, `y += v`) writes the
  conjugate into the input too, recorded by autograd like any `copy_`.
- a view taken of it through a Tensor method or property (y[0], y.T, y.mT, y.view(...),
  y.detach(), ...) is a ConjView of the same view of the input (when the two share a layout:
  always for a dense input, whose conjugate is computed in its strides).
What does not hold: the values are taken when conj() runs, so an in-place write into the
input afterwards is not seen through the ConjView; views taken through functions
(tensorlib.transpose(y, ...)) and `out=` arguments are plain tensors whose writes stay
local.
Tests: tests/ops/test_conj_view.py."""
import functools
import inspect

from tensorlib import _C
from tensorlib._C.tensor_impl import TensorImpl

_INPUT = "_conj_input"
_NOT_DATA = frozenset({"requires_grad_", "share_memory_", "detach_", "resize_", "squeeze_",
                       "unsqueeze_", "t_", "transpose_", "swapaxes_", "swapdims_"})
_INPLACE_DUNDERS = ("__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
                    "__ifloordiv__", "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__")

_cls = None
_tensor_class = None     # tensorlib.Tensor, registered by tensorlib._tensor at import


def _write_back(view):
    """The input takes the conjugate of what the view holds now."""
    from tensorlib.ops.complex import _conj_physical
    source = view.__dict__[_INPUT]
    source.copy_(_conj_physical(view))


def _writing(name, method):
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        result = method(self, *args, **kwargs)
        _write_back(self)
        return self if result is self else result
    return wrapper


def _viewing(method):
    """A method that may return a view of the ConjView: that view is a ConjView too, of the
    same method's view of the input (the ConjView and its input share a layout, so the
    two views have one geometry: checked)."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        result = method(self, *args, **kwargs)
        if (isinstance(result, TensorImpl) and result is not self
                and result._storage is self._storage and result._dtype is self._dtype
                and not is_view(result)):
            source = self.__dict__[_INPUT]
            if source._strides == self._strides:
                twin = method(source, *args, **kwargs)
                if twin._sizes == result._sizes and twin._strides == result._strides:
                    return make(result, twin)
        return result
    return wrapper


def _class():
    """ConjView, built on first use: Tensor's methods are all installed by then."""
    global _cls
    if _cls is None:
        Tensor = _tensor_class
        names = [n for n in dir(Tensor) if n.endswith("_") and not n.startswith("_")
                 and n not in _NOT_DATA] + list(_INPLACE_DUNDERS)
        namespace = {n: _writing(n, getattr(Tensor, n)) for n in names
                     if callable(getattr(Tensor, n, None))}
        for n in dir(Tensor):                  # views: methods, __getitem__, T/mT/H...
            if n in namespace or (n.startswith("_") and n != "__getitem__"):
                continue
            attr = inspect.getattr_static(Tensor, n, None)
            if isinstance(attr, property) and attr.fget is not None:
                namespace[n] = property(_viewing(attr.fget), attr.fset)
            elif callable(attr) and not isinstance(attr, (staticmethod, classmethod, type)):
                namespace[n] = _viewing(getattr(Tensor, n))
        namespace.update(__module__="tensorlib", __doc__=__doc__,
                         is_conj=lambda self: True,
                         # ops on a conj view give plain Tensors (set by tensorlib.overrides)
                         __torch_function__=_C._disabled_torch_function_impl)
        _cls = type("Tensor", (Tensor,), namespace)     # torch's conj views are Tensors
    return _cls


def register_tensor_class(cls):
    """Called by tensorlib._tensor once Tensor is defined: ConjView subclasses it, and ops sit
    below the Tensor class, so they are told it rather than importing it."""
    global _tensor_class
    _tensor_class = cls


def make(values, source):
    """Turn `values` (the conjugate of `source`, just computed) into a ConjView of source."""
    values.__class__ = _class()
    values.__dict__[_INPUT] = source
    return values


def is_view(t):
    return _cls is not None and type(t) is _cls


def input_of(view):
    return view.__dict__[_INPUT]

