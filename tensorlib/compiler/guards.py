"""Guards for replaying a compiled call: a fingerprint of the Python state the call can read.

The fingerprint walks the call's roots -- the module tree, a bound method's object, the
globals and closure cells its code names (and those of every module's forward) -- and lists
what it finds: Python scalars by value, tensors by identity and layout (and whether they
have a .grad, with its layout), containers by length, anything else by identity. Two calls
with equal fingerprints read the same Python state; a fingerprint that changes while a call
runs means the call has Python side effects (a step counter, a new buffer, an appended list)
and must run its Python.

A `Guard` keeps the last walk's snapshot (`_walk.Snapshot`: dict version tags, list items,
tensor layouts): while nothing it lists has changed, the fingerprint is the last one, found
in a few microseconds instead of a walk (20-30 us on a small MLP and its SGD state).
"""
import collections
import types

from tensorlib._C.opdef import AliasedOp
from tensorlib._legacy import LegacyConstructorMeta, TensorTypeMeta
from tensorlib.compiler import _walk

_SCALARS = (bool, int, float, complex, str, bytes, type(None))
_BUDGET = 20000                 # entries; a bigger state is not fingerprinted (no replay)


class Key:
    """A fingerprint's key with its hash computed once: a reused fingerprint's key costs
    nothing to hash or to compare (by identity) when the replay looks up its programs."""
    __slots__ = ("items", "_hash")

    def __init__(self, items):
        self.items, self._hash = items, hash(items)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return self is other or (type(other) is Key and self._hash == other._hash and
                                 self.items == other.items)


class Fingerprint:
    """`key` (a `Key`), `tensors` (ids of the tensors seen: guarded by identity),
    `grads_of` (id of a .grad's storage -> the tensor that holds that .grad), `devices`
    (those of the tensors seen: a recording must record their kernels too) and `snapshot`
    (what would change the key; None where it cannot be taken)."""
    __slots__ = ("key", "tensors", "grads_of", "devices", "snapshot")

    def __init__(self, key, tensors, grads_of, devices, snapshot=None):
        self.key = key if type(key) is Key else Key(key)
        self.tensors, self.grads_of, self.devices = tensors, grads_of, devices
        self.snapshot = snapshot


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
                           types.WrapperDescriptorType, types.MethodDescriptorType,
                           AliasedOp, LegacyConstructorMeta, TensorTypeMeta))


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


class Guard:
    """The fingerprint of one compiled callable's sources, walked again only when the last
    walk's snapshot says something it saw has changed."""
    __slots__ = ("sources", "_last")

    def __init__(self, sources):
        self.sources, self._last = sources, None

    def fingerprint(self):
        last = self._last
        if last is not None and last.snapshot.unchanged(_ABSENT):
            # the same key and tensors; the .grads are looked up again (new ones may have the
            # walked layouts)
            return Fingerprint(last.key, last.tensors, last.snapshot.grads_of(), last.devices,
                               last.snapshot)
        fp = fingerprint(self.sources)
        self._last = fp if fp is not None and fp.snapshot is not None else None
        return fp
