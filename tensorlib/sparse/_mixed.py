"""Where a sparse COO tensor meets a dense one or an op written for dense tensors, as the
sparse branches of optimizers (SM3, MADGRAD, AdaGrad-style) use them: zeros_like/empty_like,
`dense.add(sparse)` and `dense.add_(sparse)` (sub and `+=` too), `dense.sparse_mask(sparse)`,
`sparse * sparse`, `sparse.add_(sparse)`, zero_/neg_/mul_/div_/detach_, and the legacy
`sparse.new(...)` and `resize_as_`. Dense code never imports this package: it finds a sparse
operand's class in `tensorlib._layout.SPARSE_TYPES` and calls that class's hook
(`_sparse_like`, `_sparse_add`)."""
import numbers

import tensorlib
import tensorlib._C.dtypes as dt
from tensorlib._size import Size
from tensorlib._tensor import Tensor
from tensorlib.autograd.function import Function
from tensorlib.sparse import _kernels as K
from tensorlib.sparse._guard import not_supported

__all__ = ["sparse_like", "sparse_add", "sparse_mask", "mul_sparse", "add_sparse_",
           "zero_", "scale_values_", "detach_", "new", "resize_as_"]


def _coo(indices, values, sizes, coalesced=False):
    from tensorlib.sparse._coo import SparseCooTensor
    return SparseCooTensor._from_parts((indices, values), sizes, coalesced=coalesced)


def _empty_coo(sizes, sparse_dim, dtype, device):
    """A coalesced COO tensor of `sizes` with no entries and `sparse_dim` sparse dims."""
    indices = tensorlib.zeros((sparse_dim, 0), dtype=dt.int64, device=device)
    values = tensorlib.zeros((0,) + tuple(sizes[sparse_dim:]), dtype=dtype, device=device)
    return _coo(indices, values, tuple(sizes), coalesced=True)


# ---- zeros_like / empty_like ----------------------------------------------------------------
def sparse_like(t, fill_value, dtype, device, requires_grad):
    """zeros_like/empty_like of a sparse COO tensor: one with no entries, of t's size and
    sparse/dense dims (PyTorch's); any other fill is the fill PyTorch has no sparse kernel for."""
    if fill_value is not None and not (fill_value == 0 and not isinstance(fill_value, bool)):
        raise not_supported("fill_.Scalar", t._layout, t._real)
    if device is not None:
        from tensorlib._C.device import canonical
        device = canonical(device)
    out = _empty_coo(t._sizes, t.sparse_dim(), dtype or t._dtype,
                     t._real if device is None else device)
    if requires_grad:
        out.requires_grad_(True)
    return out


# ---- dense + sparse ------------------------------------------------------------------------
def _check_alpha(alpha, result):
    if alpha is True or alpha is False:
        if result is not dt.bool_:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, complex) and not result.is_complex:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a "
                           "complex number.")
    elif isinstance(alpha, float) and not (result.is_floating_point or result.is_complex):
        raise RuntimeError("For integral input tensors, argument alpha must not be a "
                           "floating point number.")


def _accumulate(target, sparse, alpha, dtype):
    """target += alpha * sparse (of target's dtype `dtype`; duplicates add up), no autograd;
    target may be non-contiguous."""
    values = sparse._values_t
    if values.numel():
        values = values.to(dtype)
        if not (type(alpha) is int and alpha == 1):
            values = values * alpha
        index = tuple(sparse._indices_t[d] for d in range(sparse._indices_t._sizes[0]))
        target.index_put_(index, values, accumulate=True)
    return target


def _dense_plus_sparse(dense, sparse, alpha, dtype):
    """dense + alpha * sparse in `dtype`, no autograd: a new tensor."""
    return _accumulate(dense.to(dtype, copy=True), sparse, alpha, dtype)


