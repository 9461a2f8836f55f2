"""The sparse CSR matrix (torch.sparse_csr): compressed row pointers (m + 1), column indices
and values (nnz each). tensorlib's CSR tensors are 2-D without dense dims; their products go
through the COO entries (`_rows`). Autograd through a CSR tensor itself is not supported
(a dense operand of a CSR product gets its gradient)."""
import tensorlib
import tensorlib._C.dtypes as dt
from tensorlib._C.grad_mode import is_grad_enabled
from tensorlib._layout import sparse_csr
from tensorlib._tensor import Tensor
from tensorlib.sparse._base import SparseTensor

__all__ = ["SparseCsrTensor", "sparse_csr_tensor", "coo_to_csr"]


class SparseCsrTensor(SparseTensor):
    """A Tensor of layout sparse_csr (see _guard.py's NOTE)."""

    _layout = sparse_csr
    _components = ("_crow_t", "_col_t", "_values_t")
    is_sparse = False
    is_sparse_csr = True

    @classmethod
    def _from_parts(cls, parts, sizes, coalesced=None):
        crow, col, values = parts
        return cls._make(tuple(sizes), values._dtype, values._device, _crow_t=crow,
                         _col_t=col, _values_t=values, _rows_cache=None)

    def _with(self, fn):
        return self._from_parts(tuple(fn(name, self.__dict__[name])
                                      for name in self._components), self._sizes)

    def _map_values(self, fn, grad_fn, device=None):
        device = self._real if device is None else device
        if self._requires_grad and is_grad_enabled():
            raise NotImplementedError("tensorlib does not differentiate through sparse CSR "
                                      "tensors: use a COO tensor (to_sparse())")
        return self._with(lambda name, t: fn(t) if name == "_values_t" else t.to(device))

    def requires_grad_(self, requires_grad=True):
        if requires_grad:
            raise NotImplementedError("tensorlib does not differentiate through sparse CSR "
                                      "tensors: use a COO tensor (to_sparse())")
        return self

    def stride(self, dim=None):
        raise RuntimeError("Sparse CSR tensors do not have strides")

    def is_contiguous(self, memory_format=None):
        raise RuntimeError("Sparse CSR tensors do not have is_contiguous")

    def sparse_dim(self):
        return 2

    def dense_dim(self):
        return self._values_t.dim() - 1

    def crow_indices(self):
        return self._crow_t

    def col_indices(self):
        return self._col_t

    def values(self):
        return self._values_t

    def _rows(self):
        """The row of each entry (the COO row indices)."""
        if self._rows_cache is None:
            counts = self._crow_t[1:] - self._crow_t[:-1]
            self._rows_cache = tensorlib.repeat_interleave(
                tensorlib.arange(self._sizes[0], device=self._real), counts)
        return self._rows_cache

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is sparse_csr:
            return self
        if layout is tensorlib.sparse_csc:
            return self.to_sparse_csc()
        from tensorlib.sparse._coo import SparseCooTensor
        from tensorlib.sparse._kernels import coalesce_parts
        indices = tensorlib.stack([self._rows(), self._col_t])
        indices, values = coalesce_parts(indices, self._values_t, self._sizes)
        return SparseCooTensor._from_parts((indices, values), self._sizes, coalesced=True)

    to_sparse_coo = to_sparse

    def to_sparse_csr(self, dense_dim=None):
        return self

    def to_dense(self, dtype=None, *, masked_grad=None):
        out = self.to_sparse()._dense()
        return out if dtype is None else out.to(dtype)

    def t(self):
        _check_transposable(self)
        return coo_to_csr(self.to_sparse().t())

    def transpose(self, dim0, dim1):
        if {dim0 % 2, dim1 % 2} == {0, 1}:
            return self.t()
        return self

    @property
    def mT(self):                               # noqa: N802 - torch's name
        return self.t()

    def mul(self, other):
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return self._map_values(lambda v: v * other, None)
        raise NotImplementedError("tensorlib multiplies a sparse CSR tensor only by a number")

    __mul__ = __rmul__ = mul

    def neg(self):
        return self._map_values(lambda v: -v, None)

    __neg__ = neg

    def __matmul__(self, other):
        return tensorlib.matmul(self, other)

    def __rmatmul__(self, other):
        return tensorlib.matmul(other, self)


