"""The sparse COO tensor (torch.sparse_coo): `sparse_dim` x nnz int64 indices and values of
shape (nnz, *dense dims), duplicates allowed until coalesce(). `sparse_coo_tensor` makes one,
`Tensor.to_sparse()` turns a dense tensor into one."""
import numbers

import tensorlib
import tensorlib._C.dtypes as dt
from tensorlib._C.views import wrap_dim
from tensorlib._layout import sparse_coo
from tensorlib._tensor import Tensor
from tensorlib.sparse import _autograd as A, _kernels as K, _mixed as M
from tensorlib.sparse._base import SparseTensor

__all__ = ["SparseCooTensor", "sparse_coo_tensor", "dense_to_coo"]


class SparseCooTensor(SparseTensor):
    """A Tensor of layout sparse_coo (see the module docstring and _guard.py's NOTE)."""

    _layout = sparse_coo
    _components = ("_indices_t", "_values_t")
    is_sparse = True
    is_sparse_csr = False

    @classmethod
    def _from_parts(cls, parts, sizes, coalesced=False):
        indices, values = parts
        return cls._make(tuple(sizes), values._dtype, values._device, _indices_t=indices,
                         _values_t=values, _coalesced=bool(coalesced), _coalesced_cache=None)

    def _with(self, fn):
        return self._from_parts((fn("_indices_t", self._indices_t),
                                 fn("_values_t", self._values_t)), self._sizes,
                                coalesced=self._coalesced)

    def _map_values(self, fn, grad_fn, device=None):
        return A.MapValues.apply(self, fn, grad_fn, self._real if device is None else device)

    # ---- structure ------------------------------------------------------------------------
    def sparse_dim(self):
        return self._indices_t._sizes[0]

    def dense_dim(self):
        return self._values_t.dim() - 1

    def is_coalesced(self):
        return self._coalesced

    def _indices(self):
        return self._indices_t

    def _values(self):
        return self._values_t

    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._indices_t

    def values(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return A.Values.apply(self)

    def _coalesced_parts(self):
        """(indices, values) of the coalesced form, without autograd; kept until the
        components are written in place."""
        if self._coalesced:
            return self._indices_t, self._values_t
        stamp = (self._indices_t._version, self._values_t._version)
        cache = self._coalesced_cache
        if cache is None or cache[0] != stamp:
            cache = self._coalesced_cache = (stamp, K.coalesce_parts(
                self._indices_t, self._values_t, self._sizes))
        return cache[1]

    def _coalesced_(self, coalesced):
        """Tensor._coalesced_: set the coalesced flag without checking the indices, for
        callers that built sorted, unique indices themselves (as PyTorch trusts them)."""
        self._coalesced = bool(coalesced)
        return self

    def coalesce(self):
        if self._coalesced:
            return self
        return A.Coalesce.apply(self)

    # ---- conversions ----------------------------------------------------------------------
    def _dense(self):
        """The dense tensor, without autograd."""
        values = self._values_t
        out = tensorlib.zeros(self._sizes, dtype=self._dtype, device=self._real)
        nsparse = self._indices_t._sizes[0]
        if values.numel() == 0:              # no entries, or a dense dim of size 0
            return out
        flat = out.view((-1,) + self._sizes[nsparse:])
        flat.index_add_(0, K.linear_keys(self._indices_t, self._sizes[:nsparse]), values)
        return out

    def to_dense(self, dtype=None, *, masked_grad=None):
        out = A.ToDense.apply(self)
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is not None and layout is not sparse_coo:
            if layout is tensorlib.sparse_csr:
                return self.to_sparse_csr()
            if layout is tensorlib.sparse_csc:
                return self.to_sparse_csc()
            raise NotImplementedError(f"to_sparse: layout {layout} is not supported")
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError(f"sparse_dim argument must match self.sparse_dim() "
                               f"({self.sparse_dim()}), got {sparse_dim}")
        return self

    def to_sparse_coo(self):
        return self

    def to_sparse_csr(self, dense_dim=None):
        from tensorlib.sparse._csr import coo_to_csr
        return coo_to_csr(self)

    def index_select(self, dim, index):
        """Tensor.index_select: along a sparse dim, for each position of `index` in turn the
        entries at that coordinate (in entry order), renumbered; along a dense dim, the
        values' slices. Flagged uncoalesced unless it has at most one entry, as PyTorch's."""
        dim = wrap_dim(dim, self.dim())
        if not isinstance(index, Tensor) or isinstance(index, SparseTensor) or \
                index.dim() != 1 or index.dtype is not dt.int64:
            raise IndexError("index_select() argument index must be 1-D strided (non-sparse) "
                             "long-tensor.")
        size = self._sizes[dim]
        wrapped = tensorlib.where(index < 0, index + size, index)
        if index.numel() and (bool((wrapped < 0).any()) or bool((wrapped >= size).any())):
            bad = int(index[(wrapped < 0) | (wrapped >= size)][0].item())
            raise IndexError(f"index_select(): index contains {bad} that is out of range for "
                             f"tensor of size {list(self._sizes)} at dimension {dim}")
        sizes = self._sizes[:dim] + (index.numel(),) + self._sizes[dim + 1:]
        nsparse = self.sparse_dim()
        if dim >= nsparse:
            values = self._values_t.index_select(dim - nsparse + 1, wrapped)
            return self._from_parts((self._indices_t, values), sizes, self._nnz() <= 1)
        keys = self._indices_t[dim]
        order = keys.argsort(stable=True)
        sorted_keys = keys.index_select(0, order)
        low = tensorlib.searchsorted(sorted_keys, wrapped)
        counts = tensorlib.searchsorted(sorted_keys, wrapped, right=True) - low
        positions = tensorlib.arange(index.numel(), device=self._real).repeat_interleave(counts)
        starts = (counts.cumsum(0) - counts).repeat_interleave(counts)
        within = tensorlib.arange(positions.numel(), device=self._real) - starts
        entries = order.index_select(0, low.repeat_interleave(counts) + within)
        indices = self._indices_t.index_select(1, entries)
        indices[dim] = positions
        return self._from_parts((indices, self._values_t.index_select(0, entries)), sizes,
                                entries.numel() <= 1)

    # ---- transposes -----------------------------------------------------------------------
    def _transposed(self, dim0, dim1):
        rows = list(range(self._indices_t._sizes[0]))
        rows[dim0], rows[dim1] = rows[dim1], rows[dim0]
        sizes = list(self._sizes)
        sizes[dim0], sizes[dim1] = sizes[dim1], sizes[dim0]
        return self._from_parts((self._indices_t[rows], self._values_t), sizes)

    def transpose(self, dim0, dim1):
        n = self.dim()
        dim0, dim1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
        nsparse = self.sparse_dim()
        if dim0 == dim1:
            return self
        if dim0 >= nsparse or dim1 >= nsparse:        # PyTorch's rule: sparse dims only
            raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got "
                               f"sparse_dim: {nsparse}, d0: {dim0}, d1: {dim1}")
        return A.Transpose.apply(self, dim0, dim1)

    swapaxes = swapdims = transpose

    def t(self):
        if self.sparse_dim() > 2 or self.dense_dim() > 0:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, "
                               f"but got {self.sparse_dim()} sparse and {self.dense_dim()} "
                               f"dense dimensions")
        return self if self.dim() < 2 else self.transpose(0, 1)

    @property
    def mT(self):                               # noqa: N802 - torch's name
        return self.transpose(-2, -1)

    @property
    def T(self):                                # noqa: N802 - torch's name
        return self.t()

    # ---- arithmetic -----------------------------------------------------------------------
    def add(self, other, *, alpha=1):
        if isinstance(other, SparseCooTensor):
            if other._sizes != self._sizes:
                raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but "
                                   f"{list(self._sizes)} != {list(other._sizes)}")
            if other._real is not self._real:
                raise RuntimeError(f"Expected all tensors to be on the same device, but found "
                                   f"at least two devices, {self._real} and {other._real}!")
            dtype = dt.promote_types(self._dtype, other._dtype)
            a, b = self.to(dtype), other.to(dtype)
            return A.Add.apply(a, b, alpha)
        if isinstance(other, Tensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                               "instead.")
        raise NotImplementedError("tensorlib adds a number to a sparse tensor as PyTorch does "
                                  "not: use to_dense() first")

    def sub(self, other, *, alpha=1):
        return self.add(other, alpha=-alpha)

    def add_(self, other, *, alpha=1):
        return M.add_sparse_(self, other, alpha)

    def sub_(self, other, *, alpha=1):
        return M.add_sparse_(self, other, -alpha)

    __iadd__ = add_
    __isub__ = sub_
    zero_ = M.zero_
    detach_ = M.detach_

    def neg_(self):
        return M.scale_values_(self, "neg_", None)

    def mul_(self, other):
        return M.scale_values_(self, "mul_", other)

    def div_(self, other):
        return M.scale_values_(self, "div_", other)

    __imul__ = mul_
    __itruediv__ = div_

    # the hooks of the dense ops (see _mixed.py): zeros_like/empty_like, add/sub
    _sparse_like = M.sparse_like
    _sparse_add = staticmethod(M.sparse_add)
    new = M.new
    resize_as_ = M.resize_as_

    __add__ = add
    __sub__ = sub

    def __radd__(self, other):
        """dense + sparse: a dense result (PyTorch's add(dense, sparse))."""
        if isinstance(other, Tensor) and not isinstance(other, SparseTensor):
            return other + self.to_dense()
        return self.add(other)

    def __rsub__(self, other):
        if isinstance(other, Tensor) and not isinstance(other, SparseTensor):
            return other - self.to_dense()
        raise NotImplementedError("tensorlib subtracts a sparse tensor only from a dense or "
                                  "sparse one")

    def mul(self, other):
        if isinstance(other, SparseCooTensor):
            return M.mul_sparse(self, other)
        if isinstance(other, Tensor) and other.dim() == 0 and not other.is_sparse:
            other = other.item()
        if isinstance(other, numbers.Number) and not isinstance(other, bool):
            return self._map_values(lambda v: v * other, lambda g: g * other)
        raise NotImplementedError("tensorlib multiplies a sparse tensor only by a number or a "
                                  "sparse tensor")

    __mul__ = __rmul__ = mul

    def div(self, other):
        if isinstance(other, Tensor) and other.dim() == 0 and not other.is_sparse:
            other = other.item()
        if isinstance(other, numbers.Number) and not isinstance(other, bool):
            return self._map_values(lambda v: v / other, lambda g: g / other)
        raise NotImplementedError("tensorlib divides a sparse tensor only by a number")

    __truediv__ = div

    def neg(self):
        return self._map_values(lambda v: -v, lambda g: -g)

    __neg__ = neg

    def __pos__(self):
        return self

    def pow(self, exponent):
        if not isinstance(exponent, numbers.Number) or isinstance(exponent, bool) \
                or exponent <= 0:
            raise NotImplementedError("tensorlib raises a sparse tensor only to a positive "
                                      "number (the power that keeps zeros)")
        return A.Unary.apply(self, lambda v: v.pow(exponent))

    __pow__ = pow

    def __matmul__(self, other):
        return tensorlib.matmul(self, other)

    def __rmatmul__(self, other):
        return tensorlib.matmul(other, self)

    def sum(self, dim=None, keepdim=False, dtype=None):
        from tensorlib.sparse._ops import sum as sparse_sum
        if keepdim:
            raise RuntimeError("sum of a sparse tensor does not take keepdim=True")
        return sparse_sum(self, dim, dtype=dtype)