class DenseAddSparse(Function):
    """dense + alpha * sparse: a dense result; both gradients are dense, as PyTorch's (the
    sparse operand's is alpha times the incoming one)."""

    @staticmethod
    def forward(ctx, dense, sparse, alpha, dtype):
        ctx.alpha = alpha
        return _dense_plus_sparse(dense, sparse, alpha, dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad if ctx.alpha == 1 else grad * ctx.alpha, None, None


def _check_dense_sparse(dense, sparse):
    if dense._sizes != sparse._sizes:
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(dense._sizes)} while other has size "
                           f"{list(sparse._sizes)} (FYI: dense-sparse addition does not "
                           f"currently support broadcasting)")
    if dense.device != sparse.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {dense.device} and {sparse.device}!")


def sparse_add(a, b, alpha, inplace):
    """tensorlib.add / Tensor.add / Tensor.add_ (and sub, alpha negated) with a sparse
    operand: sparse + sparse is the sparse type's own; dense + sparse is dense (in place:
    written into the dense tensor); sparse + dense is PyTorch's error."""
    from tensorlib.sparse._base import SparseTensor
    if isinstance(a, SparseTensor):
        return a.add_(b, alpha=alpha) if inplace else a.add(b, alpha=alpha)
    if not isinstance(a, Tensor):
        raise TypeError(f"add(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(a).__name__}")
    _check_dense_sparse(a, b)
    dtype = dt.promote_types(a._dtype, b._dtype)
    _check_alpha(alpha, dtype)
    if not inplace:
        return DenseAddSparse.apply(a, b, alpha, dtype)
    if not dt.can_cast(dtype, a._dtype):
        raise RuntimeError(f"Can't convert result type {dtype.scalar_name} to output "
                           f"{a._dtype.scalar_name} in add operation")
    if tensorlib.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        from tensorlib.autograd.recording import apply_inplace
        return apply_inplace(a, lambda src: DenseAddSparse.apply(src, b, alpha, dtype)
                             .to(a._dtype), needs_old_self=False)
    if dtype is not a._dtype:        # summed in the wider dtype, rounded once (PyTorch's)
        return a.copy_(_dense_plus_sparse(a, b, alpha, dtype))
    return _accumulate(a, b, alpha, dtype)


# ---- sparse_mask ---------------------------------------------------------------------------
class SparseMask(Function):
    """dense.sparse_mask(mask): the dense values at the mask's entries (each duplicate too);
    the dense tensor's gradient is the incoming one at each entry, summed into the entry's
    position (a position held twice gets it twice), zero elsewhere."""

    @staticmethod
    def forward(ctx, dense, mask):
        ctx.mask = mask.detach()
        indices = mask._indices_t
        return _coo(indices, K.values_at(dense, indices, dense._sizes), dense._sizes,
                    coalesced=mask._coalesced)

    @staticmethod
    def backward(ctx, grad):
        indices, sizes = ctx.mask._indices_t, ctx.mask._sizes
        return _coo(indices, K.values_at(grad, indices, sizes), sizes)._dense(), None


def sparse_mask(self, mask):
    """Tensor.sparse_mask(mask) of a dense tensor: a sparse COO tensor with the mask's indices
    (coalesced as the mask is) and this tensor's values there."""
    if not getattr(mask, "is_sparse", False):
        raise RuntimeError(f"sparse_mask expects mask to be sparse, but got "
                           f"{'SparseCsr' if getattr(mask, 'is_sparse_csr', False) else 'Strided'}"
                           f" layout")
    if self._sizes != mask._sizes:
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self._sizes)} but mask has size {list(mask._sizes)}")
    if self.device != mask.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {self.device} and {mask.device}!")
    return SparseMask.apply(self, mask)


# ---- sparse * sparse, sparse += sparse ------------------------------------------------------
def _positions(indices, within, sizes):
    """For each entry of `indices`: its position among the coalesced `within` entries, and
    whether it is there."""
    sparse_sizes = tuple(sizes[:indices._sizes[0]])
    have, want = K.linear_keys(within, sparse_sizes), K.linear_keys(indices, sparse_sizes)
    pos = tensorlib.searchsorted(have, want).clamp_(max=max(have._sizes[0] - 1, 0))
    return pos, have.index_select(0, pos) == want


