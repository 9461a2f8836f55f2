"""BatchedTensor: what a function under vmap sees for a mapped input.

A BatchedTensor holds a physical tensor `value` whose dim `bdim` is the batch of vmap level
`level`; nested vmaps nest them (the value of a level-2 BatchedTensor may be a level-1
BatchedTensor). Its own TensorImpl fields describe ONE sample (the logical shape, dtype,
device), so `.shape`, `.size()`, `.dim()` read per-sample metadata without dispatch; every
op reaches `__torch_function__`, which runs the op's batch rule once on the physical value
(rules in `_rules_*.py`), or the per-sample loop (`_fallback.py`) when no rule fits.
Operations that would read the data behind the logical fields (`item`, `bool`, `tolist`)
raise, as functorch does for data-dependent control flow."""
import tensorlib
from tensorlib import overrides
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib._tensor import Tensor

# the vmap levels entered and not left: level -> (batch size, random guard)
_levels = {}


def push_level(size, guard):
    level = max(_levels, default=0) + 1
    _levels[level] = (size, guard)
    return level


def pop_level(level):
    del _levels[level]


def batch_size(level):
    return _levels[level][0]


def random_guard(level):
    return _levels[level][1]


def active_levels():
    return sorted(_levels)


class BatchedTensor(Tensor):
    """A tensor batched at one vmap level (see the module docstring)."""

    def __repr__(self):
        return f"BatchedTensor(lvl={self._bt_level}, bdim={self._bt_bdim}, " \
               f"value={self._bt_value!r})"

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from tensorlib.func._batching._dispatch import dispatch
        return dispatch(func, args, kwargs or {})

    def _data_dependent(self, *args, **kwargs):
        raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some "
                           "data-dependent control flow. We don't support that yet, please "
                           "shout over at https://github.com/pytorch/functorch/issues/257 .")

    __bool__ = __float__ = __int__ = __index__ = __complex__ = _data_dependent
    item = tolist = numpy = _data_dependent


def make(value, bdim, level):
    """value (a tensor, maybe batched at lower levels) batched at `level` along bdim."""
    obj = TensorImpl.__new__(BatchedTensor)
    bdim %= value.dim()
    sizes, strides = list(value._sizes), list(value._strides)
    del sizes[bdim], strides[bdim]
    obj._storage, obj._sizes, obj._strides = value._storage, tuple(sizes), tuple(strides)
    obj._offset, obj._dtype, obj._device = value._offset, value._dtype, value._device
    obj._is_inference = value._is_inference
    obj._bt_value, obj._bt_bdim, obj._bt_level = value, bdim, level
    return obj


def at_level(x, level):
    """(physical value, bdim) when x is batched at `level`, else (x, None)."""
    if type(x) is BatchedTensor and x._bt_level == level:
        return x._bt_value, x._bt_bdim
    return x, None


def front(x, level):
    """x's physical value with the batch of `level` at dim 0 (None: not batched there)."""
    value, bdim = at_level(x, level)
    if bdim is None:
        return None
    return value if bdim == 0 else value.movedim(bdim, 0)


def logical_dim(x):
    return x.dim() if isinstance(x, TensorImpl) else 0


def expand_front(x, size):
    """x (unbatched at this level) with a new leading dim of `size` (a stride-0 view)."""
    return x.unsqueeze(0).expand((size,) + tuple(x.shape))


def physical_front(x, level, size):
    """x's value with the batch at dim 0, expanding an x not batched at `level`."""
    value = front(x, level)
    return expand_front(x, size) if value is None else value


def pad_to(value, rank):
    """A front-batched value with size-1 dims inserted after the batch, to `rank` dims."""
    missing = rank - value.dim()
    if missing > 0:
        value = value.reshape((value.shape[0],) + (1,) * missing + tuple(value.shape[1:]))
    return value


def innermost(x):
    """The plain tensor under every level of x."""
    while type(x) is BatchedTensor:
        x = x._bt_value
    return x


def rewrap_like(plain, like):
    """`plain` (shaped as like's innermost tensor) wrapped in like's levels and bdims."""
    if type(like) is not BatchedTensor:
        return plain
    return make(rewrap_like(plain, like._bt_value), like._bt_bdim, like._bt_level)


def ensure_levels(x, levels):
    """x batched at every level of `levels` (ascending), expanding where it is not."""
    if not levels:
        return x
    top = levels[-1]
    if type(x) is BatchedTensor and x._bt_level == top:
        return make(ensure_levels(x._bt_value, levels[:-1]), x._bt_bdim, top)
    inner = ensure_levels(x, levels[:-1])
    return make(expand_front(inner, batch_size(top)), 0, top)


def to_plain(x, levels):
    """A plain tensor [B_lowest, ..., B_highest, *logical] for x over `levels`, expanding
    where x is not batched (a view of x's innermost tensor when it is batched at all)."""
    if not levels:
        if type(x) is BatchedTensor:
            raise RuntimeError("vmap: a tensor batched at a level that is not active")
        return x
    top = levels[-1]
    value = physical_front(x, top, batch_size(top))
    return to_plain(value, levels[:-1])


def batched_levels(x):
    out = []
    while type(x) is BatchedTensor:
        out.append(x._bt_level)
        x = x._bt_value
    return out


def contains_batched(tree):
    if type(tree) is BatchedTensor:
        return True
    if isinstance(tree, (list, tuple)):
        return any(contains_batched(t) for t in tree)
    if isinstance(tree, dict):
        return any(contains_batched(t) for t in tree.values())
    return False


def top_level(args, kwargs):
    """The highest vmap level among the arguments (also inside lists, tuples, dicts)."""
    best = 0
    for a in list(args) + list(kwargs.values()):
        if type(a) is BatchedTensor:
            best = max(best, a._bt_level)
        elif isinstance(a, (list, tuple)):
            best = max(best, top_level(a, {}))
        elif isinstance(a, dict):
            best = max(best, top_level((), a))
    return best


def metadata(func, args, kwargs):
    """func run on the logical fields of the BatchedTensors (shape, dtype, dim...)."""
    with overrides.DisableTorchFunctionSubclass():
        return func(*args, **kwargs)


def zeros_sample(x):
    """Zeros shaped as one sample of x (a batch of size 0 has none to run on)."""
    return tensorlib.zeros(tuple(x.shape), dtype=x.dtype, device=x.device)
