"""The autograd graph and engine in Cython: recording a node costs about as much as the op's
dispatch, so the per-op overhead stays near PyTorch's. The Python layer (tensorlib.autograd)
re-exports these classes and keeps everything else (Function, hooks, grad(), in-place logic).

A node's `next_functions[i]` is the (node, output_nr) edge of its i-th tensor input: the
input's grad_fn, or for a leaf that requires grad its AccumulateGrad, or (None, 0)."""
cimport cython
import heapq
import traceback
import weakref

from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_REFCNT
from tensorlib._C.dtypes cimport dtype
from tensorlib._C.tensor_impl cimport TensorImpl, is_contiguous
from tensorlib._C.views cimport alias, note_view
from tensorlib._C.grad_mode cimport grad_enabled
from tensorlib._C import grad_mode as _state

cdef tuple _NO_ARGS = ()
cdef long long _sequence = 0
cdef bint _anomaly_on = False        # set by tensorlib.autograd.anomaly_mode
cdef bint _anomaly_check_nan = False

FORMULAS = {}
cdef dict _FORMULAS = FORMULAS
cdef dict _NODE_CLASSES = {}
# PyTorch's names where they differ (its cross_entropy ends in nll_loss over log_softmax;
# ours is one node, shown under the name of PyTorch's last)
cdef dict _CLASS_NAMES = {"copy_slices": "CopySlices", "cross_entropy_loss": "NllLossBackward0"}


def set_anomaly_mode(bint enabled, bint check_nan):
    """Nodes record their forward stack while enabled; with check_nan, a backward that
    produces NaN raises naming the node."""
    global _anomaly_on, _anomaly_check_nan
    _anomaly_on = enabled
    _anomaly_check_nan = enabled and check_nan


# ---- what a node keeps of its inputs ---------------------------------------------------------
@cython.no_gc
cdef class TensorMeta:
    """What a backward formula may know of an input it did not save: shape, dtype, device.
    Holds no container that could lead back to it, so the cyclic GC skips it: a graph has
    several per node, and a full collection traversed them all (22% of an LSTM step)."""
    cdef readonly tuple shape, strides
    cdef readonly object dtype, device
    cdef readonly Py_ssize_t offset

    def __init__(self, TensorImpl t):
        self.shape = t._sizes
        self.strides = t._strides
        self.offset = t._offset
        self.dtype = t._dtype
        self.device = t._device

    def dim(self):
        return len(self.shape)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def numel(self):
        cdef Py_ssize_t n = 1
        for s in self.shape:
            n *= <Py_ssize_t>s
        return n


cdef TensorMeta _meta(TensorImpl t):
    cdef TensorMeta m = TensorMeta.__new__(TensorMeta)
    m.shape = t._sizes
    m.strides = t._strides
    m.offset = t._offset
    m.dtype = t._dtype
    m.device = t._device
    return m


cdef str _FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


cdef class SavedTensor:
    """A tensor kept for backward, with the version it had; unpacking after an in-place write
    or after the graph was freed raises RuntimeError saying which.

    An output of the owner node is kept as a history-free alias, so that the tensor ->
    grad_fn -> saved tensor cycle does not keep outputs alive until the garbage collector
    runs; unpacking gives back an alias whose grad_fn is the owner (for create_graph). The
    owner is not kept here but handed to unpack by the node: a node <-> saved tensor cycle
    left every graph to the cyclic collector, whose full passes took a third of an LSTM
    training step."""
    cdef public object tensor
    cdef public Py_ssize_t version
    cdef public object output_nr

    def __init__(self, TensorImpl t, output_nr=None):
        self.version = t._storage.version
        self.output_nr = None
        self.tensor = t
        if output_nr is not None:
            self.mark_output(output_nr)

    def mark_output(self, output_nr):
        t = self.tensor
        if t is None or self.output_nr is not None:
            return
        self.tensor = alias(t)
        self.output_nr = output_nr

    cpdef unpack(self, owner=None):
        """The saved tensor; `owner`, the node that saved it, names it in errors and is the
        grad_fn of an unpacked output."""
        cdef TensorImpl t = self.tensor
        cdef TensorImpl out
        if t is None:
            raise RuntimeError(_FREED)
        if t._storage.version != self.version:
            owner_name = owner.name() if owner is not None else "an autograd node"
            if self.output_nr is not None:
                made_by = f", which is output {self.output_nr} of {owner_name}"
            elif t._grad_fn is not None:
                made_by = f", which is output {t._output_nr} of {t._grad_fn.name()}"
            else:
                made_by = ""
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [tensorlib.{t._dtype.scalar_name}Tensor "
                f"{list(t._sizes)}]{made_by}, is at version {t._storage.version}; expected "
                f"version {self.version} instead. The op that saved it: {owner_name}. "
                f"Hint: enable anomaly detection to find the forward op that made it.")
        if self.output_nr is not None:
            out = alias(t)
            out._requires_grad = owner is not None
            out._grad_fn = owner
            out._output_nr = self.output_nr
            return out
        return t


