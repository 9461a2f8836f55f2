"""Differentiating batched tensors. The tape records the physical ops, so a batched
tensor's autograd state is its physical value's; `grad` differentiates the physical
outputs with respect to the physical inputs. Samples never mix in a physical op, so this
gives each sample's gradient, provided every input is batched at every active level: the
transforms enter an unbatched input inside vmap as a (stride-0) expanded one, as functorch
lifts it to the batch, so its gradient is per sample too."""
import tensorlib
from tensorlib.func._batching._batched import (BatchedTensor, active_levels, batched_levels,
                                               contains_batched, ensure_levels, innermost,
                                               make, rewrap_like, to_plain)
from tensorlib.func._batching._dispatch import register


def enter(t):
    """The tensor a transform differentiates with respect to (batched at every level)."""
    fresh = not t.requires_grad
    t = t.detach().requires_grad_(True) if fresh else t.view_as(t)
    levels = active_levels()
    if not levels:
        return t
    leaf = innermost(t)
    t = ensure_levels(t, levels)
    if fresh and innermost(t) is not leaf:
        t._bt_own_leaf = leaf            # expanded from this leaf, which is the transform's
    return t


def fresh_leaf(t):
    """A zero leaf requiring grad, batched at every level (the double-backward trick's u)."""
    levels = active_levels()
    t = tensorlib.zeros_like(t)
    if levels:
        t = ensure_levels(t, levels).detach()
    return t.requires_grad_(True)


def physical(tensors):
    """The tensors the tape knows for these transform inputs (their innermost values, and
    the leaves `enter` expanded), for walking the graph."""
    out = []
    for t in tensors:
        out.append(innermost(t))
        if getattr(t, "_bt_own_leaf", None) is not None:
            out.append(t._bt_own_leaf)
    return out


def grad(outputs, inputs, grad_outputs, **kwargs):
    """autograd.grad for outputs, inputs and cotangents that may be batched."""
    if not contains_batched((outputs, inputs, grad_outputs)):
        return tensorlib.autograd.grad(outputs, inputs, grad_outputs, **kwargs)
    levels = active_levels()
    for x in inputs:
        if sorted(batched_levels(x)) != levels:
            raise RuntimeError("vmap: differentiating with respect to a tensor that is not "
                               "batched at every vmap level; enter it through a func "
                               "transform (grad, vjp, jacrev) inside the vmap instead")
    plain_out = [to_plain(o, levels) for o in outputs]
    plain_ct = [to_plain(c, levels) for c in grad_outputs]
    res = tensorlib.autograd.grad(plain_out, [innermost(x) for x in inputs], plain_ct,
                                  **kwargs)
    return [None if g is None else rewrap_like(g, x) for g, x in zip(res, inputs)]


@register("requires_grad", "grad_fn", "is_leaf")
def autograd_state(func, level, args, kwargs):
    from tensorlib.func._batching._dispatch import op_name
    return getattr(args[0]._bt_value, op_name(func))


@register("grad")
def grad_property(func, level, args, kwargs):
    x = args[0]
    g = x._bt_value.grad
    return None if g is None else make(g, x._bt_bdim, level)


@register("requires_grad_")
def requires_grad_(func, level, args, kwargs):
    x = args[0]
    if type(x) is not BatchedTensor or x._bt_level != level:
        return NotImplemented
    x._bt_value.requires_grad_(*args[1:], **kwargs)
    return x


@register("retain_grad")
def retain_grad(func, level, args, kwargs):
    args[0]._bt_value.retain_grad()


@register("data")
def data(func, level, args, kwargs):
    x = args[0]
    return make(x._bt_value.data, x._bt_bdim, level)
