# cython: boundscheck=False, wraparound=False
"""The walk behind `guards.fingerprint`, in Cython: it runs on every call of a compiled
function (twice per training step: the model and the optimizer step), and as Python it took
35-60 us a call on a small MLP's module tree and SGD state, most of a replay's own time.
It lists exactly what the Python walk listed (see `guards.py` for what and why).

Beside the key, a walk leaves a `Snapshot`: what would have to change for a new walk to give
another key -- each dict's version tag (PEP 509: CPython gives a dict a new one on every
change), each list's items, each tensor's storage, layout and .grad layout, each root's
identity. While `Snapshot.unchanged()` holds, the key is the one walked before, and checking
that costs a few microseconds instead of the walk and the hash of its key. Version tags are
read on CPython 3.11 only (3.12 deprecates them); elsewhere there is no snapshot and every
call walks."""
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject

from tensorlib._C.tensor_impl cimport TensorImpl

cdef extern from *:
    """
    #if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && !defined(PYPY_VERSION)
    #define TL_DICT_VERSIONS 1
    #define TL_DICT_VERSION(d) (((PyDictObject*)(d))->ma_version_tag)
    #else
    #define TL_DICT_VERSIONS 0
    #define TL_DICT_VERSION(d) ((unsigned long long)0)
    #endif
    """
    bint TL_DICT_VERSIONS
    unsigned long long TL_DICT_VERSION(object d)

import collections

cdef int MAX_DEPTH = 1000
cdef object _DEFAULTDICT = collections.defaultdict

# the kinds of a snapshot's checks (`_Check`: obj and what it must still be)
cdef enum:
    C_VERSION = 0       # obj a dict (or defaultdict) still at `version`
    C_ITEMS = 1         # obj another mapping, still with keys `a` and values `b` (identities)
    C_LIST = 2          # obj a list still holding items `a`
    C_EMPTY = 3         # obj a container still empty
    C_ATTRS = 4         # obj still of class `b`, with __dict__ `a`
    C_TENSOR = 5        # obj a tensor still on storage `a` with layout `b`, .grad layout `c`
    R_GLOBAL = 6        # a root: global `b` of globals `a` still bound to `c`
    R_CELL = 7          # a root: cell `a` still holding `c`


cdef inline bint _versioned(object t):
    return t is dict or t is _DEFAULTDICT


cdef inline bint _is_scalar(object t):
    # the common scalars by pointer; the rest of the set (complex, bytes) by lookup
    return t is int or t is float or t is bool or t is str or t is type(None)