# ---- nodes -----------------------------------------------------------------------------------
cdef class Node:
    """A grad_fn. Subclasses implement `backward(*grad_outputs) -> grads per input`."""
    cdef public tuple next_functions
    cdef public long long _sequence_nr
    # Made on first registration (an empty list per node was a tenth of the objects a graph
    # gives the cyclic collector to track):
    cdef public dict _pre_hooks      # output_nr -> [tensor hooks]; None -> [node pre-hooks]
    cdef public list _hooks          # fn(grad_inputs, grad_outputs), run after backward
    cdef public bint _released
    cdef public object _forward_trace
    cdef dict __dict__
    cdef object __weakref__

    def __cinit__(self, *args, **kwargs):
        global _sequence
        self.next_functions = ()
        _sequence += 1
        self._sequence_nr = _sequence
        if _anomaly_on:
            self._forward_trace = traceback.format_stack()

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) after this node's backward; may return new grads."""
        from tensorlib.utils.hooks import RemovableHandle
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(fn)
        return RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) before this node's backward; may return new grad_outputs."""
        from tensorlib.utils.hooks import RemovableHandle
        hooks = self.pre_hooks_for(None)
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def pre_hooks_for(self, output_nr):
        """The list of pre-hooks for one output (None: the node's own), made if missing."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return self._pre_hooks.setdefault(output_nr, [])

    def release(self):
        """Free saved tensors (called after backward unless retain_graph)."""
        self._released = True

    def apply(self, *grad_outputs):
        return self.backward(*grad_outputs)


cdef class AccumulateGrad(Node):
    """The node of a leaf that requires grad: adds incoming gradients into `variable.grad`."""
    cdef public object variable

    def __init__(self, variable):
        self.variable = variable
        self._sequence_nr = -1        # not in creation order: _push runs leaves first

    def backward(self, grad):
        return ()

    def run_tensor_hooks(self, grad):
        """The leaf's register_hook hooks, in order; each may replace the gradient."""
        for hook in list(self.variable._hooks or ()):
            grad = _hooked(grad, hook(grad))
        return grad

    def accumulate(self, grad, bint create_graph, bint owned=False):
        """Run the leaf's tensor hooks, add into .grad, run post-accumulate hooks. A fresh
        .grad takes the incoming tensor when the engine says nothing else holds it (`owned`),
        else a copy (a + b sends one tensor to both inputs; optimizers write .grad in place);
        later gradients add in place, as PyTorch, so references to .grad see them."""
        cdef TensorImpl v = self.variable
        cdef TensorImpl old
        if v._hooks:
            grad = self.run_tensor_hooks(grad)
            owned = False
        if create_graph:
            v._grad = grad if v._grad is None else v._grad + grad
        else:
            prev = _state.set_grad_enabled(False)
            try:
                old = v._grad
                if old is None:
                    v._grad = grad if owned and not grad._requires_grad else \
                        grad.detach().clone()
                elif (not old._requires_grad and old._sizes == grad._sizes
                      and old._dtype is grad._dtype and is_contiguous(old)):
                    old.add_(grad)
                else:
                    v._grad = old + grad
            finally:
                _state.set_grad_enabled(prev)
        for hook in getattr(self.variable, "_post_accumulate_hooks", ()):
            hook(v)


