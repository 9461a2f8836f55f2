"""Define-by-run automatic differentiation: every differentiable op records a grad_fn node;
backward() runs the graph in dependency order and accumulates into leaves' .grad."""
from collections.abc import Mapping

from tensorlib import _capture_state
from tensorlib._C import grad_mode as _state
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.autograd import formulas  # noqa: F401 - registers every derivative
from tensorlib.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly
from tensorlib.autograd.engine import run_backward
from tensorlib.autograd.function import Function, FunctionCtx
from tensorlib.autograd.graph import AccumulateGrad, Node, accumulator, edge
from tensorlib.autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                                          is_inference_mode_enabled, no_grad,
                                          set_grad_enabled)
from tensorlib.autograd.recording import record, record_inplace
from tensorlib.autograd.threading_mode import (is_multithreading_enabled,  # noqa: F401
                                               is_view_replay_enabled, kineto_available,
                                               set_multithreading_enabled)
from tensorlib.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from tensorlib.autograd import forward_ad, functional  # noqa: E402,F401
from tensorlib.autograd.variable import Variable  # noqa: E402
from tensorlib.overrides import (handle_torch_function, has_torch_function,  # noqa: E402,F401
                                 is_tensor_like)

_state.set_recorders(record, record_inplace)


def _as_tuple(x):
    """One tensor, or any iterable of them (a generator such as `model.parameters()`)."""
    if x is None:
        return ()
    return (x,) if isinstance(x, TensorImpl) or is_tensor_like(x) else tuple(x)


def _inputs_tuple(inputs, fn_name):
    """`inputs` of grad()/backward(): a tensor, an iterable of tensors, or a dict of them
    (whose values are differentiated; grad() then returns a dict with the same keys)."""
    if type(inputs) is dict:
        inputs = tuple(inputs.values())
    elif isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `{fn_name}()` must be a dict, not "
                        f"{type(inputs).__name__}. Other Mapping types are not supported.")
    else:
        inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError(f"`inputs` argument to `{fn_name}()` cannot be empty.")
    return inputs


def _root_grads(tensors, grad_tensors):
    import tensorlib
    grads = []
    if len(grad_tensors) > len(tensors):
        raise RuntimeError(f"grad_tensors/grad_outputs has {len(grad_tensors)} elements but "
                           f"there are only {len(tensors)} tensors to differentiate")
    for i, (t, g) in enumerate(zip(tensors, grad_tensors
                                   + (None,) * (len(tensors) - len(grad_tensors)))):
        if not isinstance(t, TensorImpl):
            raise TypeError(f"element {i} of tensors is not a Tensor "
                            f"({type(t).__name__})")
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               f"have a grad_fn")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if t._dtype.is_complex:
                raise RuntimeError("grad can be implicitly created only for real scalar "
                                   "outputs")
            g = tensorlib.ones_like(t)
        elif g._sizes != t._sizes:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{tensorlib.Size(g._sizes)} and output[{i}] has a shape of "
                               f"{tensorlib.Size(t._sizes)}.")
        if g._device != t._device:
            raise RuntimeError(f"invalid gradient at index {i} - expected device {t._device} "
                               f"but got {g._device}")
        grads.append(g)
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             inputs=None):
    """Accumulate d(tensors)/d(leaf) into every leaf's .grad (or only `inputs`' .grad)."""
    tensors = _as_tuple(tensors)
    grads = _root_grads(tensors, _as_tuple(grad_tensors))
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        # leaves accumulate through their AccumulateGrad (hooks, post-accumulate hooks);
        # non-leaf inputs get the gradient that reaches them added into their .grad
        inputs = _inputs_tuple(inputs, "backward")
        leaves, others = set(), {}
        for t in inputs:
            if not isinstance(t, TensorImpl) or not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            if t._grad_fn is None:
                leaves.add(accumulator(t))
            else:
                others.setdefault(edge(t), t)
        capture = {k: None for k in others}
        run_backward([edge(t) for t in tensors], grads, retain_graph, create_graph,
                     capture, accumulate=leaves)
        prev = _state.set_grad_enabled(create_graph)
        try:
            for k, t in others.items():
                g = capture[k]
                if g is not None:
                    g = g if create_graph else g.detach()
                    t._grad = g if t._grad is None else t._grad + g
        finally:
            _state.set_grad_enabled(prev)
        return
    if _capture_state.backward is not None and _capture_state.current is None:
        _capture_state.run_backward_compiled(run_backward, [edge(t) for t in tensors], grads,
                                             retain_graph, create_graph)
        return
    run_backward([edge(t) for t in tensors], grads, retain_graph, create_graph)


