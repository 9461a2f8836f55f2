"""Sorting and searching: sort/argsort/msort, topk, kthvalue, searchsorted/bucketize,
bincount/histc, unique/unique_consecutive and one_hot, on the sort primitive plus elementwise
arithmetic on int64 index tensors, so they run on any backend."""
from collections import namedtuple

import tensorlib._C.dtypes as dt
from tensorlib._C import views as _v
from tensorlib._C.dispatch import lookup
from tensorlib._C.factory import empty, scalar_tensor
from tensorlib._C.tensor_impl import TensorImpl, numel
from tensorlib._meta import data_dependent_on_meta
from tensorlib.ops._composites import optional_kernel
from tensorlib.ops._opdef import differentiable
from tensorlib.ops._unsigned import refuse_unsigned
from tensorlib.ops._where import where as _where
from tensorlib.ops._index_common import (_arange, _as_dtype, _cumsum, _full, _long,
                                         _prim_sort, _scatter_add_into, _select1d,
                                         mask_positions)
from tensorlib.ops.scatter_gather import _gather, gather
from tensorlib.ops.selection import _index_select

sort_result = namedtuple("sort", ["values", "indices"])
topk_result = namedtuple("topk", ["values", "indices"])
kthvalue_result = namedtuple("kthvalue", ["values", "indices"])


# ---- sorting ------------------------------------------------------------------------------
@differentiable("sort")
def _sort(x, dim, descending, stable):
    if x.dim() == 0:
        return sort_result(x.clone(), _full((), 0, dt.int64, x._device))
    values, indices = empty(x._sizes, x._dtype, x._device), empty(x._sizes, dt.int64, x._device)
    if x.numel():
        lookup("sort", x._device)(values, indices, x, dim, bool(descending), True)
    return sort_result(values, indices)


def sort(input, dim=-1, descending=False, stable=False):  # noqa: A002
    """(values, indices) sorted along dim. Always stable (equal elements keep their order), so
    stable=True costs nothing; NaN sorts as the largest value."""
    return _sort(input, _v.wrap_dim(dim, max(input.dim(), 1)), bool(descending), bool(stable))


def argsort(input, dim=-1, descending=False, stable=False):  # noqa: A002
    return sort(input, dim, descending, stable).indices


def msort(input):  # noqa: A002
    return sort(input, 0).values


def _best_k(x, k, dim, largest):
    """(values, indices) of the k best along dim from the backend's topk kernel, or None."""
    if not (x.dim() and k and x.numel()):
        return None
    kernel = optional_kernel(x._device, "topk")
    if kernel is None:
        return None
    sizes = x._sizes[:dim] + (k,) + x._sizes[dim + 1:]
    values, indices = empty(sizes, x._dtype, x._device), empty(sizes, dt.int64, x._device)
    return (values, indices) if kernel(values, indices, x, dim, k, largest) else None


@differentiable("topk")
def _topk(x, k, dim, largest, sorted_):
    best = _best_k(x, k, dim, largest)
    if best is not None:
        return topk_result(*best)
    values, indices = _sort.__wrapped__(x, dim, largest, True)
    if x.dim() == 0:
        return topk_result(values, indices)
    return topk_result(values.narrow(dim, 0, k).contiguous(),
                       indices.narrow(dim, 0, k).contiguous())


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    """The k largest (or smallest) elements along dim with their indices, in sorted order
    (also when sorted=False, which PyTorch allows); ties keep index order."""
    refuse_unsigned("topk_cpu", input._dtype)
    d = _v.wrap_dim(dim, max(input.dim(), 1))
    size = input._sizes[d] if input.dim() else 1
    if input._dtype is dt.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    return _topk(input, int(k), d, bool(largest), bool(sorted))


@differentiable("kthvalue")
def _kthvalue(x, k, dim, keepdim):
    """The k smallest by the topk kernel (a heap for small k), else a sort; the last of them."""
    values, indices = _best_k(x, k, dim, False) or _sort.__wrapped__(x, dim, False, True)
    if x.dim() == 0:
        return kthvalue_result(values, indices)
    if keepdim:
        return kthvalue_result(values.narrow(dim, k - 1, 1).contiguous(),
                               indices.narrow(dim, k - 1, 1).contiguous())
    return kthvalue_result(values.select(dim, k - 1).contiguous(),
                           indices.select(dim, k - 1).contiguous())


def kthvalue(input, k, dim=-1, keepdim=False):  # noqa: A002
    """The k-th smallest element along dim (k from 1) and its index."""
    refuse_unsigned("kthvalue_cpu", input._dtype)
    d = _v.wrap_dim(dim, max(input.dim(), 1))
    size = input._sizes[d] if input.dim() else 1
    if size == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _kthvalue(input, int(k), d, bool(keepdim))


