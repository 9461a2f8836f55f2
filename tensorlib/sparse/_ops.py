"""torch.sparse's products and reductions (mm, addmm, sum, softmax, log_softmax), and the
sparse branch of the dense-named products: tensorlib.matmul (so mm, mv, addmm, spmm and `@`)
hands a sparse operand here. Through those a sparse operand's gradient is dense, as in
PyTorch (the matmul node's formula); through torch.sparse.mm it is sparse."""
import tensorlib
from tensorlib._C.views import wrap_dim
from tensorlib.sparse import _autograd as A, _kernels as K
from tensorlib.sparse._base import SparseTensor

__all__ = ["sparse_matmul", "mm", "dsmm", "hsmm", "addmm", "sum", "softmax", "log_softmax"]


def _as_coo(x):
    return x if x.is_sparse else x.to_sparse()


def _check_matrix(s, name):
    if s.sparse_dim() != 2 or s.dense_dim() != 0:
        raise RuntimeError(f"{name}: expected a sparse matrix (2 sparse and 0 dense "
                           f"dimensions), got {s.sparse_dim()} sparse and {s.dense_dim()} "
                           f"dense dimensions")


def _check_operands(s, d):
    if d.device != s.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {s.device} and {d.device}!")
    if d.dtype is not s.dtype:
        raise RuntimeError(f"expected scalar type {s.dtype.scalar_name} but found "
                           f"{d.dtype.scalar_name}")


def _check_sparse_dense(s, d, name):
    _check_matrix(s, name)
    _check_operands(s, d)
    if d.dim() not in (1, 2):
        raise RuntimeError(f"{name}: expected a 1-D or 2-D dense operand, got {d.dim()}-D")
    k = s._sizes[1]
    if d._sizes[0] != k:
        raise RuntimeError(f"{name}: Argument #3 (dense): Expected dim 0 size {k}, got "
                           f"{d._sizes[0]}")


def _sparse_dense(s, d):
    """sparse (m x k) @ dense (k x n or k): the dense product, no autograd."""
    _check_sparse_dense(s, d, "addmm")
    d2 = d.unsqueeze(1) if d.dim() == 1 else d
    idx = s._indices_t
    out = K.coo_mm(idx[0], idx[1], s._values_t, s._sizes[0], d2)
    return out.squeeze(1) if d.dim() == 1 else out


def _dense_sparse(d, s):
    """dense (m x k or k) @ sparse (k x n): (s^T @ d^T)^T, no autograd."""
    _check_matrix(s, "mm")
    _check_operands(s, d)
    if d.dim() not in (1, 2):
        raise RuntimeError(f"mm: expected a 1-D or 2-D dense operand, got {d.dim()}-D")
    if d._sizes[-1] != s._sizes[0]:
        rows = d._sizes[0] if d.dim() == 2 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x"
                           f"{d._sizes[-1]} and {s._sizes[0]}x{s._sizes[1]})")
    d2 = d.unsqueeze(0) if d.dim() == 1 else d
    idx = s._indices_t
    out = K.coo_mm(idx[1], idx[0], s._values_t, s._sizes[1], d2.t()).t()
    return out.squeeze(0) if d.dim() == 1 else out


def _sparse_sparse(a, b):
    """sparse @ sparse: a coalesced sparse result, computed by scipy on the host (no
    autograd)."""
    import numpy as np
    import scipy.sparse
    for s in (a, b):
        _check_matrix(s, "mm")
        if s.requires_grad and tensorlib.is_grad_enabled():
            raise NotImplementedError("tensorlib does not differentiate the product of two "
                                      "sparse tensors")
    _check_operands(a, b._values_t)
    if a._sizes[1] != b._sizes[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._sizes[0]}x"
                           f"{a._sizes[1]} and {b._sizes[0]}x{b._sizes[1]})")

    def host(s):
        i, v = (t.cpu().numpy() for t in s._coalesced_parts())
        return scipy.sparse.csr_matrix((v, (i[0], i[1])), shape=s._sizes)
    product = (host(a) @ host(b)).tocoo()
    order = np.lexsort((product.col, product.row))
    indices = tensorlib.from_numpy(np.stack([product.row[order], product.col[order]])
                                   .astype(np.int64)).to(a.device)
    values = tensorlib.from_numpy(np.ascontiguousarray(product.data[order])).to(
        device=a.device, dtype=a.dtype)
    return type(a)._from_parts((indices, values), (a._sizes[0], b._sizes[1]),
                               coalesced=True)