def _check_transposable(t):
    if t.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{t.dim()}D")


def coo_to_csr(coo):
    """A COO tensor of 2 sparse dims (and any dense dims) in CSR form (its coalesced
    entries)."""
    if coo.sparse_dim() != 2:
        raise RuntimeError(f"to_sparse_csr: expected a tensor of 2 sparse dims, got "
                           f"{coo.sparse_dim()} sparse and {coo.dense_dim()} dense dims")
    if coo._requires_grad and is_grad_enabled():
        raise NotImplementedError("tensorlib does not differentiate through sparse CSR "
                                  "tensors: keep the COO tensor")
    indices, values = coo._coalesced_parts()
    m = coo._sizes[0]
    counts = tensorlib.bincount(indices[0], minlength=m) if values._sizes[0] else \
        tensorlib.zeros(m, dtype=dt.int64, device=coo.device)
    crow = tensorlib.cat([tensorlib.zeros(1, dtype=dt.int64, device=coo.device),
                          counts.cumsum(0)])
    return SparseCsrTensor._from_parts((crow, indices[1].clone(), values), coo._sizes)


def dense_to_csr(dense, dense_dim=None):
    """Tensor.to_sparse_csr() of a dense matrix (with dense_dim trailing dense dims)."""
    if dense.dim() != 2 + (dense_dim or 0):
        raise RuntimeError(f"to_sparse_csr: tensorlib's CSR tensors are unbatched: expected "
                           f"{2 + (dense_dim or 0)} dims for dense_dim={dense_dim}, got a "
                           f"{dense.dim()}-D tensor")
    from tensorlib.sparse._coo import dense_to_coo
    return coo_to_csr(dense_to_coo(dense.detach(), sparse_dim=2))


# the names a compressed layout's messages use: (compressed indices, plain indices, what the
# pointers run over, the count the plain indices stay under, the layout's own constructor)
_ROW_NAMES = ("crow_indices", "col_indices", "rows", "ncols", "CSR")


def _index_tensor(x, device, names=_ROW_NAMES):
    t = x if isinstance(x, Tensor) else tensorlib.tensor(x, dtype=dt.int64, device=device)
    if device is not None:
        t = t.to(device)
    if t.dtype not in (dt.int32, dt.int64):
        raise RuntimeError(f"{names[0]} and {names[1]} must be an int32 or int64 tensor, "
                           f"got {t.dtype}")
    return t.to(dt.int64)


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None,
                      device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None):
    """A CSR matrix; `size` defaults to (len(crow_indices) - 1, max column + 1). The
    compressed-format invariants are checked (PyTorch's messages)."""
    parts, size = compressed_parts(crow_indices, col_indices, values, size, dtype, device,
                                   requires_grad, _ROW_NAMES)
    return SparseCsrTensor._from_parts(parts, size)


