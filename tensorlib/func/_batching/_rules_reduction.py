"""Batch rules of the ops that take a `dim`: reductions (a missing or None dim reduces each
sample whole), softmax and its kin, scans, sorts, and the normalizations over trailing dims."""
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.func._batching._batched import BatchedTensor, batch_size, front, make
from tensorlib.func._batching._dispatch import register
from tensorlib.func._batching._rules_pointwise import pointwise, wrap_out

# name -> (position of dim, what a missing dim means: "all", "required" or a default dim)
_DIM_OPS = {n: (1, "all") for n in (
    "sum mean nansum nanmean amax amin all any count_nonzero logsumexp std var std_mean "
    "var_mean aminmax prod argmax argmin max min median nanmedian").split()}
_DIM_OPS.update({"norm": (2, "all"), "vector_norm": (2, "all")})
_DIM_OPS.update({n: (1, "required") for n in (
    "softmax log_softmax softmin cumsum cumprod cummax cummin logcumsumexp flip").split()})
_DIM_OPS.update({"sort": (1, -1), "argsort": (1, -1), "topk": (2, -1), "kthvalue": (2, -1),
                 "normalize": (2, 1), "mode": (1, -1), "diff": (2, -1), "glu": (1, -1)})
# reductions whose dim-less form returns one tensor but whose dim form a (values, indices)
_VALUES_WHEN_ALL = {"max", "min", "median", "nanmedian"}
# ops whose dim-less form takes no flattened dim (they need a tuple of dims)
_TUPLE_ONLY = {"aminmax"}


def _remap(d, rank):
    if isinstance(d, (tuple, list)):
        return type(d)(_remap(x, rank) for x in d)
    if not -rank <= d < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-rank}, {rank - 1}], but got {d})")
    return d % rank + 1


def _find_dim(name, args, kwargs):
    """(where the dim is: a kwargs key, a position or None, its value)."""
    pos, _ = _DIM_OPS[name]
    for key in ("dim", "dims", "axis"):
        if key in kwargs:
            return key, kwargs[key]
    if len(args) > pos and not isinstance(args[pos], bool) and \
            (args[pos] is None or isinstance(args[pos], (int, tuple, list))) and \
            not (name in ("std", "var", "std_mean", "var_mean") and args[pos] is None):
        return pos, args[pos]
    return None, None


@register(*_DIM_OPS)
def reduction(func, level, args, kwargs):
    name = func.__name__
    if name in ("max", "min") and len(args) > 1 and isinstance(args[1], TensorImpl):
        return pointwise(func, level, args, kwargs)
    x = args[0]
    value = front(x, level)
    others = list(args[1:]) + list(kwargs.values())
    if value is None or "out" in kwargs or any(isinstance(a, TensorImpl) for a in others):
        return NotImplemented
    rank = x.dim()
    where, dim = _find_dim(name, args, kwargs)
    args, kwargs = list(args), dict(kwargs)
    _, missing = _DIM_OPS[name]
    flattened = False
    if dim is None:
        if missing == "required" or rank == 0 and missing != "all":
            return NotImplemented
        if missing != "all":
            dim = missing
        elif kwargs.get("keepdim") or any(a is True for a in args[2:]) or name in _TUPLE_ONLY:
            return NotImplemented
        else:
            value, dim, flattened = value.reshape(batch_size(level), x.numel()), 1, True
            if where is None:
                where = "dim"
            if name in _VALUES_WHEN_ALL:
                args[0] = value
                kwargs[where if isinstance(where, str) else "dim"] = dim
                if not isinstance(where, str):
                    del args[where]
                return make(func(*args, **kwargs)[0], 0, level)
    elif rank == 0:
        return NotImplemented
    if not flattened:
        dim = _remap(dim, rank)
    if where is None:
        where = "dim"
    if isinstance(where, str):
        kwargs[where] = dim
    else:
        args[where] = dim
    args[0] = value
    return wrap_out(func(*args, **kwargs), level)


@register("layer_norm", "rms_norm")
def trailing_norm(func, level, args, kwargs):
    """Normalizing each sample's trailing dims: the batch stays in front, untouched."""
    value = front(args[0], level)
    if value is None or any(type(a) is BatchedTensor for a in list(args[1:]) +
                            list(kwargs.values())):
        return NotImplemented
    return make(func(value, *args[1:], **kwargs), 0, level)