cpdef object accumulator(TensorImpl t):
    """The leaf's AccumulateGrad, shared by every graph that uses it. The tensor holds it only
    weakly (the graph holds it strongly), as PyTorch, so no reference cycle is made."""
    ref = t._grad_accumulator
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._grad_accumulator = weakref.ref(acc)
    return acc


cdef object _refresh_view = None       # recording.refresh_view, set by autograd at import


def set_view_refresher(refresher):
    global _refresh_view
    _refresh_view = refresher


cpdef bint stale_view(TensorImpl t):
    """t is a view whose history was made before an in-place write gave its base new history
    (PyTorch compares the base's version with the view's; here node sequence numbers, which
    only grow, tell which came first)."""
    if t._base is None or not isinstance(t._grad_fn, Node):
        return False
    return (<Node>t._grad_fn)._sequence_nr < getattr(t._base, "_history_sequence_nr", -1)


cpdef tuple edge(object x):
    """The (node, output_nr) that gradients for x flow into; a stale view's history is
    first made again from its base's (recording.refresh_view)."""
    if not isinstance(x, TensorImpl):
        return (None, 0)
    cdef TensorImpl t = <TensorImpl>x
    if not t._requires_grad:
        return (None, 0)
    if t._no_grad_view:
        if t._storage.version != t._view_version:
            raise RuntimeError(no_grad_view_error(t, "its base or another view of its base "
                                                     "has been"))
        if t._grad_fn is None:          # gradients stop here, unless it asked for its own
            return (accumulator(t), 0) if t._own_requires_grad else (None, 0)
    elif t._base is not None and _refresh_view is not None and stale_view(t):
        _refresh_view(t)
    if t._grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    return (accumulator(t), 0)


cpdef str no_grad_view_error(TensorImpl t, str what):
    """PyTorch's refusal of an in-place write into a no-grad view (`what` is "is being"), or
    of using one after a write into its base or another of its views ("its base ... has
    been"): the write would have to be both tracked and not."""
    if t._grad_fn is not None:
        name = t._grad_fn.name()
        name = name[:name.rindex("Backward")] if "Backward" in name else name
        prefix = f"Output {t._output_nr} of {name} is a view of a view which was created in"
    else:
        prefix = "A view was created in"
    return (f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled. Given "
            f"that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
            f"your code by moving both the view and the inplace either both inside the no_grad "
            f"block (if you don't want the inplace to be tracked) or both outside (if you want "
            f"the inplace to be tracked).")


cdef object _hooked(object grad, object new):
    """A tensor hook's result replaces the gradient; it must stay on the gradient's device."""
    if new is None:
        return grad
    if (<TensorImpl>new)._device is not (<TensorImpl>grad)._device:
        raise RuntimeError(f"hook has changed the device of value: it returned a gradient on "
                           f"{new.device} for one on {grad.device}")
    return new


# ---- op nodes: one per recorded op -----------------------------------------------------------
cdef class Formula:
    """backward(ctx, *grad_outputs) -> one grad per positional input (a list of grads for a
    list-of-tensors input). `save` names the positional inputs the backward reads (by index);
    `save_output` keeps the result; everything else is kept as shape/dtype/device only.
    `save_for` maps a saved input to the inputs whose gradients read it: it is kept only when
    one of them needs a gradient (y * 3 keeps nothing of y, as in PyTorch).
    `wraps_numbers`: PyTorch takes a number in a saved position as a tensor (mul and div's
    operands), so the node counts as having saved it (a second backward raises).
    `edge_order`: the positional inputs in the order of the node's next_functions (and of
    the gradients it returns), where PyTorch's graph lists them otherwise; the engine hands
    gradients on in that order, which sets the order leaves accumulate (hooks fire)."""
    cdef public str name
    cdef public object backward
    cdef public frozenset save
    cdef public bint save_output
    cdef public object save_for
    cdef public bint wraps_numbers
    cdef public tuple edge_order
    cdef dict _perms                 # OpNode._reorder's cache
    cdef unsigned long long _mask

    def __init__(self, name, backward, save=(), save_output=False, save_for=None,
                 wraps_numbers=False, edge_order=None):
        self.name = name
        self.backward = backward
        self.save = frozenset(save)
        self.save_output = save_output
        self.save_for = save_for
        self.wraps_numbers = wraps_numbers
        self.edge_order = tuple(edge_order) if edge_order is not None else None
        self._perms = {}
        self._mask = 0
        for i in self.save:
            if i < 64:
                self._mask |= (<unsigned long long>1) << i

    cdef inline bint saves(self, Py_ssize_t i):
        return i < 64 and (self._mask >> i) & 1