# ---- searching and counting -------------------------------------------------------------
def _check_side(right, side):
    if side not in (None, "left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                           f"{side}")
    if side is not None and right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                           "got side of left while right was True")
    return bool(right) or side == "right"


def _binary_search(seq, values, right):
    """Vectorised binary search: seq (R, n) sorted rows, values (R, m); per value the count of
    row elements < value (<= with right). NaN sorts last, as in sort."""
    n = seq._sizes[1]
    lo = _full(values._sizes, 0, dt.int64, values._device)
    hi = _full(values._sizes, n, dt.int64, values._device)
    if n == 0 or values.numel() == 0:
        return lo
    nan_value = values.isnan() if values._dtype.is_floating_point else None
    for _ in range(n.bit_length()):
        active = lo < hi
        mid = (lo + hi) // 2
        probe = _gather.__wrapped__(seq, 1, _where(mid < n, mid, n - 1))
        go = (probe <= values) if right else (probe < values)
        if nan_value is not None:
            go = go | (nan_value & probe.isnan().logical_not())
        go = go & active
        stay = active & go.logical_not()
        lo = _where(go, mid + 1, lo)
        hi = _where(stay, mid, hi)
    return lo


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,  # noqa
                 sorter=None):
    """Insertion points of input's values into the sorted last dim of sorted_sequence."""
    refuse_unsigned("searchsorted_out_cpu", sorted_sequence._dtype)
    right = _check_side(right, side)
    seq = sorted_sequence
    scalar = not isinstance(input, TensorImpl)
    if scalar:
        input = scalar_tensor(input, seq._dtype, seq._device)  # noqa: A001
    if sorter is not None:
        seq = gather(seq, -1, sorter)
    if seq.dim() != 1 and (seq.dim() != input.dim() or seq._sizes[:-1] != input._sizes[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           f"the first N-1 dimensions of boundaries tensor and input value "
                           f"tensor must match, but we got boundaries tensor "
                           f"{list(seq._sizes)} and input value tensor {list(input._sizes)}")
    from tensorlib._C.promotion import result_type
    common = result_type((seq, input))
    seq, values = _as_dtype(seq, common), _as_dtype(input, common)
    n = seq._sizes[-1] if seq.dim() else 1
    rows = 1 if seq.dim() <= 1 else numel(seq._sizes[:-1])
    out = _binary_search(seq.reshape(rows, n), values.reshape(rows, -1), right)
    out = out.view(input._sizes)
    return _as_dtype(out, dt.int32) if out_int32 else out


def bucketize(input, boundaries, *, out_int32=False, right=False):  # noqa: A002
    """Bucket of each value: i with boundaries[i-1] < x <= boundaries[i] (right: <= x <)."""
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def bincount(input, weights=None, minlength=0):  # noqa: A002
    """Count of each value 0..max(input) (or sum of weights); not differentiable."""
    refuse_unsigned("bincount_cpu", input._dtype)
    if input._dtype.is_floating_point or input._dtype is dt.bool_:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{input._dtype.scalar_name}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input._device.type == "meta":
        raise data_dependent_on_meta("bincount")
    if input.dim() != 1 or (input.numel() and (input < 0).any().item()):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.dim() != 1 or weights._sizes[0] != input._sizes[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if input.numel() == 0:                  # PyTorch: int64 zeros, whatever the weights
        return _full((int(minlength),), 0, dt.int64, input._device)
    size = max(int(input.amax().item()) + 1 if input.numel() else 0, int(minlength))
    if weights is None:
        dtype, src = dt.int64, _full(input._sizes, 1, dt.int64, input._device)
    else:
        dtype = weights._dtype if weights._dtype.is_floating_point else dt.float64
        src = _as_dtype(weights.detach(), dtype)
    return _scatter_add_into(_full((size,), 0, dtype, input._device), 0, input, src)


def histc(input, bins=100, min=0, max=0):  # noqa: A001,A002
    """Histogram of equal-width bins over [min, max] (the data's range when min == max);
    values outside are ignored, max falls in the last bin. Not differentiable."""
    refuse_unsigned("aminmax_cpu", input._dtype)
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for "
                                  f"'{input._dtype.scalar_name}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histc(): bins must be > 0, but got {bins} for bins")
    x = input.detach().reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and x.numel():
        lo, hi = float(x.amin().item()), float(x.amax().item())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc(): max must be larger than min")
    inside = (x >= lo) & (x <= hi)
    pos = ((x - lo) * bins / (hi - lo)).floor()
    slot = _where(inside, _where(pos < bins, pos, bins - 1), bins)
    counts = _full((bins + 1,), 0, input._dtype, input._device)
    _scatter_add_into(counts, 0, _long(slot), _full(x._sizes, 1, input._dtype, input._device))
    return _v.slice(counts, 0, 0, bins, 1).contiguous()


def _runs(values):
    """Bool (n,): True where a run of equal values starts (NaNs never equal: each its own)."""
    n = values.numel()
    start = _full((n,), True, dt.bool_, values._device)
    if n > 1:
        lookup("ne", values._device)(_v.slice(start, 0, 1, n, 1), _v.slice(values, 0, 1, n, 1),
                                     _v.slice(values, 0, 0, n - 1, 1))
    return start


def _unique_runs(flat, order, shape, return_inverse, return_counts):
    n = flat.numel()
    start = _runs(flat)
    starts = mask_positions(start, "_unique2" if order is not None else "unique_consecutive")
    out = [_select1d(flat, starts)]
    if return_inverse:
        run_id = _cumsum(start) - 1
        inverse = _full((n,), 0, dt.int64, flat._device)
        if order is None:
            inverse = run_id
        else:
            _scatter_add_into(inverse, 0, order, run_id)
        out.append(inverse.view(shape))
    if return_counts:
        m = starts.numel()
        ends = _full((m,), n, dt.int64, flat._device)
        if m > 1:
            lookup("copy", flat._device)(_v.slice(ends, 0, 0, m - 1, 1),
                                         _v.slice(starts, 0, 1, m, 1))
        out.append(ends - starts)
    return out[0] if len(out) == 1 else tuple(out)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa
    """Sorted distinct values (also for sorted=False, which PyTorch allows), with optional
    inverse indices and counts; with dim, the distinct slices along dim. Not differentiable."""
    if dim is not None:
        return _unique_dim(input, dim, True, return_inverse, return_counts)
    flat, order = _prim_sort(input.detach().reshape(-1), 0)
    return _unique_runs(flat, order, input._sizes, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):  # noqa
    """Collapses runs of equal consecutive elements (of the flattened input, or of the slices
    along dim)."""
    if dim is not None:
        return _unique_dim(input, dim, False, return_inverse, return_counts)
    flat = input.detach().reshape(-1)
    return _unique_runs(flat, None, input._sizes, return_inverse, return_counts)


def _unique_dim(input, dim, sort, return_inverse, return_counts):
    """The distinct slices along dim: each slice flattened to a row, the rows sorted
    lexicographically (stable sorts from the last column to the first) when `sort`, then
    runs of equal rows collapsed."""
    x = input.detach()
    if x.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _v.wrap_dim(dim, x.dim())
    if any(s == 0 for i, s in enumerate(x._sizes) if i != d):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    n = x._sizes[d]
    rest = x._sizes[:d] + x._sizes[d + 1:]
    rows = x.movedim(d, 0).reshape(n, -1)
    order = _arange(n, x._device)
    if sort:
        for c in range(rows._sizes[1] - 1, -1, -1):
            column = _index_select(rows, 0, order).select(1, c).contiguous()
            order = _select1d(order, _prim_sort(column, 0)[1])
        rows = _index_select(rows, 0, order)
    start = _full((n,), True, dt.bool_, x._device)
    if n > 1:
        lookup("copy", x._device)(_v.slice(start, 0, 1, n, 1), (rows[1:] != rows[:-1]).any(1))
    starts = mask_positions(start, "unique_dim" if sort else "unique_dim_consecutive")
    values = _index_select(rows, 0, starts).reshape((starts.numel(),) + rest).movedim(0, d)
    out = [values]
    if return_inverse:
        inverse = _full((n,), 0, dt.int64, x._device)
        _scatter_add_into(inverse, 0, order, _cumsum(start) - 1)
        out.append(inverse)
    if return_counts:
        ends = _full((starts.numel(),), n, dt.int64, x._device)
        if starts.numel() > 1:
            lookup("copy", x._device)(_v.slice(ends, 0, 0, starts.numel() - 1, 1),
                                      _v.slice(starts, 0, 1, starts.numel(), 1))
        out.append(ends - starts)
    return out[0] if len(out) == 1 else tuple(out)


def one_hot(tensor, num_classes=-1):
    """(*, num_classes) int64 with a 1 at each value (num_classes=-1: max + 1)."""
    if tensor._dtype is not dt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.amax().item()) + 1
    if tensor.numel():
        if (tensor < 0).any().item():
            raise RuntimeError("Class values must be non-negative.")
        if (tensor >= num_classes).any().item():
            raise RuntimeError("Class values must be smaller than num_classes.")
    classes = _arange(num_classes, tensor._device)
    return _long(tensor.unsqueeze(-1) == classes)


__all__ = ["sort", "argsort", "msort", "topk", "kthvalue", "searchsorted", "bucketize",
           "bincount", "histc", "unique", "unique_consecutive"]

TENSOR_METHODS = {name: globals()[name] for name in __all__
                  if name not in ("searchsorted", "bucketize")}