def mul_sparse(a, b):
    """sparse * sparse of one size: PyTorch's entries. Both coalesced: the common entries,
    coalesced. Otherwise every entry of one operand (the uncoalesced one; of two, the one with
    fewer entries, the second on a tie) times the other's coalesced value there (zero where
    it has none), uncoalesced."""
    if a._sizes != b._sizes:
        raise NotImplementedError(f"mul: tensorlib multiplies sparse tensors of one size only "
                                  f"(got {list(a._sizes)} and {list(b._sizes)})")
    if a._real != b._real:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {a._real} and {b._real}!")
    if tensorlib.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        raise NotImplementedError("tensorlib does not differentiate the product of two sparse "
                                  "tensors")
    dtype = dt.promote_types(a._dtype, b._dtype)
    if a._nnz() == 0 or b._nnz() == 0:
        return _empty_coo(a._sizes, a.sparse_dim(), dtype, a._real)
    if a._coalesced and b._coalesced:
        pos, found = _positions(a._indices_t, b._indices_t, a._sizes)
        keep = found.nonzero().reshape(-1)
        values = a._values_t.index_select(0, keep).to(dtype) * \
            b._values_t.index_select(0, pos.index_select(0, keep)).to(dtype)
        return _coo(a._indices_t.index_select(1, keep), values, a._sizes, coalesced=True)
    if a._coalesced or b._coalesced:       # the uncoalesced one gives the entries
        source, other = (b, a) if a._coalesced else (a, b)
    else:
        source, other = (a, b) if a._nnz() < b._nnz() else (b, a)
    other_values = K.values_at(other, source._indices_t, other._sizes)
    values = source._values_t.to(dtype) * other_values.to(dtype)
    return _coo(source._indices_t, values, source._sizes, coalesced=source._coalesced)


def add_sparse_(self, other, alpha):
    """sparse.add_(sparse, alpha): self's components become those of self + alpha * other."""
    if tensorlib.is_grad_enabled() and (self.requires_grad or other.requires_grad):
        raise NotImplementedError("tensorlib does not record in-place ops on sparse tensors "
                                  "for autograd")
    if not isinstance(other, Tensor) or not other.is_sparse:
        if isinstance(other, Tensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                               "instead.")
        raise not_supported("add_.Scalar", self._layout, self._real)
    total = self.add(other, alpha=alpha)
    if not dt.can_cast(total._dtype, self._dtype):
        raise RuntimeError(f"Can't convert result type {total._dtype.scalar_name} to output "
                           f"{self._dtype.scalar_name} in add operation")
    _set_parts(self, total._indices_t, total._values_t.to(self._dtype), self._sizes,
               total._coalesced)
    return self


def _check_inplace(self, op):
    if tensorlib.is_grad_enabled() and self.requires_grad:
        raise NotImplementedError(f"tensorlib does not record the in-place {op} of a sparse "
                                  f"tensor for autograd")


def zero_(self):
    """sparse.zero_(): no entries left, coalesced (the sparse and dense dims kept)."""
    _check_inplace(self, "zero_")
    empty = _empty_coo(self._sizes, self.sparse_dim(), self._dtype, self._real)
    _set_parts(self, empty._indices_t, empty._values_t, self._sizes, True)
    return self


def scale_values_(self, op, other):
    """sparse.neg_() / mul_(number) / div_(number): the values changed in place, entries
    kept; the coalesced flag too, except that PyTorch's mul_ clears it."""
    _check_inplace(self, op)
    if op != "neg_":
        if isinstance(other, Tensor) and other.dim() == 0 and not other.is_sparse:
            other = other.item()
        if not isinstance(other, numbers.Number) or isinstance(other, bool):
            raise NotImplementedError(f"tensorlib runs the in-place {op} of a sparse tensor "
                                      f"with a number only")
    getattr(self._values_t, op)(*(() if op == "neg_" else (other,)))
    if op == "mul_":
        self._coalesced = False
    self._coalesced_cache = None
    self._storage.version += 1
    return self


def detach_(self):
    self._grad_fn = None
    self._requires_grad = False
    return self


def _set_parts(self, indices, values, sizes, coalesced):
    self._indices_t, self._values_t = indices, values
    self._sizes, self._strides = tuple(sizes), (0,) * len(sizes)
    self._coalesced, self._coalesced_cache = coalesced, None
    self._storage.version += 1


