"""The call path of a @differentiable op (tensorlib.ops._opdef) in C: every op call pays the
autocast flag, the grad-mode test and the scan of its arguments for a tensor that requires
grad; as a Python closure those cost about a microsecond, a tenth of a small op."""
from tensorlib._C.grad_mode cimport grad_enabled, recorder
from tensorlib._C.tensor_impl cimport TensorImpl
from tensorlib._C.views cimport note_view
from tensorlib._C import grad_mode as _state


cpdef bint requires_grad(tuple args):
    """A tensor argument, or one inside a list/tuple argument (cat's), requires grad."""
    for a in args:
        if isinstance(a, TensorImpl):
            if (<TensorImpl>a)._requires_grad:
                return True
        elif isinstance(a, (list, tuple)):
            for t in a:
                if isinstance(t, TensorImpl) and (<TensorImpl>t)._requires_grad:
                    return True
    return False


cdef extern from "aliased_call.h":
    object aliased_new(object fn, object table)
    object aliased_function(object op)
    int aliased_set_fallback(object fallback, object tensor, object disabled) except -1
    void aliased_set_mode_active(int active)
    void aliased_set_reducer(object fn)


# the type of what with_aliases returns: code that tells ops from other objects by type
# (fx's tracer, the compiler's guards, serialization) counts it with the functions
AliasedOp = type(aliased_new(len, {}))
# its subtype that does not bind as a method: the namespace functions that are builtins in
# PyTorch (torch.conv2d kept as a class attribute is called without self)
AliasedFunction = type(aliased_function(aliased_new(len, {})))


def as_function(op):
    """The AliasedOp `op` as an AliasedFunction (same op, keywords and attributes)."""
    return aliased_function(op)


def with_aliases(fn, dict table):
    """fn accepting the aliases of `table` as keywords: a C object that passes a call on
    as it came (vectorcall, no repacking) unless one of its keywords is an alias."""
    return aliased_new(fn, table)


def set_torch_function_fallback(fallback, tensor_class, disabled_impl):
    """fallback(op, args, kwargs, failed) for the calls of ops (with_aliases objects) given a
    argument (or list/tuple item) whose type defines __torch_function__ (other than tensor_class's
    exact instances and types whose __torch_function__ is `disabled_impl`), made while a mode
    is on, and (failed=True) for calls that raised: its answer is the call's, NotImplemented
    when nothing handles it (the op runs, or its exception stands)."""
    aliased_set_fallback(fallback, tensor_class, disabled_impl)


def set_pickle_reducer(fn):
    """fn(op) is what pickling an op returns (its __reduce__): tensorlib._pickle_ops."""
    aliased_set_reducer(fn)


def set_torch_function_mode_active(bint active):
    """Every op call goes to the fallback while a TorchFunctionMode is on the stack."""
    aliased_set_mode_active(active)


cdef object _recorded(str name, fn, tuple args, dict kwargs):
    """fn(*args, **kwargs), recorded as one node `name` when recording is on and an input
    requires grad (fn itself runs with recording off)."""
    if not (grad_enabled() and requires_grad(args)):
        out = fn(*args, **kwargs)
        if isinstance(out, TensorImpl):     # a view's creation mode (views.note_view)
            if (<TensorImpl>out)._base is not None:
                note_view(<TensorImpl>out, args, False)
        elif type(out) is tuple:
            for o in <tuple>out:
                if isinstance(o, TensorImpl) and (<TensorImpl>o)._base is not None:
                    note_view(<TensorImpl>o, args, False)
        return out
    prev = _state.set_grad_enabled(False)
    try:
        out = fn(*args, **kwargs)
    finally:
        _state.set_grad_enabled(prev)
    for a in args:
        if out is a:                # a no-op (x.to(x.dtype)) returns its input
            return out
    record = recorder()
    if record is None:              # an op called while tensorlib.autograd imports
        from tensorlib.autograd.recording import record
    return record(name, out, args, kwargs)


def make_op(str name, fn, autocast):
    """The public op for body `fn`: it runs `fn`, and when recording is on and an input
    requires grad, runs it with recording off and records one node `name` for the whole op.
    `autocast` is the module tensorlib.ops._autocast (its flag `active` is read per call):
    while it is set the op goes through its `run` with the op minus that check."""
    def op(*args, **kwargs):
        if autocast.active:
            return autocast.run(name, unhooked, args, kwargs)
        return _recorded(name, fn, args, kwargs)

    def unhooked(*args, **kwargs):
        return _recorded(name, fn, args, kwargs)
    return op