def formula(*names, save=(), save_output=False, save_for=None, wraps_numbers=False,
            edge_order=None):
    """Register the backward of one or more ops."""
    def register(fn):
        for name in names:
            _FORMULAS[name] = Formula(name, fn, save, save_output, save_for, wraps_numbers,
                                      edge_order)
        return fn
    return register


def node_class(op):
    """AddBackward0-style node classes, one per op, as PyTorch names them."""
    cls = _NODE_CLASSES.get(op)
    if cls is None:
        camel = "".join(part.capitalize() for part in op.strip("_").split("_"))
        name = _CLASS_NAMES.get(op, f"{camel}Backward0")
        cls = type(name, (OpNode,), {"__module__": "tensorlib.autograd"})
        _NODE_CLASSES[op] = cls
    return cls


cdef class Context:
    """What a backward formula sees: args (saved tensors unpacked, others as TensorMeta),
    kwargs, the saved output, and which inputs need a gradient."""
    cdef public tuple args
    cdef public object kwargs
    cdef public object out
    cdef public tuple needs_input_grad


cdef inline void _check_not_inference(TensorImpl t) except *:
    if t._is_inference:
        raise RuntimeError("Inference tensors cannot be saved for backward. To work around you "
                           "can make a clone to get a normal tensor and use it in autograd.")


cdef object _held_tensor(TensorImpl t, bint saved):
    if saved:
        _check_not_inference(t)
        return SavedTensor(t)
    return _meta(t)


cdef object _edge_permutation(tuple order, tuple counts):
    """Flat edge indices in `order` (positional inputs) for inputs that are tensors where
    `counts` says (1: a tensor, 0: none); None when that is the flat order itself."""
    cdef list flat = []
    cdef Py_ssize_t i
    for i in range(len(counts)):
        if counts[i] < 0:
            raise RuntimeError("edge_order does not support list inputs")
        if counts[i] == 1:
            flat.append(i)
    perm = [flat.index(i) for i in order if i in flat]
    perm += [j for j in range(len(flat)) if j not in perm]
    return None if perm == list(range(len(flat))) else tuple(perm)