# ---- the legacy new and resize_as_ ---------------------------------------------------------
def new(self, *args, device=None):
    """sparse.new(): an empty sparse tensor of size (0,); new(indices, values[, size]): a COO
    tensor of them (the values' dtype); new(*sizes) or new(torch.Size): an empty one of those
    sizes (a tuple or list is refused, as PyTorch does); on this tensor's device unless
    `device` says."""
    from tensorlib.sparse._coo import sparse_coo_tensor
    device = self._real if device is None else device
    if len(args) in (2, 3) and isinstance(args[0], Tensor) and isinstance(args[1], Tensor):
        return sparse_coo_tensor(*args, device=device)
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    elif len(args) == 1 and isinstance(args[0], (tuple, list)):
        raise TypeError("SparseTensor.new(sequence) only accepts sizes.  Please use "
                            "torch.sparse_coo_tensor() or construct a strided tensor and "
                            "convert it to sparse via to_sparse.")
    if all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
        from tensorlib._C.device import canonical
        sizes = tuple(int(a) for a in args) or (0,)
        return _empty_coo(sizes, len(sizes), self._dtype, canonical(device))
    raise TypeError(f"new() received an invalid combination of arguments - got "
                    f"({', '.join(type(a).__name__ for a in args)}), but expected one of: "
                    f"(*, device), (Tensor indices, Tensor values, *, device), (Tensor "
                    f"indices, Tensor values, tuple of ints size, *, device), (tuple of ints "
                    f"size, *, device)")


_RESIZE_HELP = (
    "You could try the following options:\n1. If you need an empty sparse tensor of this "
    "size, call `x = torch.sparse_coo_tensor(size)`.\n2. If you need to resize this tensor, "
    "you have the following options:\n    1. For both sparse and dense dimensions, keep the "
    "number of them constant and the size of them non-shrinking, and then try the same call "
    "again.\n    2. Or, create a new sparse tensor with the correct indices and values from "
    "this sparse tensor.")


def resize_as_(self, the_template, *, memory_format=None):
    """sparse.resize_as_(sparse): the template's size and sparse/dense dims; a tensor with
    entries keeps them, so it may only grow, keeping its numbers of sparse and dense dims."""
    if not getattr(the_template, "is_sparse", False):
        raise not_supported("resize_", self._layout, self._real)
    sparse_dim, dense_dim = the_template.sparse_dim(), the_template.dense_dim()
    sizes = the_template._sizes
    if self._nnz() == 0:
        empty = _empty_coo(sizes, sparse_dim, self._dtype, self._real)
        _set_parts(self, empty._indices_t, empty._values_t, sizes, True)
        return self
    for what, old, new_ in (("sparse", self.sparse_dim(), sparse_dim),
                            ("dense", self.dense_dim(), dense_dim)):
        if old != new_:
            raise RuntimeError(f"changing the number of {what} dimensions (from {old} to "
                               f"{new_}) on a non-empty sparse tensor is not supported.\n"
                               f"{_RESIZE_HELP}")
    for what, old, new_ in (("sparse", self._sizes[:sparse_dim], sizes[:sparse_dim]),
                            ("dense", self._sizes[sparse_dim:], sizes[sparse_dim:])):
        if any(n < o for o, n in zip(old, new_)):
            raise RuntimeError(f"shrinking the size of {what} dimensions (from {list(old)} to "
                               f"{list(new_)}) on a non-empty sparse tensor is not supported."
                               f"\n{_RESIZE_HELP}")
    values = self._values_t
    if values._sizes[1:] != sizes[sparse_dim:]:
        # grown dense dims: PyTorch resizes the values' storage, so the old elements keep
        # their row-major places and the new room (uninitialised there) is zero here
        grown = tensorlib.zeros((values._sizes[0],) + tuple(sizes[sparse_dim:]),
                                dtype=values.dtype, device=values.device)
        grown.view(-1)[:values.numel()] = values.reshape(-1)
        values = grown
    _set_parts(self, self._indices_t, values, sizes, self._coalesced)
    return self