def _as_tensor(x, dtype=None, device=None):
    if isinstance(x, Tensor):
        return x.to(device=device) if device is not None else x
    return tensorlib.tensor(x, dtype=dtype, device=device)


def sparse_coo_tensor(indices=None, values=None, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None,
                      is_coalesced=None):
    """A sparse COO tensor from `indices` (sparse_dim x nnz, any integer or float dtype, taken
    as int64) and `values` (nnz, *dense dims); `size` defaults to the smallest that holds
    the indices. Indices out of `size` raise PyTorch's invariant error. With a size alone
    (`sparse_coo_tensor(size=(5, 3))` or `sparse_coo_tensor((5, 3))`), an empty one."""
    if values is None:
        if size is None and indices is None:
            raise TypeError("sparse_coo_tensor() needs indices and values, or a size")
        sizes = [int(s) for s in (size if size is not None else indices)]
        indices = tensorlib.zeros((len(sizes), 0), dtype=dt.int64, device=device)
        values = tensorlib.zeros((0,), dtype=dtype or dt.get_default_dtype(), device=device)
        size = sizes
    values = _as_tensor(values, dtype, device)
    if dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    if device is None:
        device = values.device
    indices = _as_tensor(indices, dt.int64, values.device)
    if indices.dtype is not dt.int64:
        indices = indices.to(dt.int64)
    if values.dim() == 0:
        raise RuntimeError("values must be at least 1-dimensional, got a 0-dim tensor")
    if size is not None and indices.dim() > 0:          # PyTorch checks this one first
        _check_size_length(size, indices._sizes[0], values.dim() - 1)
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: "
                           f"{list(indices.shape)}")
    nsparse, nnz = indices._sizes
    if values._sizes[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {values._sizes[0]}")
    dense_sizes = values._sizes[1:]
    bounds = indices.amax(1).tolist() if nnz else [-1] * nsparse
    if size is None:
        sizes = tuple(b + 1 for b in bounds) + dense_sizes
    else:
        sizes = tuple(int(s) for s in size)
        if sizes[nsparse:] != dense_sizes:
            raise RuntimeError(f"values has incorrect size, expected "
                               f"{[nnz] + list(sizes[nsparse:])}, got {list(values.shape)}")
    for d, bound in enumerate(bounds):
        if bound >= sizes[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{sizes[d]} but found index {bound}")
    if nnz and bool((indices.amin() < 0).item()):
        d = int(indices.amin(1).argmin().item())
        raise RuntimeError(f"found negative index {int(indices[d].amin().item())} for dim {d}")
    coalesced = bool(is_coalesced) or nnz <= 1
    out = A.FromValues.apply(indices, values, sizes, coalesced)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _check_size_length(size, nsparse, ndense):
    if len(size) != nsparse + ndense:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) "
                           f"= {len(size)}, sparse_dim = {nsparse}, dense_dim = {ndense}")


