/* An op that also takes PyTorch's NumPy keyword spellings (axis=, keepdims=, x1=...):
 * a vectorcall object forwarding to the op. A call without keywords, or whose keywords are
 * none of the aliases, is passed on as it came (no tuple or dict is built); only a call
 * naming an alias gets its keyword names renamed. It binds as a method does, and with
 * Py_TPFLAGS_METHOD_DESCRIPTOR `x.op(...)` calls it without a bound-method object; its
 * subtype AliasedFunction does not bind (the namespace functions PyTorch has as builtins).
 * A call given an overriding argument, or made while a TorchFunctionMode is on,
 * goes to the __torch_function__ fallback (set once by tensorlib.overrides) first; a call that
 * fails (TypeError, AttributeError...) is offered to it again: an argument that is not a
 * tensor but implements __torch_function__ (inside a list, a keyword) handles it. A call on
 * exact Tensors and numbers pays a pointer compare per argument and one flag test. */
#include <Python.h>
#include <stddef.h>

typedef struct {
    PyObject_HEAD
    PyObject *fn;             /* the op */
    PyObject *table;          /* dict: alias -> the op's parameter name */
    PyObject *dict;           /* __name__, __doc__, __wrapped__ ... (functools.wraps) */
    vectorcallfunc vectorcall;
} AliasedCall;

static PyObject *torch_function_fallback = NULL;  /* fallback(op, args, kwargs, failed) */
static PyObject *tensor_type = NULL;              /* tensorlib.Tensor: never overrides */
static PyObject *disabled_impl = NULL;            /* _disabled_torch_function_impl */
static PyObject *torch_function_name = NULL;      /* "__torch_function__", interned */
static int mode_active = 0;                       /* a TorchFunctionMode is on the stack */

/* An argument whose type defines __torch_function__ (an fx Proxy, a Tensor subclass whose
 * __torch_function__ is not _disabled_torch_function_impl). An exact Tensor or a number costs
 * a pointer compare. */
static int overrides(PyObject *arg) {
    PyTypeObject *t = Py_TYPE(arg);
    if ((PyObject *)t == tensor_type || t == &PyFloat_Type || t == &PyLong_Type
            || arg == Py_None || t == &PyBool_Type)
        return 0;
    PyObject *impl = _PyType_Lookup(t, torch_function_name);
    return impl != NULL && impl != disabled_impl;
}

/* An argument (positional or keyword), or an item of a list/tuple one (cat's tensors), that
 * overrides: the call goes to the fallback before the op runs, as PyTorch dispatches
 * (F.leaky_relu(proxy) is one node, not the ops its body would record). */
static int has_overriding_argument(PyObject *const *args, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTypeObject *t = Py_TYPE(args[i]);
        if (t == &PyList_Type || t == &PyTuple_Type) {
            PyObject **items = PySequence_Fast_ITEMS(args[i]);
            for (Py_ssize_t j = 0, m = PySequence_Fast_GET_SIZE(args[i]); j < m; j++)
                if (overrides(items[j]))
                    return 1;
        } else if (overrides(args[i])) {
            return 1;
        }
    }
    return 0;
}

/* fallback(op, args, kwargs) for a vectorcall's arguments: a new reference (NotImplemented
 * when no argument overrides), or NULL with the fallback's exception set. */
static PyObject *call_fallback(PyObject *self, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames, int failed) {
    Py_ssize_t n = PyVectorcall_NARGS(nargsf), i;
    Py_ssize_t nk = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    PyObject *tuple = PyTuple_New(n), *kwargs = PyDict_New(), *result = NULL;
    if (tuple == NULL || kwargs == NULL)
        goto done;
    for (i = 0; i < n; i++) {
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(tuple, i, args[i]);
    }
    for (i = 0; i < nk; i++)
        if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[n + i]) < 0)
            goto done;
    result = PyObject_CallFunctionObjArgs(torch_function_fallback, self, tuple, kwargs,
                                          failed ? Py_True : Py_False, NULL);
done:
    Py_XDECREF(tuple);
    Py_XDECREF(kwargs);
    return result;
}

