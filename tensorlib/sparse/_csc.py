"""The sparse CSC matrix (torch.sparse_csc): compressed column pointers (n + 1), row indices
and values (nnz each). Those are the arrays of the CSR form of the transpose, so `t()` is
that CSR tensor (as in PyTorch) and products and conversions go through it. Like tensorlib's
CSR tensors: 2-D without dense dims, no autograd through the tensor itself."""
import tensorlib
from tensorlib._C.grad_mode import is_grad_enabled
from tensorlib._layout import sparse_csc
from tensorlib.sparse._base import SparseTensor
from tensorlib.sparse._csr import (SparseCsrTensor, _check_transposable, coo_to_csr,
                                   compressed_parts)

__all__ = ["SparseCscTensor", "sparse_csc_tensor", "to_csc"]

_COLUMN_NAMES = ("ccol_indices", "row_indices", "columns", "nrows", "CSC")


def _no_grad_message():
    return "tensorlib does not differentiate through sparse CSC tensors: use a COO tensor"


class SparseCscTensor(SparseTensor):
    """A Tensor of layout sparse_csc (see _guard.py's NOTE)."""

    _layout = sparse_csc
    _components = ("_ccol_t", "_row_t", "_values_t")
    is_sparse = False
    is_sparse_csr = False

    @classmethod
    def _from_parts(cls, parts, sizes, coalesced=None):
        ccol, row, values = parts
        return cls._make(tuple(sizes), values._dtype, values._device, _ccol_t=ccol,
                         _row_t=row, _values_t=values)

    def _with(self, fn):
        return self._from_parts(tuple(fn(name, self.__dict__[name])
                                      for name in self._components), self._sizes)

    def _map_values(self, fn, grad_fn, device=None):
        device = self._real if device is None else device
        if self._requires_grad and is_grad_enabled():
            raise NotImplementedError(_no_grad_message())
        return self._with(lambda name, t: fn(t) if name == "_values_t" else t.to(device))

    def requires_grad_(self, requires_grad=True):
        if requires_grad:
            raise NotImplementedError(_no_grad_message())
        return self

    def stride(self, dim=None):
        raise RuntimeError("Sparse CSC tensors do not have strides")

    def is_contiguous(self, memory_format=None):
        raise RuntimeError("Sparse CSC tensors do not have is_contiguous")

    def sparse_dim(self):
        return 2

    def dense_dim(self):
        return self._values_t.dim() - 1

    def ccol_indices(self):
        return self._ccol_t

    def row_indices(self):
        return self._row_t

    def values(self):
        return self._values_t

    # ---- the transpose and conversions ----------------------------------------------------
    def t(self):
        """The CSR tensor of the transpose: the same three arrays."""
        _check_transposable(self)
        m, n = self._sizes
        return SparseCsrTensor._from_parts((self._ccol_t, self._row_t, self._values_t), (n, m))

    def transpose(self, dim0, dim1):
        if {dim0 % 2, dim1 % 2} == {0, 1}:
            return self.t()
        return self

    @property
    def mT(self):                               # noqa: N802 - torch's name
        return self.t()

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is sparse_csc:
            return self
        if layout is tensorlib.sparse_csr:
            return self.to_sparse_csr()
        # PyTorch's: the entries in column order, flagged uncoalesced
        from tensorlib.sparse._coo import SparseCooTensor
        n = self._sizes[1]
        counts = self._ccol_t[1:] - self._ccol_t[:-1]
        cols = tensorlib.arange(n, device=self._real).repeat_interleave(counts)
        indices = tensorlib.stack([self._row_t, cols])
        return SparseCooTensor._from_parts((indices, self._values_t), self._sizes)

    to_sparse_coo = to_sparse

    def to_sparse_csr(self, dense_dim=None):
        return coo_to_csr(self.to_sparse())

    def to_sparse_csc(self, dense_dim=None):
        return self

    def to_dense(self, dtype=None, *, masked_grad=None):
        out = self.to_sparse().to_dense()
        return out if dtype is None else out.to(dtype)

    # ---- arithmetic -----------------------------------------------------------------------
    def mul(self, other):
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return self._map_values(lambda v: v * other, None)
        raise NotImplementedError("tensorlib multiplies a sparse CSC tensor only by a number")

    __mul__ = __rmul__ = mul

    def neg(self):
        return self._map_values(lambda v: -v, None)

    __neg__ = neg

    def __matmul__(self, other):
        return tensorlib.matmul(self, other)

    def __rmatmul__(self, other):
        return tensorlib.matmul(other, self)


def to_csc(self, dense_dim=None):
    """Tensor.to_sparse_csc() of a dense tensor (dense_dim trailing dense dims) or a COO/CSR
    tensor of 2 sparse dims: the CSR form of its transpose, read as CSC."""
    from tensorlib.sparse._coo import SparseCooTensor, dense_to_coo
    if isinstance(self, SparseTensor):
        coo = self.to_sparse()
    else:
        if self.dim() != 2 + (dense_dim or 0):
            raise RuntimeError(f"to_sparse_csc: tensorlib's CSC tensors are unbatched: "
                               f"expected {2 + (dense_dim or 0)} dims for dense_dim="
                               f"{dense_dim}, got a {self.dim()}-D tensor")
        coo = dense_to_coo(self.detach(), sparse_dim=2)
    if coo.sparse_dim() != 2:
        raise RuntimeError(f"to_sparse_csc: expected a tensor of 2 sparse dims, got "
                           f"{coo.sparse_dim()}")
    indices, values = coo._coalesced_parts()
    m, n = coo._sizes[:2]
    flipped = SparseCooTensor._from_parts((indices.flip(0), values),
                                          (n, m) + tuple(coo._sizes[2:]))
    csr_t = coo_to_csr(flipped)
    return SparseCscTensor._from_parts((csr_t._crow_t, csr_t._col_t, csr_t._values_t),
                                       coo._sizes)


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None,
                      device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None):
    """A CSC matrix; `size` defaults to (max row + 1, len(ccol_indices) - 1). The
    compressed-format invariants are checked (PyTorch's messages)."""
    parts, size = compressed_parts(ccol_indices, row_indices, values, size, dtype, device,
                                   requires_grad, _COLUMN_NAMES)
    return SparseCscTensor._from_parts(parts, size)
