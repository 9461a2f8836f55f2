"""Tensor hooks: register_hook (may replace the gradient), retain_grad, and hooks that run
after a leaf's .grad was accumulated."""
from tensorlib.autograd.graph import accumulator
from tensorlib.utils.hooks import RemovableHandle


def register_tensor_hook(t, hook):
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t._grad_fn is None:
        if t._hooks is None:
            t._hooks = []
        t._hooks.append(hook)
        accumulator(t)
        return RemovableHandle(t._hooks, hook)
    hooks = t._grad_fn.pre_hooks_for(t._output_nr)
    # retain_grad's store runs after every tensor hook, whenever it was registered (as in
    # PyTorch), so .grad holds the gradient the hooks produced
    at = len(hooks)
    while at > 0 and getattr(hooks[at - 1], "_retains_grad", False):
        at -= 1
    hooks.insert(at, hook)
    return RemovableHandle(hooks, hook)


def register_post_accumulate_hook(t, hook):
    if t._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                           "tensors")
    hooks = t.__dict__.setdefault("_post_accumulate_hooks", [])
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def retain_grad(t):
    """Keep the gradient of a non-leaf tensor in its .grad (a no-op on leaves)."""
    if not t._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if t._grad_fn is None or t._retains_grad:
        return
    t._retains_grad = True

    def store(grad):
        g = grad.detach()
        t._grad = g.clone() if t._grad is None else t._grad + g
    store._retains_grad = True
    t._grad_fn.pre_hooks_for(t._output_nr).append(store)
