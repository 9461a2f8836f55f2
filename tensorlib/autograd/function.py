"""autograd.Function: user-defined ops with static forward/backward and a ctx that is the
graph node (ctx.save_for_backward, saved_tensors, needs_input_grad, mark_non_differentiable,
mark_dirty, set_materialize_grads)."""
import functools

from tensorlib._C import grad_mode as _state
from tensorlib._C import views as _views
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.autograd.graph import Node, SavedTensor, edge


class FunctionCtx(Node):
    """The node of one Function call; `backward` calls the Function's static backward."""

    def __init__(self, fn_cls):
        super().__init__()
        self._fn_cls = fn_cls
        self._saved = None
        self._non_differentiable = set()
        self._dirty = set()
        self._materialize = True
        self.needs_input_grad = ()
        self._input_positions = []
        self._output_metas = []
        self._input_metas = []
        self._name = None       # an internal Function's node may take PyTorch's op name

    def name(self):
        return self._name or f"{self._fn_cls.__name__}Backward"

    def save_for_backward(self, *tensors):
        self._saved = [SavedTensor(t) if isinstance(t, TensorImpl) else t
                       for t in tensors]

    @property
    def saved_tensors(self):
        """The tensors given to save_for_backward, checked against in-place writes."""
        if self._saved is None:
            return ()
        return tuple(s.unpack(self) if isinstance(s, SavedTensor) else s for s in self._saved)

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        self._dirty.update(id(t) for t in tensors)

    def set_materialize_grads(self, value):
        self._materialize = bool(value)

    def release(self):
        super().release()
        for s in self._saved or ():
            if isinstance(s, SavedTensor):
                s.tensor = None

    def backward(self, *grad_outputs):
        # the engine passes gradients only up to the last output that received one; the
        # user's backward takes one per forward output
        metas = self._output_metas
        grad_outputs = tuple(grad_outputs[:len(metas)]) + \
            (None,) * (len(metas) - len(grad_outputs))
        if self._materialize:
            grad_outputs = tuple(g if g is not None or meta is None else _zeros_like(meta)
                                 for g, meta in zip(grad_outputs, metas))
        grads = self._fn_cls.backward(self, *grad_outputs)
        if not isinstance(grads, tuple):
            grads = (grads,)
        n = len(self.needs_input_grad)
        if len(grads) > n and all(g is None for g in grads[n:]):
            grads = grads[:n]               # extra trailing Nones are allowed, as PyTorch's
        if len(grads) != n:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                               f"gradients (expected {len(self.needs_input_grad)}, got "
                               f"{len(grads)})")
        positions = set(self._input_positions)
        for i, g in enumerate(grads):
            if g is not None and i not in positions:
                raise RuntimeError(f"function {self.name()} returned a gradient different "
                                   f"than None at position {i + 1}, but the corresponding "
                                   f"forward input was not a Variable")
        return tuple(self._validate(i, grads[i], meta)
                     for i, meta in zip(self._input_positions, self._input_metas))

    def _validate(self, i, g, meta):
        """A user-returned gradient, checked against its input as PyTorch does: summed back
        when the input's shape broadcasts to it, cast to the input's dtype."""
        if g is None:
            return None
        if not isinstance(g, TensorImpl):
            raise TypeError(f"function {self.name()} returned a non-Tensor gradient at index "
                            f"{i} ({type(g).__name__})")
        if g._device != meta.device:
            raise RuntimeError(f"Function {self.name()} returned an invalid gradient at index "
                               f"{i} - expected device {meta.device} but got {g._device}")
        if g._sizes != meta.shape:
            from tensorlib._C.broadcast import broadcast_shapes
            try:
                expandable = broadcast_shapes(meta.shape, g._sizes) == g._sizes
            except RuntimeError:
                expandable = False
            if not expandable:
                raise RuntimeError(f"Function {self.name()} returned an invalid gradient at "
                                   f"index {i} - got {list(g._sizes)} but expected shape "
                                   f"compatible with {list(meta.shape)}")
            g = g.sum_to_size(meta.shape)
        if g._dtype is not meta.dtype:
            g = g.to(meta.dtype)
        return g


