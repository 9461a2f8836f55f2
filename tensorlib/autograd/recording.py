"""Recording ops into the graph. Every differentiable op has a Formula (its backward, written
in tensorlib ops so it runs on any backend and is itself differentiable); recording makes an
OpNode holding the formula, the edges of the op's tensor inputs and what the formula saved."""
from tensorlib._C import grad_mode as _state
from tensorlib._C.autograd import (FORMULAS, Context, Formula, OpNode, formula,  # noqa: F401
                                   make_node, no_grad_view_error, node_class, record,
                                   set_view_refresher)


dual_level_active = False      # set by forward_ad while a dual level is entered
inplace_tangent = None         # forward_ad's in-place tangent rule, set by forward_ad at import


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
    if dual_level_active:
        inplace_tangent(self, result)
    if self._base is not None:
        rebase_view(self, result)
    elif result._grad_fn is not None:
        self._requires_grad = True
        self._grad_fn = result._grad_fn
        self._output_nr = result._output_nr
        _new_base_history(self)
    return self


def _new_base_history(base):
    """base's history changed in place: the views whose history is older than its new
    grad_fn are stale (_C/autograd.stale_view)."""
    base._history_sequence_nr = base._grad_fn._sequence_nr


def check_inplace_allowed(t):
    """RuntimeError for in-place writes PyTorch forbids: into a view made under no_grad (or
    a view of one), into a leaf that requires grad, or into a view of one."""
    if t._no_grad_view:
        raise RuntimeError(no_grad_view_error(t, "is being"))
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
    from tensorlib._C.tensor_impl import is_contiguous
    base = view._base
    if not (result._requires_grad or base._requires_grad):
        return
    if not is_contiguous(base) or base._offset != 0:
        raise NotImplementedError("in-place writes through a view are differentiable only "
                                  "when the view's base is contiguous; use out-of-place ops")
    real_view = _is_real_view(view, base)
    if view._dtype.itemsize != base._dtype.itemsize and not real_view:
        raise NotImplementedError(f"in-place writes into a {view._dtype} view of a "
                                  f"{base._dtype} tensor are not differentiable")
    node = make_node("copy_slices_real" if real_view else "copy_slices",
                     (base, result, _view_positions(view, base, real_view)), {}, base)
    base._requires_grad = True
    base._grad_fn = node
    base._output_nr = 0
    _new_base_history(base)
    refresh_view(view)


def _is_real_view(view, base):
    """view reads a complex base's floats (x.real, x.imag, view_as_real(x))."""
    return base._dtype.is_complex and view._dtype.itemsize * 2 == base._dtype.itemsize


def _view_positions(view, base, real_view):
    """Where each element of view sits in its (contiguous) base, counted in the view's
    elements: for a real view, in the base's (re, im) floats."""
    import tensorlib
    prev = _state.set_grad_enabled(False)
    try:
        n = base.numel() * (2 if real_view else 1)
        return tensorlib.arange(n, device=base.device).as_strided(
            view._sizes, view._strides, view._offset)
    finally:
        _state.set_grad_enabled(prev)


def refresh_view(view):
    """view's history made again as an as_strided view of its base's current history: after
    a write through another view gave the base new history (PyTorch regenerates a view's
    grad_fn when its base's version moved on), or after a write through view itself. A view
    of a complex base's floats (x.real, view_as_real(x)) reads the base as floats."""
    base = view._base
    if _is_real_view(view, base):
        view._grad_fn = make_node("real_view_of_complex",
                                  (base, _view_positions(view, base, True)), {}, view)
    elif view._dtype.itemsize != base._dtype.itemsize:
        return
    else:
        args = (base, view._sizes, view._strides, view._offset)
        view._grad_fn = make_node("as_strided", args, {}, view)
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
        node = make_node(op, tuple(sources), {}, dst)
        dst._requires_grad = True
        dst._grad_fn = node
        dst._output_nr = 0
        _new_base_history(dst)
    return dst


set_view_refresher(refresh_view)
