"""Differentiating batched tensors. The tape records the physical ops, so a batched
tensor's autograd state is its physical value's; `grad` differentiates the physical
outputs with respect to the physical inputs. Samples never mix in a physical op, so this
gives each sample's gradient, provided every input is batched at every active level: the
transforms enter an unbatched input inside vmap as a (stride-0) expanded one, as functorch
lifts it to the batch, so its gradient is per sample too."""
import math

import tensorlib
from tensorlib.func._batching._batched import (BatchedTensor, active_levels, batch_size,
                                               batched_levels, contains_batched,
                                               ensure_levels, innermost, make, rewrap_like,
                                               to_plain)
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
    plain_out = [to_plain(o, levels) for o in outputs]
    plain_ct = [to_plain(c, levels) for c in grad_outputs]
    physical_in = [innermost(x) for x in inputs]
    if all(sorted(batched_levels(x)) == levels for x in inputs):
        res = tensorlib.autograd.grad(plain_out, physical_in, plain_ct, **kwargs)
        return tuple(None if g is None else rewrap_like(g, x) for g, x in zip(res, inputs))
    return _per_sample_grad(plain_out, plain_ct, inputs, levels, kwargs)


def _per_sample_grad(plain_out, plain_ct, inputs, levels, kwargs):
    """Some input is not batched where the outputs or cotangents are (a vjp_fn made outside
    vmap, mapped over cotangents): one backward pass per sample, each sample's gradient
    read from its input's slice."""
    shape = tuple(batch_size(level) for level in levels)
    create = kwargs.get("create_graph", False)
    per_input = [[] for _ in inputs]
    for flat in range(math.prod(shape)):
        idx = _unravel(flat, shape)
        res = tensorlib.autograd.grad([o[idx] for o in plain_out], [innermost(x) for x in inputs],
                                      [c[idx] for c in plain_ct], retain_graph=True,
                                      create_graph=create, allow_unused=True)
        for k, (g, x) in enumerate(zip(res, inputs)):
            per_input[k].append(None if g is None else to_plain(rewrap_like(g, x), levels)[idx])
    out = []
    for samples, x in zip(per_input, inputs):
        if samples and all(g is None for g in samples):
            if not kwargs.get("allow_unused"):
                raise RuntimeError("One of the differentiated Tensors appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is "
                                   "the desired behavior.")
            out.append(None)
            continue
        zero = tensorlib.zeros(tuple(x.shape), dtype=x.dtype, device=x.device)
        stacked = tensorlib.stack([zero if g is None else g for g in samples]) if samples \
            else zero.unsqueeze(0)[:0]
        out.append(_from_plain(stacked.reshape(shape + tuple(x.shape)), levels))
    return tuple(out)


def _unravel(flat, shape):
    idx = []
    for size in reversed(shape):
        idx.append(flat % size)
        flat //= size
    return tuple(reversed(idx))


def _from_plain(plain, levels):
    for level in levels:
        plain = make(plain, 0, level)
    return plain


def _as_tuple(x):
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def autograd_grad(func, level, args, kwargs):
    """tensorlib.autograd.grad called on batched tensors (PyTorch dispatches it too)."""
    names = ("outputs", "inputs", "grad_outputs")
    given = dict(zip(names, args), **kwargs)
    outputs, inputs = _as_tuple(given.pop("outputs")), _as_tuple(given.pop("inputs"))
    cts = list(_as_tuple(given.pop("grad_outputs", None)))
    cts += [None] * (len(outputs) - len(cts))
    cts = [tensorlib.ones_like(o) if c is None else c for o, c in zip(outputs, cts)]
    return grad(outputs, inputs, cts, **given)


@register("requires_grad", "grad_fn", "is_leaf")
def autograd_state(func, level, args, kwargs):
    from tensorlib.func._batching._dispatch import op_name
    return getattr(args[0]._bt_value, op_name(func))


@register("grad")
def grad_property(func, level, args, kwargs):
    if getattr(func, "__module__", None) == "tensorlib.autograd":
        return autograd_grad(func, level, args, kwargs)
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
