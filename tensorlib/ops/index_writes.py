"""index_reduce (prod/mean/amax/amin of source rows into self's rows named by index) and
put (writes at flat indices): composed of scatter_reduce and index_put_, whose autograd and
kernels every backend has."""
from tensorlib.ops._inplace import inplace_composite

__all__ = ["index_reduce", "put"]

_REDUCES = ("prod", "mean", "amax", "amin")


def index_reduce(input, dim, index, source, reduce, *, include_self=True):  # noqa: A002
    """out[..., index[i], ...] = reduce(self's row, source[..., i, ...]) along `dim`."""
    if reduce not in _REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    if index.dtype.is_floating_point or index.dtype.is_complex:
        raise RuntimeError("index_reduce_(): Expected dtype int32/int64 for index")
    d = dim + max(input.dim(), 1) if dim < 0 else dim
    n = index.numel()
    if source.dim() and source.shape[d] != n:
        raise RuntimeError(f"index_reduce_(): Number of indices ({n}) should be equal to "
                           f"source.size(dim) ({source.shape[d]})")
    shape = [1] * source.dim()
    if source.dim():
        shape[d] = n
    spread = index.reshape(shape).expand(source.shape) if source.dim() else index.reshape(())
    return input.scatter_reduce(d, spread, source, reduce, include_self=include_self)


def put(input, index, source, accumulate=False):  # noqa: A002
    """A copy of input with source written (or added, with accumulate) at the flat indices."""
    numel = input.numel()
    if index.numel() != source.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source.numel()}, "
                           f"index.numel() = {index.numel()}")
    flat_index = index.reshape(-1)
    if flat_index.numel():
        low, high = int(flat_index.min().item()), int(flat_index.max().item())
        bad = high if high >= numel else (low if low < -numel else None)
        if bad is not None:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of "
                             f"{numel} elements.")
    flat = input.reshape(-1).clone()
    flat = flat.index_put((flat_index,), source.reshape(-1).to(input.dtype), accumulate)
    return flat.reshape(input.shape)


index_reduce_ = inplace_composite(index_reduce)
put_ = inplace_composite(put)
TENSOR_METHODS = {"index_reduce": index_reduce, "index_reduce_": index_reduce_, "put": put,
                  "put_": put_}