def compressed_parts(compressed, plain, values, size, dtype, device, requires_grad, names):
    """(pointers, indices, values) and the size of a CSR (or, with CSC's names and the sizes
    swapped by the caller, CSC) matrix, its invariants checked."""
    ptr_name, idx_name, over, bound, kind = names
    if requires_grad:
        raise NotImplementedError(f"tensorlib does not differentiate through sparse {kind} "
                                  f"tensors: use sparse_coo_tensor")
    values = values if isinstance(values, Tensor) else tensorlib.tensor(values, dtype=dtype)
    if device is not None:
        values = values.to(device)
    if dtype is not None:
        values = values.to(dtype)
    ptr = _index_tensor(compressed, values.device, names)
    idx = _index_tensor(plain, values.device, names)
    if ptr.dim() != 1 or idx.dim() != 1 or values.dim() < 1:
        raise RuntimeError(f"tensorlib's {kind} tensors are unbatched: {ptr_name} and "
                           f"{idx_name} must be 1-D and values at least 1-D")
    nnz = idx._sizes[0]
    if values._sizes[0] != nnz:
        raise RuntimeError(f"{idx_name} and values must have the same number of elements, "
                           f"but got {idx_name}.numel() = {nnz}, values.numel() = "
                           f"{values._sizes[0]}")
    major = ptr._sizes[0] - 1
    minor = int(idx.max().item()) + 1 if nnz else 0
    dense = tuple(values._sizes[1:])             # a hybrid tensor's dense dims
    if size is None:
        size = ((major, minor) if kind == "CSR" else (minor, major)) + dense
    size = tuple(int(s) for s in size)
    if len(size) != 2 + len(dense) or size[2:] != dense:
        raise RuntimeError(f"tensorlib's {kind} tensors have 2 sparse dims then the dense "
                           f"dims of values {list(dense)}, got size {list(size)}")
    n_major, n_minor = size[:2] if kind == "CSR" else size[1::-1]
    ptr_list = ptr.tolist()
    if len(ptr_list) != n_major + 1:
        raise RuntimeError(f"{ptr_name}.shape[-1] must be equal to the number of {over} + 1 "
                           f"(={n_major + 1}), but got {len(ptr_list)}")
    if ptr_list[0] != 0:
        raise RuntimeError(f"`{ptr_name}[..., 0] == 0` is not satisfied.")
    if ptr_list[-1] != nnz:
        raise RuntimeError(f"`{ptr_name}[..., -1] == nnz` is not satisfied.")
    if any(b < a for a, b in zip(ptr_list, ptr_list[1:])):
        raise RuntimeError(f"`0 <= {ptr_name}[..., 1:] - {ptr_name}[..., :-1] <= {bound}` is "
                           f"not satisfied.")
    if nnz and not (0 <= int(idx.min().item()) and int(idx.max().item()) < n_minor):
        raise RuntimeError(f"`0 <= {idx_name} < {bound}` is not satisfied.")
    return (ptr, idx, values.detach()), size


def _index_input(name, tensor):
    if tensor.dim() != 1:
        raise RuntimeError(f"Input is supposed to be a vector, but got {tensor.dim()} "
                           f"dimensional tensor.")
    if tensor.is_floating_point() or tensor.is_complex() or tensor.dtype == dt.bool_:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                  f"'{tensor.dtype.scalar_name}'")


def convert_indices_from_coo_to_csr(input, size, *, out_int32=False):
    """torch._convert_indices_from_coo_to_csr: the size + 1 row pointers of sorted row
    indices (pointer i counts the indices below i; PyG's index2ptr)."""
    _index_input("convert_indices_from_coo_to_csr", input)
    bounds = tensorlib.arange(size + 1, dtype=input.dtype, device=input.device)
    return tensorlib.searchsorted(input, bounds, out_int32=out_int32)


def convert_indices_from_csr_to_coo(crow_indices, col_indices, *, out_int32=False,
                                    transpose=False):
    """torch._convert_indices_from_csr_to_coo: the (2, nnz) row/column indices of CSR
    pointers (column/row with transpose)."""
    _index_input("convert_indices_from_csr_to_coo", crow_indices)
    dtype = dt.int32 if out_int32 else dt.int64
    counts = crow_indices[1:] - crow_indices[:-1]
    rows = tensorlib.arange(counts.numel(), dtype=dtype, device=crow_indices.device)
    rows = rows.repeat_interleave(counts)
    cols = col_indices.to(dtype)
    return tensorlib.stack((cols, rows) if transpose else (rows, cols))
