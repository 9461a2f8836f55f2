"""Recording ops into the graph. Every differentiable op has a Formula (its backward, written
in tensorlib ops so it runs on any backend and is itself differentiable); recording makes an
OpNode holding the formula, the edges of the op's tensor inputs and what the formula saved."""
from tensorlib._C import grad_mode as _state
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.autograd.graph import Node, SavedTensor, TensorMeta, edge

FORMULAS = {}
_NODE_CLASSES = {}
_CLASS_NAMES = {"copy_slices": "CopySlices"}      # PyTorch's names where they differ


class Formula:
    """backward(ctx, *grad_outputs) -> one grad per positional input (a list of grads for a
    list-of-tensors input). `save` names the positional inputs the backward reads (by index);
    `save_output` keeps the result; everything else is kept as shape/dtype/device only."""

    def __init__(self, name, backward, save=(), save_output=False):
        self.name = name
        self.backward = backward
        self.save = frozenset(save)
        self.save_output = save_output


def formula(*names, save=(), save_output=False):
    """Register the backward of one or more ops."""
    def register(fn):
        for name in names:
            FORMULAS[name] = Formula(name, fn, save, save_output)
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


class Context:
    """What a backward formula sees: args (saved tensors unpacked, others as TensorMeta),
    kwargs, the saved output, and which inputs need a gradient."""
    __slots__ = ("args", "kwargs", "out", "needs_input_grad")


class OpNode(Node):
    def __init__(self, formula, args, kwargs, out):
        super().__init__()
        self._formula = formula
        self._kwargs = kwargs
        held, flat_edges, metas, needs = [], [], [], []
        self._counts = []             # per positional arg: 1 tensor, 0 none, -n a list of n
        for i, a in enumerate(args):
            if isinstance(a, TensorImpl):
                _check_not_inference(a)
                flat_edges.append(edge(a))
                metas.append(TensorMeta(a))
                held.append(SavedTensor(a, self) if i in formula.save else metas[-1])
                needs.append(flat_edges[-1][0] is not None)
                self._counts.append(1)
            elif isinstance(a, (list, tuple)) and a and all(isinstance(t, TensorImpl)
                                                            for t in a):
                for t in a:
                    _check_not_inference(t)
                flat_edges.extend(edge(t) for t in a)
                metas.extend(TensorMeta(t) for t in a)
                held.append([SavedTensor(t, self) if i in formula.save else TensorMeta(t)
                             for t in a])
                needs.append(any(e[0] is not None for e in flat_edges[-len(a):]))
                self._counts.append(-len(a))
            else:
                held.append(a)
                needs.append(False)
                self._counts.append(0)
        self.next_functions = tuple(flat_edges)
        self._held = held
        self._metas = metas
        self._needs = tuple(needs)
        self._saved_out = None
        if formula.save_output:
            outs = out if isinstance(out, tuple) else (out,)
            self._saved_out = [SavedTensor(o, self) for o in outs]

    def release(self):
        super().release()
        for h in self._held:
            for s in (h if isinstance(h, list) else (h,)):
                if isinstance(s, SavedTensor):
                    s.tensor = None
        for s in self._saved_out or ():
            s.tensor = None

    def _context(self):
        ctx = Context()
        ctx.args = tuple(_unpack(h) for h in self._held)
        ctx.kwargs = self._kwargs
        ctx.needs_input_grad = self._needs
        if self._saved_out is not None:
            outs = [s.unpack() for s in self._saved_out]
            ctx.out = outs[0] if len(outs) == 1 else tuple(outs)
        return ctx

    def backward(self, *grad_outputs):
        grads = self._formula.backward(self._context(), *grad_outputs)
        if not isinstance(grads, tuple):
            grads = (grads,)
        flat = []
        for count, g in zip(self._counts, grads):
            if count == 1:
                flat.append(g)
            elif count < 0:
                flat.extend(g if g is not None else [None] * -count)
        return tuple(_fit(g, meta) if g is not None else None
                     for g, meta in zip(flat, self._metas))


def _unpack(h):
    if isinstance(h, SavedTensor):
        return h.unpack()
    if isinstance(h, list):
        return [_unpack(x) for x in h]
    return h


def _fit(grad, meta):
    """Undo broadcasting (sum over expanded dims) and promotion (cast back) so a gradient has
    its input's shape and dtype."""
    if grad._sizes != meta.shape:
        grad = grad.sum_to_size(meta.shape)
    if grad._dtype is not meta.dtype:
        grad = grad.to(meta.dtype)
    return grad