def sparse_matmul(a, b):
    """tensorlib.matmul with a sparse operand (called with recording off)."""
    a_sparse, b_sparse = isinstance(a, SparseTensor), isinstance(b, SparseTensor)
    if a_sparse and b_sparse:
        return _sparse_sparse(_as_coo(a), _as_coo(b))
    if a_sparse:
        return _sparse_dense(_as_coo(a), b)
    return _dense_sparse(a, _as_coo(b))


def mm(mat1, mat2, reduce="sum"):
    """torch.sparse.mm: sparse @ dense (the sparse operand's gradient sparse, on its
    entries), sparse @ sparse (sparse), or any other pair as tensorlib.mm."""
    if reduce != "sum":
        return _mm_reduce(mat1, mat2, reduce)
    if isinstance(mat1, SparseTensor) and not isinstance(mat2, SparseTensor):
        s = _as_coo(mat1)
        if mat2.dim() != 2:
            raise RuntimeError(f"mm: expected 2D tensors, got {s.dim()}D and {mat2.dim()}D")
        _check_sparse_dense(s, mat2, "addmm")
        return A.SparseMM.apply(s, mat2)
    return tensorlib.mm(mat1, mat2)


_ROW_REDUCE = {"mean": "mean", "amax": "amax", "max": "amax", "amin": "amin", "min": "amin"}


def _mm_reduce(csr, dense, reduce):
    """torch.sparse.mm(csr, dense, reduce): row i is the reduction over row i's entries j of
    csr[i, j] * dense[j] (0 for an empty row). amax/amin take their first extreme entry, and
    the gradient goes to that one alone, as PyTorch's arg_out does."""
    from tensorlib.sparse._csr import SparseCsrTensor
    if reduce not in _ROW_REDUCE:
        if reduce == "prod":
            raise RuntimeError("sparse_mm_reduce: reduce type of prod has not been enabled.")
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    if not isinstance(csr, SparseCsrTensor):
        if isinstance(csr, SparseTensor) and csr.layout is tensorlib.sparse_csc:
            raise RuntimeError("sparse_mm_reduce: expect self to be SparseCsr, got SparseCsc")
        key = csr._layout_key() if isinstance(csr, SparseTensor) else "Strided"
        raise NotImplementedError(f"Could not run 'aten::_sparse_mm_reduce_impl' with "
                                  f"arguments from the '{key}CPU' backend")
    m, k = csr._sizes
    if dense.dim() != 2 or dense._sizes[0] != k:
        raise RuntimeError(f"Expected a tensor of dimension 2 and tensor.size[0] == {k} but "
                           f"got: dimension {dense.dim()} and tensor.size[0] = "
                           f"{dense._sizes[0] if dense.dim() else 0}")
    if dense.dtype is not csr.dtype:
        raise RuntimeError(f"Expected tensor for argument #1 'other' to have scalar type "
                           f"{csr.dtype.scalar_name}; but got {dense.type()} instead (while "
                           f"checking arguments for sparse_mm_reduce)")
    rows, cols, values = csr._rows(), csr._col_t, csr._values_t
    n, nnz = dense._sizes[1], values._sizes[0]
    products = values.unsqueeze(1) * dense.index_select(0, cols)
    index = rows.unsqueeze(1).expand(nnz, n)
    zeros = tensorlib.zeros((m, n), dtype=dense.dtype, device=dense.device)
    if _ROW_REDUCE[reduce] == "mean":
        return zeros.scatter_reduce(0, index, products, "mean", include_self=False)
    with tensorlib.no_grad():
        extreme = zeros.scatter_reduce(0, index, products, _ROW_REDUCE[reduce],
                                       include_self=False)
        position = tensorlib.arange(nnz, device=dense.device).unsqueeze(1).expand(nnz, n)
        position = position.masked_fill(products != extreme.index_select(0, rows), nnz)
        first = tensorlib.full((m, n), nnz, dtype=position.dtype, device=dense.device)
        first = first.scatter_reduce(0, index, position, "amin")
    padded = tensorlib.cat([products, zeros[:1]])          # an empty row reads the zero row
    return padded.gather(0, first)


