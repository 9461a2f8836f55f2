"""The computations under the sparse ops, written on dense tensors so that they run on every
device: a backend that registers `sparse_coo_mm` (the CPU's scipy product) runs the product
itself; elsewhere it is index_select, a multiply and index_add. Nothing here records autograd
(the Functions of _autograd.py call these with recording off)."""
import tensorlib
from tensorlib._C.factory import empty
from tensorlib.ops._composites import optional_kernel

__all__ = ["linear_keys", "unravel_keys", "coalesce_parts", "coo_mm", "sampled_dot",
           "values_at"]


def linear_keys(indices, sizes):
    """Each entry's row-major position among the sparse dims `sizes`: (nnz,) int64."""
    keys = None
    for d in range(indices._sizes[0]):
        row = indices[d]
        keys = row.clone() if keys is None else keys * sizes[d] + row
    if keys is None:                        # no sparse dims: every entry is the one position
        keys = tensorlib.zeros(indices._sizes[1], dtype=tensorlib.int64,
                               device=indices.device)
    return keys


def unravel_keys(keys, sizes):
    """The (len(sizes), n) indices of row-major positions `keys`."""
    rows = []
    for size in reversed(sizes):
        rows.append(keys % size if size else keys)
        keys = keys // size if size else keys
    if not rows:
        return keys.reshape(0, keys._sizes[0])
    return tensorlib.stack(rows[::-1])


def coalesce_parts(indices, values, sizes):
    """Sorted unique indices, with the values of duplicates summed."""
    sparse_sizes = tuple(sizes[:indices._sizes[0]])
    if values._sizes[0] == 0:
        return indices, values
    unique, inverse = tensorlib.unique(linear_keys(indices, sparse_sizes), sorted=True,
                                       return_inverse=True)
    summed = tensorlib.zeros((unique._sizes[0],) + values._sizes[1:], dtype=values.dtype,
                             device=values.device)
    summed.index_add_(0, inverse, values)
    return unravel_keys(unique, sparse_sizes), summed


def coo_mm(rows, cols, values, m, dense):
    """The (m, n) product of the m x k matrix with entries (rows, cols, values) and the dense
    (k, n) `dense` (duplicate entries add up)."""
    out = empty((m, dense._sizes[1]), dense._dtype, dense._device)
    if values._sizes[0] == 0 or dense._sizes[1] == 0:
        return out.zero_()
    kernel = optional_kernel(dense._device, "sparse_coo_mm")
    if kernel is not None:
        kernel(out, rows, cols, values.contiguous(),
                                               dense.contiguous())
        return out
    out.zero_()
    return out.index_add_(0, rows, values.unsqueeze(1) * dense.index_select(0, cols))


def sampled_dot(rows, cols, a, b):
    """For each entry e: the dot product of a[rows[e]] and b[cols[e]] (the gradient of a
    sparse matrix in a sparse-dense product, on its own entries)."""
    return (a.index_select(0, rows) * b.index_select(0, cols)).sum(-1)


def values_at(grad, indices, sizes):
    """The values of `grad` (a dense tensor of `sizes`, or a sparse COO tensor of them) at the
    sparse `indices`: (n, *dense dims); zero where a sparse `grad` has no entry."""
    if not grad.is_sparse:
        return grad[tuple(indices[d] for d in range(indices._sizes[0]))]
    g = grad.coalesce()
    gi, gv = g._indices_t, g._values_t
    sparse_sizes = tuple(sizes[:indices._sizes[0]])
    out_shape = (indices._sizes[1],) + gv._sizes[1:]
    if gv._sizes[0] == 0:
        return tensorlib.zeros(out_shape, dtype=gv.dtype, device=gv.device)
    have, want = linear_keys(gi, sparse_sizes), linear_keys(indices, sparse_sizes)
    pos = tensorlib.searchsorted(have, want).clamp_(max=have._sizes[0] - 1)
    found = have.index_select(0, pos) == want
    picked = gv.index_select(0, pos)
    mask = found.reshape(found._sizes + (1,) * (picked.dim() - 1))
    return tensorlib.where(mask, picked, tensorlib.zeros((), dtype=gv.dtype,
                                                         device=gv.device))