cdef class _Walk:
    cdef list out, checks, tensor_list
    cdef set tensors, seen
    cdef dict grads_of, devices
    cdef frozenset scalar_types, opaque_types, containers
    cdef tuple stateful
    cdef int depth
    cdef bint too_deep

    cdef inline bint scalar(self, object t):
        return _is_scalar(t) or t in self.scalar_types

    cdef void values(self, object items) except *:
        cdef object v, t
        for v in items:
            t = type(v)
            if self.scalar(t):
                self.out.append(v)
            elif (t is dict or t is list or t is tuple or t in self.containers) and not v:
                self.out.append(0)          # an empty container (most of a module's hooks)
                if t is not tuple:
                    self.checks.append(_check(C_EMPTY, v))
            elif t in self.opaque_types:
                self.out.append(id(v))
            else:
                self.walk(v)

    cdef void remember_mapping(self, object d) except *:
        cdef _Check c
        if TL_DICT_VERSIONS and _versioned(type(d)):
            c = _check(C_VERSION, d)
            c.version = TL_DICT_VERSION(d)
            self.checks.append(c)
        else:
            self.checks.append(_check(C_ITEMS, d, tuple(d), tuple(d.values())))

    cdef void walk(self, object obj) except *:
        if self.depth >= MAX_DEPTH:         # the C stack, unlike Python's, is not checked
            self.too_deep = True
            return
        self.depth += 1
        self.visit(obj)
        self.depth -= 1

    cdef void visit(self, object obj) except *:
        cdef object t = type(obj), oid, k, g, ginfo
        cdef TensorImpl ti
        cdef dict d
        if self.scalar(t):
            self.out.append(obj)
            return
        if t in self.opaque_types:          # code, classes, modules: by identity
            self.out.append(id(obj))
            return
        oid = id(obj)
        if oid in self.seen:
            self.out.append(("@", oid))
            return
        self.seen.add(oid)
        if isinstance(obj, TensorImpl):
            ti = <TensorImpl>obj
            self.tensors.add(oid)
            self.tensor_list.append(obj)
            self.devices[id(ti._device)] = ti._device
            g = ti._grad
            if g is not None:
                self.grads_of[id((<TensorImpl>g)._storage)] = obj
                ginfo = ((<TensorImpl>g)._sizes, (<TensorImpl>g)._strides,
                         (<TensorImpl>g)._offset, (<TensorImpl>g)._dtype)
            else:
                ginfo = None
            self.out.append(("T", oid, id(ti._storage), ti._sizes, ti._strides, ti._offset,
                             ti._dtype, ti._requires_grad, ginfo))
            self.checks.append(_tensor_check(ti, ginfo))
            return
        if isinstance(obj, dict):
            self.remember_mapping(obj)
            self.out.append(len(obj))
            for k in obj:
                self.out.append(k if self.scalar(type(k)) else id(k))
            self.values(obj.values())
            return
        if t is list or t is tuple:
            if t is list:
                self.checks.append(_check(C_LIST, obj, tuple(obj)))
            self.out.append(len(obj))
            self.values(obj)
            return
        if isinstance(obj, self.stateful):
            # the attributes' values in insertion order, and how many there are
            d = obj.__dict__
            self.checks.append(_check(C_ATTRS, obj, d, t))
            self.remember_mapping(d)
            self.out.append((t, len(d)))
            self.values(d.values())
            return
        self.out.append(("i", oid))


cdef object _resolve(tuple src, object absent):
    """The object a source names now (see `guards.roots_of`)."""
    cdef object kind = src[0]
    cdef PyObject* found
    if kind == "obj":
        return src[1]
    if kind == "global":
        found = PyDict_GetItem(src[1], src[2])
        return <object>found if found is not NULL else absent
    try:
        return src[1].cell_contents
    except ValueError:                      # an empty cell
        return absent


def resolve(list sources, object absent):
    return [_resolve(src, absent) for src in sources]


def walk_sources(list sources, object absent, Py_ssize_t budget, frozenset scalar_types,
                 frozenset opaque_types, frozenset containers, tuple stateful):
    """(key, tensors, grads_of, devices, snapshot) of what `sources` name now, or None past
    `budget` entries or nested deeper than MAX_DEPTH. `snapshot` is None where dict versions
    cannot be read."""
    cdef _Walk w = _Walk()
    w.out, w.tensors, w.seen, w.grads_of, w.devices = [], set(), set(), {}, {}
    w.checks, w.tensor_list = [], []
    cdef list roots = []
    w.scalar_types, w.opaque_types, w.containers = scalar_types, opaque_types, containers
    w.stateful = stateful
    w.depth, w.too_deep = 0, False
    cdef tuple plain = stateful + (TensorImpl, dict, list, tuple)
    cdef tuple src
    for src in sources:
        r = _resolve(src, absent)
        roots.append(r)
        if r is absent:
            continue
        t = type(r)
        if not w.scalar(t) and t not in opaque_types and not isinstance(r, plain) and \
                isinstance(getattr(r, "__dict__", None), dict):
            d = r.__dict__
            w.checks.append(_check(C_ATTRS, r, d, t))
            w.walk(d)                       # a plain object the code is bound to
        w.walk(r)
        if len(w.out) > budget or w.too_deep:
            return None
    key = tuple(w.out)
    snapshot = Snapshot(sources, roots, w.checks, w.tensor_list) if TL_DICT_VERSIONS else None
    return key, w.tensors, w.grads_of, list(w.devices.values()), snapshot


cdef extern from "Python.h":
    PyObject* PyCell_GET(object cell)