static PyObject *call_op(PyObject *self, PyObject *fn, PyObject *const *args, size_t nargsf,
                         PyObject *kwnames) {
    PyObject *result;
    if (torch_function_fallback == NULL)
        return PyObject_Vectorcall(fn, args, nargsf, kwnames);
    Py_ssize_t n = PyVectorcall_NARGS(nargsf) + (kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames));
    if (mode_active || has_overriding_argument(args, n)) {
        result = call_fallback(self, args, nargsf, kwnames, 0);
        if (result != Py_NotImplemented)
            return result;
        Py_DECREF(result);          /* dispatch is off, or no handler: the op runs */
    }
    result = PyObject_Vectorcall(fn, args, nargsf, kwnames);
    if (result != NULL || !PyErr_ExceptionMatches(PyExc_Exception))
        return result;
    /* failed: an overriding argument the scan above does not see (deeper in a container)
     * takes the call; without one, the op's own error stands */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    result = call_fallback(self, args, nargsf, kwnames, 1);
    if (result == Py_NotImplemented) {
        Py_DECREF(result);
        PyErr_Restore(type, value, tb);
        return NULL;
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return result;
}

static int aliased_set_fallback(PyObject *fallback, PyObject *tensor, PyObject *disabled) {
    if (torch_function_name == NULL
            && (torch_function_name = PyUnicode_InternFromString("__torch_function__")) == NULL)
        return -1;
    Py_XINCREF(fallback);
    Py_XSETREF(torch_function_fallback, fallback);
    Py_XINCREF(tensor);
    Py_XSETREF(tensor_type, tensor);
    Py_XINCREF(disabled);
    Py_XSETREF(disabled_impl, disabled);
    return 0;
}

static void aliased_set_mode_active(int active) {
    mode_active = active;
}

static PyObject *aliased_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                    PyObject *kwnames) {
    AliasedCall *a = (AliasedCall *)self;
    Py_ssize_t nk = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames), i, j, hit = -1;
    for (i = 0; i < nk && hit < 0; i++) {
        if (PyDict_GetItemWithError(a->table, PyTuple_GET_ITEM(kwnames, i)) != NULL)
            hit = i;
        else if (PyErr_Occurred())
            return NULL;
    }
    if (hit < 0)
        return call_op(self, a->fn, args, nargsf, kwnames);
    PyObject *names = PyTuple_New(nk);
    if (names == NULL)
        return NULL;
    for (i = 0; i < nk; i++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, i);
        PyObject *name = PyDict_GetItemWithError(a->table, key);
        if (name == NULL) {
            if (PyErr_Occurred()) {
                Py_DECREF(names);
                return NULL;
            }
            name = key;
        }
        for (j = 0; j < i; j++) {
            int same = PyUnicode_Compare(PyTuple_GET_ITEM(names, j), name);
            if (same == 0) {
                PyErr_Format(PyExc_TypeError, "got multiple values for argument '%U'", name);
                Py_DECREF(names);
                return NULL;
            }
        }
        Py_INCREF(name);
        PyTuple_SET_ITEM(names, i, name);
    }
    PyObject *result = call_op(self, a->fn, args, nargsf, names);
    Py_DECREF(names);
    return result;
}

static PyObject *aliased_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static int aliased_traverse(PyObject *self, visitproc visit, void *arg) {
    AliasedCall *a = (AliasedCall *)self;
    Py_VISIT(a->fn);
    Py_VISIT(a->table);
    Py_VISIT(a->dict);
    return 0;
}

static int aliased_clear(PyObject *self) {
    AliasedCall *a = (AliasedCall *)self;
    Py_CLEAR(a->fn);
    Py_CLEAR(a->table);
    Py_CLEAR(a->dict);
    return 0;
}

static void aliased_dealloc(PyObject *self) {
    PyObject_GC_UnTrack(self);
    aliased_clear(self);
    PyObject_GC_Del(self);
}

static PyObject *aliased_repr(PyObject *self) {
    return PyObject_Repr(((AliasedCall *)self)->fn);       /* reads as the op it wraps */
}

static PyObject *reducer = NULL;   /* reducer(op): how pickle names op (tensorlib._pickle_ops) */