cdef class OpNode(Node):
    """The node of one recorded op: its formula, its inputs' edges, what the formula saved."""
    cdef public Formula _formula
    cdef public object _kwargs
    cdef public list _held           # per positional arg: SavedTensor, TensorMeta, list, value
    cdef public tuple _metas         # per tensor input (flattened): TensorMeta
    cdef public tuple _counts        # per positional arg: 1 tensor, 0 none, -n a list of n
    cdef public tuple _needs         # per positional arg: does it need a gradient
    cdef public list _saved_out
    # a number the formula saved (x * 2's 2; Formula.wraps_numbers): PyTorch saves it as a
    # tensor, which a backward frees like any other, so a second backward raises as PyTorch's
    cdef public bint _saved_number
    cdef public tuple _edge_perm     # Formula.edge_order as flat edge indices, or None

    cdef _setup(self, Formula f, tuple args, object kwargs, object out):
        cdef list held = [], edges = [], metas = [], needs = [], counts = []
        cdef unsigned long long saved_numbers = 0       # bit i: args[i], a saved number
        cdef Py_ssize_t i
        cdef TensorImpl t
        cdef tuple e
        cdef bint saved
        self._formula = f
        self._kwargs = kwargs
        for i in range(len(args)):
            a = args[i]
            saved = f.saves(i)
            if isinstance(a, TensorImpl):
                t = <TensorImpl>a
                e = edge(t)
                edges.append(e)
                m = _meta(t)
                metas.append(m)
                held.append(_held_tensor(t, True) if saved else m)
                needs.append(e[0] is not None)
                counts.append(1)
            elif isinstance(a, (list, tuple)) and a and all(isinstance(x, TensorImpl)
                                                            for x in a):
                any_needed = False
                group = []
                for x in a:
                    e = edge(x)
                    edges.append(e)
                    metas.append(_meta(<TensorImpl>x))
                    group.append(_held_tensor(<TensorImpl>x, saved))
                    any_needed = any_needed or e[0] is not None
                held.append(group)
                needs.append(any_needed)
                counts.append(-len(a))
            else:
                held.append(a)
                needs.append(False)
                counts.append(0)
                if saved and f.wraps_numbers and isinstance(a, (int, float, complex)):
                    saved_numbers |= (<unsigned long long>1) << i
        if f.save_for is not None:
            for i, readers in f.save_for.items():
                if i >= len(held):
                    continue
                number = i < 64 and (saved_numbers >> i) & 1
                if (number or isinstance(held[i], SavedTensor)) and \
                        not any(needs[j] for j in readers if j < len(needs)):
                    if number:
                        saved_numbers &= ~((<unsigned long long>1) << i)
                    else:
                        held[i] = _meta(<TensorImpl>args[i])
        self._saved_number = saved_numbers != 0
        self._counts = tuple(counts)
        if f.edge_order is not None:
            edges, metas = self._reorder(f, self._counts, edges, metas)
        self.next_functions = tuple(edges)
        self._held = held
        self._metas = tuple(metas)      # tuples of untracked items: the GC untracks them
        self._needs = tuple(needs)
        if f.save_output:
            outs = out if isinstance(out, tuple) else (out,)
            self._saved_out = [SavedTensor(o, output_nr=i) for i, o in enumerate(outs)]

    cdef tuple _reorder(self, Formula f, tuple counts, list edges, list metas):
        """edges and metas in Formula.edge_order; the permutation (per pattern of inputs,
        cached on the formula) is kept for _backward's gradients."""
        perm = f._perms.get(counts, False)
        if perm is False:
            perm = f._perms[counts] = _edge_permutation(f.edge_order, counts)
        if perm is None:
            return edges, metas
        self._edge_perm = perm
        return [edges[j] for j in perm], [metas[j] for j in perm]

    def release(self):
        self._released = True
        for h in self._held:
            if isinstance(h, SavedTensor):
                (<SavedTensor>h).tensor = None
            elif isinstance(h, list):
                for s in h:
                    if isinstance(s, SavedTensor):
                        (<SavedTensor>s).tensor = None
        if self._saved_out is not None:
            for s in self._saved_out:
                (<SavedTensor>s).tensor = None

    cdef Context _context(self):
        if self._released and self._saved_number:
            raise RuntimeError(_FREED)
        cdef Context ctx = Context.__new__(Context)
        ctx.args = tuple([_unpack(h, self) for h in self._held])
        ctx.kwargs = self._kwargs
        ctx.needs_input_grad = self._needs
        if self._saved_out is not None:
            outs = [(<SavedTensor>s).unpack(self) for s in self._saved_out]
            ctx.out = outs[0] if len(outs) == 1 else tuple(outs)
        return ctx

    def backward(self, *grad_outputs):
        return self._backward(grad_outputs)

    cdef tuple _backward(self, tuple grad_outputs):
        """backward's body, which the engine calls directly (no Python-level call of apply
        and backward per node)."""
        grads = self._formula.backward(self._context(), *grad_outputs)
        if not isinstance(grads, tuple):
            grads = (grads,)
        cdef list flat = []
        cdef Py_ssize_t count
        for count, g in zip(self._counts, grads):
            if count == 1:
                flat.append(g)
            elif count < 0:
                flat.extend(g if g is not None else [None] * -count)
        # a formula may leave out its trailing inputs' gradients: None for each, so that
        # every input edge is answered (an unanswered one kept the nodes below it waiting)
        flat.extend([None] * (len(self._metas) - len(flat)))
        if self._edge_perm is not None:
            flat = [flat[j] for j in self._edge_perm]
        return tuple([_fit(g, m) if g is not None else None
                      for g, m in zip(flat, self._metas)])