def _zeros_like(meta):
    import tensorlib
    return tensorlib.zeros(meta.shape, dtype=meta.dtype, device=meta.device)


def _alias_returned_inputs(outputs, args, ctx, recording):
    """An input that forward returns unchanged (not marked dirty) comes back as a new view of
    itself, as in PyTorch: the Function's node is attached to that view, while the input
    keeps its own history (so `out is input` is False, and gradients reach the input
    through the Function's backward). Not recording, it comes back as a plain alias (no
    view, no grad), as PyTorch's. A mark_non_differentiable on the input holds for its
    view."""
    single = not isinstance(outputs, tuple)
    aliased = []
    for o in (outputs,) if single else outputs:
        if (isinstance(o, TensorImpl) and id(o) not in ctx._dirty
                and any(o is a for a in args)):
            # the view primitive, not the op: forward runs under no_grad, and the op would
            # make a no-grad view (views.note_view)
            view = _views.view(o, o._sizes) if recording else o.detach()
            if id(o) in ctx._non_differentiable:
                ctx._non_differentiable.add(id(view))
            o = view
        aliased.append(o)
    return aliased[0] if single else tuple(aliased)


class Function:
    """Subclass with @staticmethod forward(ctx, *args) and backward(ctx, *grads), then call
    `MyFunction.apply(*args)`."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        from tensorlib.autograd.graph import TensorMeta
        ctx = FunctionCtx(cls)
        ctx.needs_input_grad = tuple(isinstance(a, TensorImpl) and a._requires_grad
                                     for a in args)
        recording = _state.is_grad_enabled() and any(ctx.needs_input_grad)
        prev = _state.set_grad_enabled(False)
        try:
            outputs = cls.forward(ctx, *args, **kwargs)
            outputs = _alias_returned_inputs(outputs, args, ctx, recording)
        finally:
            _state.set_grad_enabled(prev)
        if not recording:
            return outputs
        ctx.next_functions = tuple(edge(a) for a in args if isinstance(a, TensorImpl))
        ctx._input_positions = [i for i, a in enumerate(args) if isinstance(a, TensorImpl)]
        ctx._input_metas = [TensorMeta(a) for a in args if isinstance(a, TensorImpl)]
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        ctx._output_metas = [TensorMeta(o) if isinstance(o, TensorImpl) else None
                             for o in outs]
        for i, o in enumerate(outs):
            if not isinstance(o, TensorImpl):
                continue
            if id(o) in ctx._non_differentiable or o._dtype.category < 2:
                continue
            o._requires_grad = True
            o._grad_fn = ctx
            o._output_nr = i
            for saved in ctx._saved or ():    # a saved output: no tensor <-> ctx cycle
                if isinstance(saved, SavedTensor) and saved.tensor is o:
                    saved.mark_output(i)
        return outputs


class _DelayedError(Function):
    """What a @once_differentiable backward returns under create_graph: differentiating
    through it again raises, as PyTorch's DelayedError node does."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


def once_differentiable(backward):
    """Decorates a Function's backward that is not itself differentiable: it runs with
    recording off, and when the graph is being built (create_graph=True) its gradients
    refuse a second differentiation instead of silently giving wrong ones."""
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        prev = _state.set_grad_enabled(False)
        try:
            outputs = backward(ctx, *grads)
        finally:
            _state.set_grad_enabled(prev)
        if not (prev and any(isinstance(g, TensorImpl) and g._requires_grad for g in grads)):
            return outputs
        single = not isinstance(outputs, tuple)
        marked = tuple(_DelayedError.apply(o.requires_grad_(True))
                       if isinstance(o, TensorImpl) and o._dtype.category >= 2 else o
                       for o in ((outputs,) if single else outputs))
        return marked[0] if single else marked
    return wrapper
