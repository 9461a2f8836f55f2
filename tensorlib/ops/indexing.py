"""x[key] and x[key] = value. Ints, slices, None and Ellipsis make views; one integer index
tensor (or list) selects along its dim through the index_select primitive."""
import numbers

import numpy as np

import tensorlib._C.dtypes as dt
from tensorlib._C import views as _v
from tensorlib._C.dispatch import lookup
from tensorlib._C.factory import empty
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.ops._opdef import differentiable


def _is_index_tensor(k):
    return isinstance(k, (TensorImpl, list)) or (hasattr(k, "__array__")
                                                 and not isinstance(k, numbers.Integral))


def _expand_ellipsis(x, key):
    if not isinstance(key, tuple):
        key = (key,)
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    if consumed > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()}")
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    positions = [i for i, k in enumerate(key) if k is Ellipsis]   # `in` would call __eq__
    if positions:
        i = positions[0]
        key = key[:i] + (slice(None),) * (x.dim() - consumed) + key[i + 1:]
    return key


@differentiable("getitem")
def getitem(x, key):
    key = _expand_ellipsis(x, key)
    out, dim, advanced = x, 0, None
    for k in key:
        if k is None:
            out = _v.unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, bool):
            raise NotImplementedError("indexing with a Python bool is not supported yet")
        elif isinstance(k, numbers.Integral):
            out = _v.select(out, dim, int(k))
        elif isinstance(k, slice):
            step = 1 if k.step is None else int(k.step)
            out = _v.slice(out, dim, k.start, k.stop, step)
            dim += 1
        elif _is_index_tensor(k):
            if advanced is not None:
                raise NotImplementedError("indexing with more than one index tensor is not "
                                          "supported yet")
            advanced = (dim, k)
            dim += 1
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and integer "
                             f"tensors are valid indices (got {type(k).__name__})")
    if advanced is not None:
        out = _take(out, *advanced)
    return out


def _take(x, dim, index):
    import tensorlib
    if not isinstance(index, TensorImpl):
        index = tensorlib.tensor(index, dtype=dt.int64, device=x._device)
    if index._dtype is dt.bool_ or index._dtype is dt.uint8:
        raise NotImplementedError("boolean mask indexing is not supported yet")
    if index._dtype.is_floating_point:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    flat = index.reshape(-1).to(dt.int64)
    out = empty(x._sizes[:dim] + (flat._sizes[0],) + x._sizes[dim + 1:], x._dtype, x._device)
    lookup("index_select", x._device)(out, x, dim, flat)
    return out.view(x._sizes[:dim] + index._sizes + x._sizes[dim + 1:])


def setitem(x, key, value):
    key = _expand_ellipsis(x, key)
    if any(_is_index_tensor(k) for k in key):
        raise NotImplementedError("assignment through index tensors is not supported yet")
    target = getitem(x, key)
    if isinstance(value, TensorImpl):
        target.copy_(value)
    else:
        target.fill_(value)


@differentiable("take_flat")
def take_flat(src, index):
    """src.reshape(-1)[index], shaped like index (gathers through the index_select
    primitive); the adjoint of index_add_flat."""
    flat = src.reshape(-1)
    out = empty((index.numel(),), src._dtype, src._device)
    lookup("index_select", src._device)(out, flat, 0, index.reshape(-1))
    return out.view(index._sizes)


@differentiable("index_add_flat")
def index_add_flat(src, index, shape):
    """zeros(shape) with src added at the flat positions `index` (repeats add up): scatters
    a view's gradient back onto its input."""
    from tensorlib.ops.creation import zeros
    out = zeros(int(np.prod(shape)), dtype=src._dtype, device=src._device)
    lookup("scatter_add", src._device)(out, 0, index.reshape(-1), src.reshape(-1))
    return out.view(tuple(shape))