# Node types whose backward is OpNode's own (the per-op classes node_class makes): the
# engine runs those through OpNode._backward.
cdef dict _PLAIN_OPNODE = {}


cdef bint _plain_opnode(Node node):
    cls = type(node)
    known = _PLAIN_OPNODE.get(cls)
    if known is None:
        known = isinstance(node, OpNode) and cls.backward is OpNode.backward \
            and cls.apply is Node.apply
        _PLAIN_OPNODE[cls] = known
    return known


cpdef object conj(object x):
    """The conjugate of a complex tensor or number; anything else is returned as it is (the
    formulas apply it to every saved factor: here it costs one type test for real ones)."""
    if isinstance(x, TensorImpl):
        return x.conj_physical() if (<TensorImpl>x)._dtype.category == 3 else x
    return x.conjugate() if isinstance(x, complex) else x


cdef object _unpack(object h, Node owner):
    if isinstance(h, SavedTensor):
        return (<SavedTensor>h).unpack(owner)
    if isinstance(h, list):
        return [_unpack(x, owner) for x in h]
    return h


cdef object _fit(object grad, TensorMeta meta):
    """Undo broadcasting (sum over expanded dims) and promotion (cast back) so a gradient has
    its input's shape and dtype. A real input of a complex op gets the real part of its
    complex gradient (PyTorch's rule)."""
    cdef TensorImpl g = grad
    if g._sizes != meta.shape:
        grad = grad.sum_to_size(meta.shape)
        g = grad
    if g._dtype is not meta.dtype:
        if g._dtype.category == 3 and (<dtype>meta.dtype).category != 3:
            grad = grad.real
        grad = grad.to(meta.dtype)
    return grad


cpdef object scalar_argument(object t):
    """t is `b * number` made inside an op that PyTorch gives the number as a Scalar argument
    (add's alpha, lerp's weight), which it does not save as a tensor: t's node does not count
    the number as saved (OpNode._saved_number). Returns t."""
    if isinstance(t, TensorImpl) and isinstance((<TensorImpl>t)._grad_fn, OpNode):
        (<OpNode>(<TensorImpl>t)._grad_fn)._saved_number = False
    return t


cpdef OpNode make_node(str op, tuple args, object kwargs, object out):
    """The node `op` would record for these arguments and output(s), not yet attached."""
    f = _FORMULAS.get(op)
    if f is None:
        raise RuntimeError(f"the derivative for '{op}' is not implemented")
    cls = _NODE_CLASSES.get(op)
    if cls is None:
        cls = node_class(op)
    cdef OpNode node = <OpNode>(<PyTypeObject*>cls).tp_new(cls, <PyObject*>_NO_ARGS, NULL)
    node._setup(<Formula>f, args, kwargs if kwargs is not None else {}, out)
    return node


cdef object _forward_hook = None     # set while a forward-AD dual level is active


def set_forward_hook(hook):
    """tensorlib.autograd.forward_ad installs hook(op, out, args, kwargs) while a dual level
    is active: every recorded op then also pushes its inputs' tangents forward. Dual tensors
    take the recording path, so eager code without a dual level pays one pointer test."""
    global _forward_hook
    _forward_hook = hook


cpdef object record(str op, object out, tuple args, object kwargs):
    """Attach a grad_fn for `op` to `out` (a tensor or a tuple of tensors)."""
    cdef OpNode node = make_node(op, args, kwargs, out)
    cdef TensorImpl o
    if isinstance(out, TensorImpl):
        o = <TensorImpl>out
        if o._dtype.category >= 2:              # floating or complex
            o._requires_grad = True
            o._grad_fn = node
            o._output_nr = 0
            if o._base is not None:
                note_view(o, args, True)
    else:
        for i, x in enumerate(out):
            o = <TensorImpl>x
            if o._dtype.category >= 2:
                o._requires_grad = True
                o._grad_fn = node
                o._output_nr = i
                if o._base is not None:
                    note_view(o, args, True)
    if _forward_hook is not None:
        _forward_hook(op, out, args, kwargs)
    return out


# ---- the engine: run_backward and its graph walks (autograd_engine.pxi) ---------------------
include "autograd_engine.pxi"
