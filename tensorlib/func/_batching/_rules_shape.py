"""Batch rules of the view and shape ops, indexing with ints/slices/None/Ellipsis (and
unbatched index tensors kept together), and cat/stack: the batch moves to dim 0 and each
per-sample dim d becomes d + 1."""
import math

from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.func._batching._batched import (BatchedTensor, at_level, batch_size, front,
                                               make, pad_to, physical_front)
from tensorlib.func._batching._dispatch import register
from tensorlib.func._batching._rules_reduction import _remap


def _unary(rule):
    """A rule for an op on one batched tensor (its other arguments not batched at all)."""
    def wrapped(func, level, args, kwargs):
        value = front(args[0], level)
        if value is None or "out" in kwargs or any(
                type(a) is BatchedTensor for a in list(args[1:]) + list(kwargs.values())):
            return NotImplemented
        return rule(func, level, args[0], value, args[1:], kwargs)
    return wrapped


def _sizes(rest, kwargs, key="shape"):
    if key in kwargs:
        return tuple(kwargs[key])
    if len(rest) == 1 and not isinstance(rest[0], int):
        return tuple(rest[0])
    return tuple(rest)


def _resolve(shape, numel):
    """shape with its -1 worked out (a batch of 0 cannot infer it)."""
    if -1 not in shape:
        return shape
    known = math.prod(s for s in shape if s != -1)
    return tuple(numel // known if known and s == -1 else s for s in shape)


@register("view", "reshape")
@_unary
def view(func, level, x, value, rest, kwargs):
    if rest and not isinstance(rest[0], (int, tuple, list)):
        return NotImplemented                   # view(dtype)
    shape = _resolve(_sizes(rest, kwargs), x.numel())
    shape = (batch_size(level),) + shape
    if func.__name__ == "view":
        try:
            return make(value.view(shape), 0, level)
        except RuntimeError:                # the batch moved to the front is not viewable
            pass                             # that way: a copy, as functorch's rule gives
    return make(value.reshape(shape), 0, level)


@register("view_as", "reshape_as", "expand_as")
def as_other(func, level, args, kwargs):
    x, other = args[0], args[1]
    value = front(x, level)
    if value is None:
        return NotImplemented
    target = {"view_as": "view", "reshape_as": "reshape", "expand_as": "expand"}[func.__name__]
    return getattr(x, target)(tuple(other.shape))


@register("flatten", "ravel")
@_unary
def flatten(func, level, x, value, rest, kwargs):
    rank, size = x.dim(), batch_size(level)
    if func.__name__ == "ravel" or rank == 0:
        return make(value.reshape(size, x.numel()), 0, level)
    start = kwargs.get("start_dim", rest[0] if rest else 0)
    end = kwargs.get("end_dim", rest[1] if len(rest) > 1 else -1)
    return make(value.flatten(_remap(start, rank), _remap(end, rank)), 0, level)


@register("unflatten")
@_unary
def unflatten(func, level, x, value, rest, kwargs):
    dim = kwargs.get("dim", rest[0] if rest else None)
    sizes = kwargs.get("sizes", rest[1] if len(rest) > 1 else None)
    return make(value.unflatten(_remap(dim, x.dim()), sizes), 0, level)


@register("transpose", "swapaxes", "swapdims")
@_unary
def transpose(func, level, x, value, rest, kwargs):
    dims = list(rest) + [kwargs[k] for k in ("dim0", "dim1", "axis0", "axis1") if k in kwargs]
    if x.dim() == 0:
        return NotImplemented
    return make(value.transpose(_remap(dims[0], x.dim()), _remap(dims[1], x.dim())), 0, level)


@register("t")
@_unary
def t(func, level, x, value, rest, kwargs):
    return x if x.dim() < 2 else make(value.transpose(1, 2), 0, level)


@register("T", "mT")
def t_property(func, level, args, kwargs):
    from tensorlib.func._batching._dispatch import op_name
    x = args[0]
    value, rank = front(x, level), x.dim()
    if value is None or (op_name(func) == "mT" and rank < 2):
        return NotImplemented
    if op_name(func) == "mT":
        return make(value.transpose(-2, -1), 0, level)
    return x if rank < 2 else make(value.permute(0, *range(rank, 0, -1)), 0, level)


@register("permute")
@_unary
def permute(func, level, x, value, rest, kwargs):
    dims = _sizes(rest, kwargs, "dims")
    return make(value.permute(0, *_remap(tuple(dims), x.dim())), 0, level)


@register("movedim", "moveaxis")
@_unary
def movedim(func, level, x, value, rest, kwargs):
    src = kwargs.get("source", rest[0] if rest else None)
    dst = kwargs.get("destination", rest[1] if len(rest) > 1 else None)
    return make(value.movedim(_remap(src, x.dim()), _remap(dst, x.dim())), 0, level)


@register("unsqueeze")
@_unary
def unsqueeze(func, level, x, value, rest, kwargs):
    dim = kwargs.get("dim", rest[0] if rest else None)
    return make(value.unsqueeze(_remap(dim, x.dim() + 1)), 0, level)


@register("squeeze")
@_unary
def squeeze(func, level, x, value, rest, kwargs):
    dim = kwargs.get("dim", rest[0] if rest else None)
    shape = tuple(x.shape)
    if dim is None:
        dims = [i for i, s in enumerate(shape) if s == 1]
    elif x.dim() == 0:
        return x
    else:
        dims = [d % x.dim() for d in (dim if isinstance(dim, (tuple, list)) else (dim,))]
        dims = [d for d in dims if shape[d] == 1]
    for d in sorted(dims, reverse=True):
        value = value.squeeze(d + 1)
    return make(value, 0, level)


@register("expand")
@_unary
def expand(func, level, x, value, rest, kwargs):
    sizes = _sizes(rest, kwargs, "size")
    if len(sizes) < x.dim():
        return NotImplemented
    value = pad_to(value, len(sizes) + 1)
    return make(value.expand((batch_size(level),) + sizes), 0, level)


@register("repeat")
@_unary
def repeat(func, level, x, value, rest, kwargs):
    sizes = _sizes(rest, kwargs, "repeats")
    if len(sizes) < x.dim():
        return NotImplemented
    return make(pad_to(value, len(sizes) + 1).repeat(1, *sizes), 0, level)


def _dim_index_rule(position, name="dim", default=None, outputs_many=False):
    """Ops whose argument at `position` (of the rest) is one dim: select, narrow, split..."""
    @_unary
    def rule(func, level, x, value, rest, kwargs):
        rest, kwargs = list(rest), dict(kwargs)
        if name in kwargs:
            kwargs[name] = _remap(kwargs[name], x.dim())
        elif len(rest) > position:
            rest[position] = _remap(rest[position], x.dim())
        elif default is not None:
            kwargs[name] = _remap(default, x.dim())
        else:
            return NotImplemented
        if x.dim() == 0:
            return NotImplemented
        out = getattr(value, func.__name__)(*rest, **kwargs)
        if outputs_many:
            return tuple(make(o, 0, level) for o in out)
        return make(out, 0, level)
    return rule


register("select")(_dim_index_rule(0))
register("narrow")(_dim_index_rule(0))
register("index_select")(_dim_index_rule(0))
register("unfold")(_dim_index_rule(0, "dimension"))
register("unbind")(_dim_index_rule(0, default=0, outputs_many=True))
register("split", "chunk", "tensor_split")(_dim_index_rule(1, default=0, outputs_many=True))


@register("diagonal")
@_unary
def diagonal(func, level, x, value, rest, kwargs):
    names = ("offset", "dim1", "dim2")
    given = dict(zip(names, rest), **{k: kwargs[k] for k in names if k in kwargs})
    rank = x.dim()
    return make(value.diagonal(given.get("offset", 0), _remap(given.get("dim1", 0), rank),
                               _remap(given.get("dim2", 1), rank)), 0, level)


def _index_key(key, level):
    """The physical key (a leading full slice for the batch), or None when the key holds a
    batched index or advanced indices apart from each other."""
    key = key if isinstance(key, tuple) else (key,)
    advanced = []
    for i, k in enumerate(key):
        if type(k) is BatchedTensor or isinstance(k, bool):
            return None
        if isinstance(k, (TensorImpl, list)):
            advanced.append(i)
        elif not (k is None or k is Ellipsis or isinstance(k, (int, slice))):
            return None
    if advanced and advanced[-1] - advanced[0] + 1 != len(advanced):
        return None
    return (slice(None),) + key


@register("__getitem__")
def getitem(func, level, args, kwargs):
    x, key = args
    value = front(x, level)
    physical = _index_key(key, level)
    if value is None or physical is None:
        return NotImplemented
    return make(value[physical], 0, level)


@register("__setitem__")
def setitem(func, level, args, kwargs):
    x, key, item = args
    value = front(x, level)
    physical = _index_key(key, level)
    if value is None or physical is None:
        return NotImplemented
    item_value = front(item, level) if type(item) is BatchedTensor else None
    if item_value is not None:
        item = pad_to(item_value, value[physical].dim())
    value[physical] = item
    return None


def _joined(func, level, args, kwargs, extra):
    tensors = kwargs.get("tensors", args[0] if args else None)
    if not isinstance(tensors, (list, tuple)) or not tensors or "out" in kwargs:
        return NotImplemented
    dim = kwargs.get("dim", kwargs.get("axis", args[1] if len(args) > 1 else 0))
    rank = max(t.dim() for t in tensors)
    if any(t.dim() != rank for t in tensors) or rank + extra == 0:
        return NotImplemented
    size = batch_size(level)
    physical = [physical_front(t, level, size) for t in tensors]
    return make(func(physical, _remap(dim, rank + extra)), 0, level)


@register("cat", "concat", "concatenate")
def cat(func, level, args, kwargs):
    return _joined(func, level, args, kwargs, 0)


@register("stack")
def stack(func, level, args, kwargs):
    return _joined(func, level, args, kwargs, 1)


@register("detach")
@_unary
def detach(func, level, x, value, rest, kwargs):
    return make(at_level(x, level)[0].detach(), x._bt_bdim, level)
