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
What does not hold: the values are taken when conj() runs, so an in-place write into the
input afterwards is not seen through the ConjView, and views taken of a ConjView (y[0],
y.T, ...) and `out=` arguments are plain tensors whose writes stay local.
Tests: tests/ops/test_conj_view.py."""
import functools

_INPUT = "_conj_input"
_NOT_DATA = frozenset({"requires_grad_", "share_memory_", "detach_", "resize_", "squeeze_",
                       "unsqueeze_", "t_", "transpose_", "swapaxes_", "swapdims_"})
_INPLACE_DUNDERS = ("__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
                    "__ifloordiv__", "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__")

_cls = None


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


def _class():
    """ConjView, built on first use: Tensor's methods are all installed by then."""
    global _cls
    if _cls is None:
        from tensorlib._tensor import Tensor
        names = [n for n in dir(Tensor) if n.endswith("_") and not n.startswith("_")
                 and n not in _NOT_DATA] + list(_INPLACE_DUNDERS)
        namespace = {n: _writing(n, getattr(Tensor, n)) for n in names
                     if callable(getattr(Tensor, n, None))}
        namespace.update(__module__="tensorlib", __doc__=__doc__,
                         is_conj=lambda self: True)
        _cls = type("Tensor", (Tensor,), namespace)     # torch's conj views are Tensors
    return _cls


def make(values, source):
    """Turn `values` (the conjugate of `source`, just computed) into a ConjView of source."""
    values.__class__ = _class()
    values.__dict__[_INPUT] = source
    return values


def is_view(t):
    return _cls is not None and type(t) is _cls


def input_of(view):
    return view.__dict__[_INPUT]