def dense_to_coo(dense, sparse_dim=None):
    """The entries of `dense` whose (sub-)tensor over the dense dims is not all zero; the
    result is coalesced (sorted row-major)."""
    n = dense.dim()
    sparse_dim = n if sparse_dim is None else sparse_dim
    if not 0 <= sparse_dim <= n:
        raise RuntimeError(f"sparse_dim must be in [0, {n}], got {sparse_dim}")
    lead = dense._sizes[:sparse_dim]
    flat = dense.reshape((-1,) + dense._sizes[sparse_dim:]) if sparse_dim else \
        dense.unsqueeze(0)
    nonzero = flat != 0
    if flat.dim() > 1:
        nonzero = nonzero.reshape(flat._sizes[0], -1).any(1)
    keys = nonzero.nonzero().reshape(-1)
    indices = K.unravel_keys(keys, lead) if sparse_dim else \
        tensorlib.zeros((0, keys._sizes[0]), dtype=dt.int64, device=dense.device)
    values = flat.index_select(0, keys)
    return SparseCooTensor._from_parts((indices, values), dense._sizes, coalesced=True)


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """Tensor.to_sparse() of a dense tensor: COO (or `layout`), coalesced."""
    if layout is not None and layout is not sparse_coo:
        if layout is tensorlib.sparse_csr:
            return self.to_sparse_csr()
        if layout is tensorlib.sparse_csc:
            return self.to_sparse_csc()
        if layout is tensorlib.strided:
            return self
        raise NotImplementedError(f"to_sparse: layout {layout} is not supported in tensorlib")
    if sparse_dim is not None:
        n = self.dim()
        if n > 0 and sparse_dim <= 0:
            raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when "
                               "self.dim()>0")
        if not 0 <= sparse_dim <= n:
            raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{n}] "
                               f"range, but {sparse_dim} is given")
    return A.ToSparse.apply(self, sparse_dim)


# the elementwise functions that keep zeros (PyTorch runs these on sparse COO tensors)
ZERO_PRESERVING = ("abs", "sqrt", "sin", "tan", "tanh", "relu", "sign", "sgn", "floor", "ceil",
                   "round", "trunc", "expm1", "log1p", "asin", "arcsin", "atan", "arctan",
                   "sinh", "asinh", "atanh", "erf", "erfinv", "square", "frac", "deg2rad",
                   "rad2deg")


def _unary(name):
    def method(self):
        return A.Unary.apply(self, lambda v: getattr(v, name)())
    method.__name__ = name
    method.__doc__ = f"{name} of the coalesced values (zeros stay zeros)."
    return method


for _name in ZERO_PRESERVING:
    setattr(SparseCooTensor, _name, _unary(_name))