def _check_not_inference(t):
    if t._is_inference:
        raise RuntimeError("Inference tensors cannot be saved for backward. To work around you "
                           "can make a clone to get a normal tensor and use it in autograd.")


def record(op, out, args, kwargs):
    """Attach a grad_fn for `op` to `out` (a tensor or a tuple of tensors)."""
    f = FORMULAS.get(op)
    if f is None:
        raise RuntimeError(f"the derivative for '{op}' is not implemented")
    node = node_class(op)(f, args, kwargs or {}, out)
    outs = out if isinstance(out, tuple) else (out,)
    for i, o in enumerate(outs):
        if o._dtype.is_floating_point:
            o._requires_grad = True
            o._grad_fn = node
            o._output_nr = i
    return out


def record_inplace(op, kind, self, other):
    """`self.op_(other)` of an elementwise primitive while recording."""
    from tensorlib._C import pointwise
    formula_ = FORMULAS.get(op)
    if other is None:
        def compute(source):
            return pointwise.unary(op, source, kind)
    else:
        def compute(source):
            return pointwise.binary(op, source, other, kind)
    return apply_inplace(self, compute, needs_old_self=formula_ is None or 0 in formula_.save)


def apply_inplace(self, compute, needs_old_self=True):
    """An in-place op while recording: `compute(source)` (the out-of-place op, recorded) runs
    on a clone of self when its backward needs self's old value (so saved values stay
    intact), the result is written into self, and self's history becomes the result's (or,
    for a view, its base's history is rebased)."""
    check_inplace_allowed(self)
    result = compute(self.clone() if needs_old_self else self)
    if result._sizes != self._sizes:
        raise RuntimeError(f"output with shape {list(self._sizes)} doesn't match the broadcast "
                           f"shape {list(result._sizes)}")
    prev = _state.set_grad_enabled(False)
    try:
        self.copy_(result)
    finally:
        _state.set_grad_enabled(prev)
    if self._base is not None:
        rebase_view(self, result)
    elif result._grad_fn is not None:
        self._requires_grad = True
        self._grad_fn = result._grad_fn
        self._output_nr = result._output_nr
    return self


def check_inplace_allowed(t):
    """RuntimeError for in-place writes PyTorch forbids: into a leaf that requires grad, or
    into a view of one."""
    if t._requires_grad and t._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    base = t._base
    if base is not None and base._requires_grad and base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


def rebase_view(view, result):
    """An in-place write into a view changes its base: the base's new history is a
    CopySlices node (the untouched elements come from the old base, the view's region from
    `result`), and the view becomes a fresh view of that base (PyTorch's rebase_history).
    Views are tracked against their root, which tensorlib allocates contiguous."""
    import tensorlib
    from tensorlib._C.tensor_impl import is_contiguous
    base = view._base
    if not (result._requires_grad or base._requires_grad):
        return
    if not is_contiguous(base) or base._offset != 0:
        raise NotImplementedError("in-place writes through a view are differentiable only "
                                  "when the view's base is contiguous; use out-of-place ops")
    prev = _state.set_grad_enabled(False)
    try:
        positions = tensorlib.arange(base.numel(), device=base.device).as_strided(
            view._sizes, view._strides, view._offset)
    finally:
        _state.set_grad_enabled(prev)
    node = node_class("copy_slices")(FORMULAS["copy_slices"], (base, result, positions), {},
                                     base)
    base._requires_grad = True
    base._grad_fn = node
    base._output_nr = 0
    args = (base, view._sizes, view._strides, view._offset)
    view._grad_fn = node_class("as_strided")(FORMULAS["as_strided"], args, {}, view)
    view._requires_grad = True
    view._output_nr = 0


def _overwrite_values(op, dst, sources):
    """What an overwrite put into dst, as a tensor with history: the source of copy_ (the
    node sums broadcasting back), or a constant for fill_."""
    if sources:
        return sources[0]
    import tensorlib
    return tensorlib.zeros((), dtype=dst.dtype, device=dst.device)


def record_overwrite(op, dst, write, sources):
    """An in-place op that replaces all of dst's values (copy_, fill_): dst's old history no
    longer matters; its new grad_fn leads to `sources` only."""
    check_inplace_allowed(dst)
    prev = _state.set_grad_enabled(False)
    try:
        write()
    finally:
        _state.set_grad_enabled(prev)
    if dst._base is not None:
        rebase_view(dst, _overwrite_values(op, dst, sources))
    elif any(s._requires_grad for s in sources) or dst._requires_grad:
        node = node_class(op)(FORMULAS[op], sources, {}, dst)
        dst._requires_grad = True
        dst._grad_fn = node
        dst._output_nr = 0
    return dst