static void aliased_set_reducer(PyObject *fn) {
    Py_XINCREF(fn);
    Py_XSETREF(reducer, fn);
}

static PyObject *aliased_reduce(PyObject *self, PyObject *unused) {
    /* pickled by reference to where the op is public (torch.sigmoid, Tensor.exp), as
       functions are: the name it was defined under holds the unwrapped function */
    if (reducer != NULL)
        return PyObject_CallOneArg(reducer, self);
    return PyObject_GetAttrString(self, "__qualname__");
}

static PyMethodDef aliased_methods[] = {
    {"__reduce__", aliased_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef aliased_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject AliasedCallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tensorlib._C.opdef.AliasedOp",
    .tp_basicsize = sizeof(AliasedCall),
    .tp_dealloc = aliased_dealloc,
    .tp_repr = aliased_repr,
    .tp_vectorcall_offset = offsetof(AliasedCall, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL
                | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_traverse = aliased_traverse,
    .tp_clear = aliased_clear,
    .tp_methods = aliased_methods,
    .tp_getset = aliased_getset,
    .tp_descr_get = aliased_get,
    .tp_dictoffset = offsetof(AliasedCall, dict),
};

/* The same op as a function that does not bind (PyTorch's torch.conv2d is a builtin
 * function: stored as a class attribute, `self.conv(x, w)` passes no self). A subtype, so
 * code that tells ops by isinstance(..., AliasedOp) counts it; without
 * Py_TPFLAGS_METHOD_DESCRIPTOR, `obj.op(...)` goes through function_get. */
static PyObject *function_get(PyObject *self, PyObject *obj, PyObject *type) {
    Py_INCREF(self);
    return self;
}

static PyTypeObject AliasedFunctionType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tensorlib._C.opdef.AliasedFunction",
    .tp_basicsize = sizeof(AliasedCall),
    .tp_dealloc = aliased_dealloc,
    .tp_repr = aliased_repr,
    .tp_vectorcall_offset = offsetof(AliasedCall, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_traverse = aliased_traverse,
    .tp_clear = aliased_clear,
    .tp_base = &AliasedCallType,
    .tp_descr_get = function_get,
    .tp_dictoffset = offsetof(AliasedCall, dict),
};

static int aliased_types_ready(void) {
    if (!(AliasedCallType.tp_flags & Py_TPFLAGS_READY) && PyType_Ready(&AliasedCallType) < 0)
        return -1;
    if (!(AliasedFunctionType.tp_flags & Py_TPFLAGS_READY)
            && PyType_Ready(&AliasedFunctionType) < 0)
        return -1;
    return 0;
}

static PyObject *aliased_alloc(PyTypeObject *type, PyObject *fn, PyObject *table) {
    AliasedCall *a = PyObject_GC_New(AliasedCall, type);
    if (a == NULL)
        return NULL;
    Py_INCREF(fn);
    Py_INCREF(table);
    a->fn = fn;
    a->table = table;
    a->dict = NULL;
    a->vectorcall = aliased_vectorcall;
    PyObject_GC_Track((PyObject *)a);
    return (PyObject *)a;
}

/* op (an AliasedOp) as an AliasedFunction: the same op, keyword table and attributes
 * (__name__, __doc__, __wrapped__; the dict is copied). */
static PyObject *aliased_function(PyObject *op) {
    if (aliased_types_ready() < 0)
        return NULL;
    if (!PyObject_TypeCheck(op, &AliasedCallType)) {
        PyErr_SetString(PyExc_TypeError, "aliased_function() takes an AliasedOp");
        return NULL;
    }
    AliasedCall *source = (AliasedCall *)op;
    AliasedCall *a = (AliasedCall *)aliased_alloc(&AliasedFunctionType, source->fn,
                                                  source->table);
    if (a != NULL && source->dict != NULL && (a->dict = PyDict_Copy(source->dict)) == NULL) {
        Py_DECREF(a);
        return NULL;
    }
    return (PyObject *)a;
}

static PyObject *aliased_new(PyObject *fn, PyObject *table) {
    if (aliased_types_ready() < 0)
        return NULL;
    return aliased_alloc(&AliasedCallType, fn, table);
}