def dsmm(sparse, dense):
    """torch.dsmm, the older name: sparse @ dense as a dense tensor."""
    _require_sparse("dsmm", sparse)
    return mm(sparse, dense)


def hsmm(sparse, dense):
    """torch.hsmm (and smm): sparse @ dense as a sparse COO tensor."""
    _require_sparse("hsmm", sparse)
    return mm(sparse, dense).to_sparse()


def _require_sparse(name, t):
    if not isinstance(t, SparseTensor):
        raise RuntimeError(f"{name}: expected a sparse first argument, got a "
                           f"{t.layout} tensor")


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """torch.sparse.addmm: beta * mat + alpha * torch.sparse.mm(mat1, mat2)."""
    product = mm(mat1, mat2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    return (mat * beta if beta != 1 else mat) + product


def _dims(s, dim):
    n = s.dim()
    dims = [dim] if isinstance(dim, int) else list(dim)
    wrapped = sorted(wrap_dim(d, n) for d in dims)
    for x, y in zip(wrapped, wrapped[1:]):
        if x == y:
            raise RuntimeError(f"dim {x} appears multiple times in the list of dims")
    return tuple(wrapped)


def sum_forward(s, dims):
    """Sum over `dims` (sorted), no autograd: dense when every sparse dim is summed."""
    indices, values = s._indices_t, s._values_t
    nsparse = indices._sizes[0]
    dense_dims = [d - nsparse + 1 for d in dims if d >= nsparse]
    if dense_dims:
        values = values.sum(dense_dims)
    kept = [d for d in range(nsparse) if d not in dims]
    if not kept:
        return values.sum(0)
    sizes = tuple(n for d, n in enumerate(s._sizes) if d not in dims)
    indices, values = K.coalesce_parts(indices[kept], values, sizes)
    return type(s)._from_parts((indices, values), sizes, coalesced=True)


def sum(input, dim=None, dtype=None):  # noqa: A001,A002 - torch's names
    """torch.sparse.sum: every element (a 0-dim dense tensor), or over `dim` (sparse while
    a sparse dim is left, else dense)."""
    s = _as_coo(input)
    if not isinstance(s, SparseTensor):
        return input.sum(dim, dtype=dtype) if dim is not None else input.sum(dtype=dtype)
    if dtype is not None:
        s = s.to(dtype)
    dims = tuple(range(s.dim())) if dim is None else _dims(s, dim)
    if not dims:
        return s
    return A.Sum.apply(s, dims)


def softmax_groups(indices, sizes, dim):
    """Each entry's line along `dim` (the entries agreeing on every other sparse dim) as a
    group number, and the number of groups."""
    others = [d for d in range(indices._sizes[0]) if d != dim]
    keys = K.linear_keys(indices[others], tuple(sizes[d] for d in others))
    lines, groups = tensorlib.unique(keys, sorted=True, return_inverse=True)
    return groups, lines._sizes[0]


def _softmax(input, dim, dtype, log):
    name = "log_softmax" if log else "softmax"
    s = _as_coo(input)
    if not isinstance(s, SparseTensor):
        fn = tensorlib.log_softmax if log else tensorlib.softmax
        return fn(input, dim, dtype=dtype)
    if dtype is not None:
        s = s.to(dtype)
    if not s.dtype.is_floating_point:
        raise RuntimeError(f"{name}: expected a floating point sparse tensor, got {s.dtype}")
    dim = wrap_dim(dim, s.dim())
    if dim >= s.sparse_dim():
        raise NotImplementedError(f"{name}: tensorlib takes a sparse softmax over a sparse "
                                  f"dim, got dim {dim} of {s.sparse_dim()} sparse dims")
    return A.Softmax.apply(s, dim, log)


def softmax(input, dim, dtype=None):  # noqa: A002
    """torch.sparse.softmax: over each line's specified entries (unspecified ones count as
    -inf, not 0); the result has the coalesced input's entries."""
    return _softmax(input, dim, dtype, False)


def log_softmax(input, dim, dtype=None):  # noqa: A002
    return _softmax(input, dim, dtype, True)