def _batch_size(outputs, grad_outputs):
    """The common first dim of is_grads_batched's cotangents, each of whose other dims must be
    its output's shape (PyTorch's checks and messages)."""
    sizes = []
    for i, (t, g) in enumerate(zip(outputs, grad_outputs
                                   + (None,) * (len(outputs) - len(grad_outputs)))):
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some "
                             "input, but that input is a Tensor of dimensionality 0 so "
                             "expected in_dim to satisfy 0 <= in_dim < 0.")
        if g.dim() == 0 or tuple(g.shape[1:]) != tuple(t.shape):
            raise RuntimeError(
                f"If `is_grads_batched=True`, we interpret the first dimension of each "
                f"grad_output as the batch dimension. The sizes of the remaining dimensions "
                f"are expected to match the shape of corresponding output, but a mismatch "
                f"was detected: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                f"has a shape of {t.shape}. If you only want some tensors in `grad_output` "
                f"to be considered batched, consider using vmap.")
        sizes.append(g.shape[0])
    if len(set(sizes)) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """grad(is_grads_batched=True): the first dim of every cotangent indexes independent
    vector-Jacobian products, each input's gradients stacked along a new first dim. PyTorch
    vmaps its backward over that dim; here one backward pass per index (the graph is kept
    until the last)."""
    import tensorlib
    n = _batch_size(outputs, grad_outputs)
    per_index = [grad(outputs, inputs, tuple(g[b] for g in grad_outputs),
                      retain_graph=True if b < n - 1 else retain_graph,
                      create_graph=create_graph, allow_unused=True)
                 for b in range(n)]
    result = []
    for i, t in enumerate(inputs):
        samples = [res[i] for res in per_index]
        zero = tensorlib.zeros_like(t)
        if all(g is None for g in samples):
            if materialize_grads:           # PyTorch fills in after its vmap: one unbatched zero
                result.append(zero)
                continue
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not "
                                   f"have been used in the graph. Set allow_unused=True if "
                                   f"this is the desired behavior.")
            result.append(None)
            continue
        samples = [zero if g is None else g for g in samples]
        result.append(tensorlib.stack(samples) if samples
                      else tensorlib.zeros((0,) + tuple(t.shape), dtype=t.dtype,
                                           device=t.device))
    return tuple(result)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of `outputs` with respect to `inputs`, returned (not accumulated).
    only_inputs is PyTorch's deprecated, ignored flag (kept so positions match its)."""
    if not only_inputs:
        import warnings
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                      "True). To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning, stacklevel=2)
    outputs = _as_tuple(outputs)
    keyed = inputs if type(inputs) is dict else None
    inputs = _inputs_tuple(inputs, "grad")
    grad_outputs = _as_tuple(grad_outputs)
    if is_grads_batched:
        result = _grad_batched(outputs, inputs, grad_outputs,
                               create_graph if retain_graph is None else retain_graph,
                               create_graph, allow_unused, materialize_grads)
        return result if keyed is None else dict(zip(keyed.keys(), result))
    relevant = outputs + inputs + grad_outputs
    if has_torch_function(relevant):            # a tensor-like (vmap's BatchedTensor) in them
        result = handle_torch_function(grad, relevant, outputs, inputs,
                                       grad_outputs=grad_outputs, retain_graph=retain_graph,
                                       create_graph=create_graph, allow_unused=allow_unused,
                                       materialize_grads=materialize_grads)
        return result if keyed is None else dict(zip(keyed.keys(), result))
    for t in inputs:
        if not isinstance(t, TensorImpl) or not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _root_grads(outputs, grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    keys = [edge(t) for t in inputs]
    capture = {k: None for k in keys}
    run_backward([edge(t) for t in outputs], grads, retain_graph, create_graph, capture)
    result = []
    for i, (t, k) in enumerate(zip(inputs, keys)):
        g = capture[k]
        if g is None:
            if materialize_grads:
                import tensorlib
                g = tensorlib.zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   f"been used in the graph. Set allow_unused=True if this is "
                                   f"the desired behavior.")
        result.append(g)
    return tuple(result) if keyed is None else dict(zip(keyed.keys(), result))


__all__ = ["backward", "grad", "Function", "FunctionCtx", "Node", "AccumulateGrad",
           "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "detect_anomaly", "set_detect_anomaly", "gradcheck",
           "gradgradcheck", "GradcheckError", "Variable", "is_multithreading_enabled",
           "set_multithreading_enabled", "is_view_replay_enabled", "kineto_available"]