cdef class _Check:
    cdef int kind
    cdef object obj, a, b, c
    cdef unsigned long long version


cdef _Check _check(int kind, object obj, object a=None, object b=None):
    cdef _Check c = _Check.__new__(_Check)
    c.kind, c.obj, c.a, c.b = kind, obj, a, b
    return c


cdef _Check _tensor_check(TensorImpl t, object ginfo):
    cdef _Check c = _check(C_TENSOR, t, t._storage,
                           (t._sizes, t._strides, t._offset, t._dtype, t._requires_grad))
    c.c = ginfo
    return c


cdef bint _same_items(object d, tuple keys, tuple values) except -1:
    cdef Py_ssize_t i = 0
    if len(d) != len(keys):
        return False
    for k in d:
        if k is not keys[i]:
            return False
        i += 1
    i = 0
    for v in d.values():
        if v is not values[i]:
            return False
        i += 1
    return True


cdef bint _same_tensor(_Check c) except -1:
    cdef TensorImpl t = <TensorImpl>c.obj
    cdef tuple layout = <tuple>c.b
    cdef object g, ginfo
    if t._storage is not c.a or t._sizes != layout[0] or t._strides != layout[1] or \
            t._offset != <Py_ssize_t>layout[2] or t._dtype is not layout[3] or \
            t._requires_grad != <bint>layout[4]:
        return False
    g, ginfo = t._grad, c.c
    if g is None or ginfo is None:
        return g is None and ginfo is None
    return ((<TensorImpl>g)._sizes, (<TensorImpl>g)._strides, (<TensorImpl>g)._offset,
            (<TensorImpl>g)._dtype) == ginfo


cdef bint _same_sequence(list items, tuple saved) except -1:
    cdef Py_ssize_t i, n = len(saved)
    if len(items) != n:
        return False
    for i in range(n):
        if items[i] is not saved[i]:
            return False
    return True


cdef class Snapshot:
    """What a walk saw that a new walk would see differently if the state changed."""
    cdef list roots, checks
    cdef readonly list tensors      # the tensors walked, in walk order

    def __init__(self, list sources, list resolved, list checks, list tensors):
        # the roots that can change: globals and cells (an "obj" source is always itself)
        cdef _Check r
        self.roots = []
        for src, now in zip(sources, resolved):
            if src[0] == "global":
                r = _check(R_GLOBAL, None, src[1], src[2])
            elif src[0] == "cell":
                r = _check(R_CELL, None, src[1])
            else:
                continue
            r.c = now
            self.roots.append(r)
        self.checks, self.tensors = checks, tensors

    def grads_of(self):
        """id of each walked tensor's .grad storage -> the tensor (as the walk lists it)."""
        cdef dict found = {}
        cdef TensorImpl t
        for t in self.tensors:
            g = t._grad
            if g is not None:
                found[id((<TensorImpl>g)._storage)] = t
        return found

    def unchanged(self, object absent):
        """Whether walking the sources now would give the key this snapshot was taken
        with."""
        cdef _Check c
        cdef PyObject* now
        cdef PyObject* want
        for c in self.roots:
            want = <PyObject*>absent if c.c is absent else <PyObject*>c.c
            now = PyDict_GetItem(c.a, c.b) if c.kind == R_GLOBAL else PyCell_GET(c.a)
            if now == NULL:
                now = <PyObject*>absent
            if now != want:
                return False
        for c in self.checks:
            if c.kind == C_VERSION:
                if TL_DICT_VERSION(c.obj) != c.version:
                    return False
            elif c.kind == C_TENSOR:
                if not _same_tensor(c):
                    return False
            elif c.kind == C_ATTRS:
                if type(c.obj) is not c.b or c.obj.__dict__ is not c.a:
                    return False
            elif c.kind == C_EMPTY:
                if len(c.obj):
                    return False
            elif c.kind == C_LIST:
                if not _same_sequence(<list>c.obj, <tuple>c.a):
                    return False
            elif not _same_items(c.obj, <tuple>c.a, <tuple>c.b):
                return False
        return True
