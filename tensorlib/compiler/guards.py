"""Guards for replaying a compiled call: a fingerprint of the Python state the call can read.

The fingerprint walks the call's roots -- the module tree, a bound method's object, the
globals and closure cells its code names (and those of every module's forward) -- and lists
what it finds: Python scalars by value, tensors by identity and layout (and whether they
have a .grad, with its layout), containers by length, anything else by identity. Two calls
with equal fingerprints read the same Python state; a fingerprint that changes while a call
runs means the call has Python side effects (a step counter, a new buffer, an appended list)
and must run its Python.
"""
import collections
import types

from tensorlib.compiler import _walk

_SCALARS = (bool, int, float, complex, str, bytes, type(None))
_BUDGET = 20000                 # entries; a bigger state is not fingerprinted (no replay)


class Fingerprint:
    """`key` (hashable), `tensors` (ids of the tensors seen: guarded by identity) and
    `grads_of` (id of a .grad's storage -> the tensor that holds that .grad) and `devices`
    (those of the tensors seen: a recording must record their kernels too)."""
    __slots__ = ("key", "tensors", "grads_of", "devices")

    def __init__(self, key, tensors, grads_of, devices):
        self.key, self.tensors, self.grads_of = key, tensors, grads_of
        self.devices = devices


def _code_names(code, out):
    out.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_names(c, out)
    return out


_FUNCTION_SCOPES = {}           # code object -> sorted global names


def roots_of(fn, module):
    """Where a compiled callable's readable state lives besides its arguments: a list of
    ("obj", o), ("global", globals, name) and ("cell", cell), resolved on every call (a
    global rebound to another object is seen)."""
    sources = []
    if module is not None:
        sources.append(("obj", module))
        seen = set()
        for m in module.modules():
            cls = type(m)
            if cls not in seen:
                seen.add(cls)
                _function_sources(getattr(cls, "forward", None), sources)
    owner = getattr(fn, "__self__", None)
    if owner is not None and owner is not module:
        sources.append(("obj", owner))
    _function_sources(fn, sources)
    unique, seen = [], set()
    for src in sources:
        key = tuple(id(x) if not isinstance(x, str) else x for x in src)
        if key not in seen:
            seen.add(key)
            unique.append(src)
    return unique


def _function_sources(fn, sources):
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return
    names = _FUNCTION_SCOPES.get(code)
    if names is None:
        names = _FUNCTION_SCOPES[code] = tuple(sorted(_code_names(code, set())))
    g = fn.__globals__
    sources.extend(("global", g, n) for n in names)
    sources.extend(("cell", c) for c in fn.__closure__ or ())


def resolve(sources):
    """The objects `sources` name now (`_ABSENT` for an unbound global or an empty cell)."""
    return _walk.resolve(sources, _ABSENT)


_ABSENT = ("<absent>",)


_SCALAR_TYPES = frozenset(_SCALARS)
_CONTAINERS = frozenset((dict, list, tuple, collections.OrderedDict))
_OPAQUE_TYPES = frozenset((types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                           types.ModuleType, type, types.MethodWrapperType,
                           types.WrapperDescriptorType, types.MethodDescriptorType))


_STATEFUL = []


def _stateful_classes():
    """(Module, Optimizer): the objects whose attributes are walked (imported on first use:
    nn and optim import the compiler's callers)."""
    if not _STATEFUL:
        from tensorlib.nn.modules.module import Module
        from tensorlib.optim.optimizer import Optimizer
        _STATEFUL.extend((Module, Optimizer))
    return _STATEFUL


def fingerprint(sources):
    """The Fingerprint of what `sources` (from `roots_of`) name now, or None when the state
    is too large to walk. (This runs on every compiled call: the walk is `_walk`, in
    Cython.)"""
    found = _walk.walk_sources(sources, _ABSENT, _BUDGET, _SCALAR_TYPES, _OPAQUE_TYPES,
                               _CONTAINERS, tuple(_stateful_classes()))
    return None if found is None else Fingerprint(*found)
