# cython: boundscheck=False, wraparound=False
"""The walk behind `guards.fingerprint`, in Cython: it runs on every call of a compiled
function (twice per training step: the model and the optimizer step), and as Python it took
35-60 us a call on a small MLP's module tree and SGD state, most of a replay's own time.
It lists exactly what the Python walk listed (see `guards.py` for what and why)."""
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject

from tensorlib._C.tensor_impl cimport TensorImpl

cdef int MAX_DEPTH = 1000


cdef inline bint _is_scalar(object t):
    # the common scalars by pointer; the rest of the set (complex, bytes) by lookup
    return t is int or t is float or t is bool or t is str or t is type(None)


cdef class _Walk:
    cdef list out
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
            elif t in self.opaque_types:
                self.out.append(id(v))
            else:
                self.walk(v)

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
            return
        if isinstance(obj, dict):
            self.out.append(len(obj))
            for k in obj:
                self.out.append(k if self.scalar(type(k)) else id(k))
            self.values(obj.values())
            return
        if t is list or t is tuple:
            self.out.append(len(obj))
            self.values(obj)
            return
        if isinstance(obj, self.stateful):
            # the attributes' values in insertion order, and how many there are
            d = obj.__dict__
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
    """(key, tensors, grads_of, devices) of what `sources` name now, or None past `budget`
    entries or nested deeper than MAX_DEPTH."""
    cdef _Walk w = _Walk()
    w.out, w.tensors, w.seen, w.grads_of, w.devices = [], set(), set(), {}, {}
    w.scalar_types, w.opaque_types, w.containers = scalar_types, opaque_types, containers
    w.stateful = stateful
    w.depth, w.too_deep = 0, False
    cdef tuple plain = stateful + (TensorImpl, dict, list, tuple)
    cdef tuple src
    for src in sources:
        r = _resolve(src, absent)
        if r is absent:
            continue
        t = type(r)
        if not w.scalar(t) and t not in opaque_types and not isinstance(r, plain) and \
                isinstance(getattr(r, "__dict__", None), dict):
            w.walk(r.__dict__)              # a plain object the code is bound to
        w.walk(r)
        if len(w.out) > budget or w.too_deep:
            return None
    return tuple(w.out), w.tensors, w.grads_of, list(w.devices.values())
