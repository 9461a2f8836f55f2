"""The autograd graph: nodes (grad_fn) with next_functions, saved tensors checked against the
version counter, and the recording of ops into the graph.

A node's `next_functions[i]` is the (node, output_nr) edge of its i-th differentiable input:
the input's grad_fn, or for a leaf that requires grad its AccumulateGrad, or (None, 0)."""
import itertools
import traceback

from tensorlib._C import grad_mode as _state
from tensorlib._C.tensor_impl import TensorImpl, is_contiguous
from tensorlib.autograd import anomaly_mode

_sequence = itertools.count()


class TensorMeta:
    """What a backward formula may know of an input it did not save: shape, dtype, device."""
    __slots__ = ("shape", "dtype", "device", "strides", "offset")

    def __init__(self, t):
        self.shape = t._sizes
        self.dtype = t._dtype
        self.device = t._device
        self.strides = t._strides
        self.offset = t._offset

    def dim(self):
        return len(self.shape)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n


class SavedTensor:
    """A tensor kept for backward, with the version it had; unpacking after an in-place write
    or after the graph was freed raises RuntimeError saying which.

    An output of the owner node (`output_nr` given, or `mark_output` called once its grad_fn is
    set) is kept as a history-free alias, so that the tensor -> grad_fn -> saved tensor cycle
    does not keep outputs alive until the garbage collector runs; unpacking gives back an
    alias whose grad_fn is the owner (so create_graph can differentiate through it)."""
    __slots__ = ("tensor", "version", "owner", "output_nr")

    def __init__(self, t, owner, output_nr=None):
        self.version = t._storage.version
        self.owner = owner
        self.output_nr = None
        self.tensor = t
        if output_nr is not None:
            self.mark_output(output_nr)

    def mark_output(self, output_nr):
        t = self.tensor
        if t is None or self.output_nr is not None:
            return
        alias = t.detach()
        alias._requires_grad = False
        self.tensor = alias
        self.output_nr = output_nr

    def unpack(self):
        t = self.tensor
        if t is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward.")
        if t._storage.version != self.version:
            if self.output_nr is not None:
                made_by = f", which is output {self.output_nr} of {self.owner.name()}"
            elif t._grad_fn is not None:
                made_by = f", which is output {t._output_nr} of {t._grad_fn.name()}"
            else:
                made_by = ""
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [tensorlib.{t._dtype.scalar_name}Tensor "
                f"{list(t._sizes)}]{made_by}, is at version {t._storage.version}; expected "
                f"version {self.version} instead. The op that saved it: {self.owner.name()}. "
                f"Hint: enable anomaly detection to find the forward op that made it.")
        if self.output_nr is not None:
            out = t.detach()
            out._requires_grad = True
            out._grad_fn = self.owner
            out._output_nr = self.output_nr
            return out
        return t


class Node:
    """A grad_fn. Subclasses implement `backward(*grad_outputs) -> grads per input`."""

    def __init__(self):
        self.next_functions = ()
        self._sequence_nr = next(_sequence)
        self._pre_hooks = {}          # output_nr -> [tensor hooks], run on incoming grads
        self._hooks = []              # fn(grad_inputs, grad_outputs), run after backward
        self._released = False
        self._forward_trace = (traceback.format_stack()[:-3]
                               if anomaly_mode.is_enabled() else None)

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) after this node's backward; may return new grads."""
        from tensorlib.utils.hooks import RemovableHandle
        self._hooks.append(fn)
        return RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) before this node's backward; may return new grad_outputs."""
        from tensorlib.utils.hooks import RemovableHandle
        hooks = self._pre_hooks.setdefault(None, [])
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def release(self):
        """Free saved tensors (called after backward unless retain_graph)."""
        self._released = True

    def apply(self, *grad_outputs):
        return self.backward(*grad_outputs)


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: adds incoming gradients into `variable.grad`."""

    def __init__(self, variable):
        super().__init__()
        self.variable = variable
        self._sequence_nr = -1        # leaves run last

    def backward(self, grad):
        return ()

    def run_tensor_hooks(self, grad):
        """The leaf's register_hook hooks, in order; each may replace the gradient."""
        for hook in list(self.variable._hooks or ()):
            new = hook(grad)
            if new is not None:
                grad = new
        return grad

    def accumulate(self, grad, create_graph):
        """Run the leaf's tensor hooks, add into .grad, run post-accumulate hooks. Without
        create_graph the stored gradient is a fresh tensor: the incoming one may be shared
        (a + b sends one tensor to both), and optimizers write .grad in place."""
        v = self.variable
        grad = self.run_tensor_hooks(grad)
        if create_graph:
            v._grad = grad if v._grad is None else v._grad + grad
        else:
            prev = _state.set_grad_enabled(False)
            try:
                old = v._grad
                if old is None:
                    v._grad = grad.detach().clone()
                elif (not old._requires_grad and old._sizes == grad._sizes
                      and old._dtype is grad._dtype and is_contiguous(old)):
                    old.add_(grad)    # in place, as PyTorch: references to .grad see it
                else:
                    v._grad = old + grad
            finally:
                _state.set_grad_enabled(prev)
        for hook in v.__dict__.get("_post_accumulate_hooks", ()):
            hook(v)


def accumulator(t):
    acc = t.__dict__.get("_grad_accumulator")
    if acc is None:
        acc = AccumulateGrad(t)
        t.__dict__["_grad_accumulator"] = acc
    return acc


def edge(x):
    """The (node, output_nr) that gradients for x flow into."""
    if not isinstance(x, TensorImpl) or not x._requires_grad:
        return (None, 0)
    if x._grad_fn is not None:
        return (x._grad_fn, x._output_nr)
    return (accumulator(x), 0)
