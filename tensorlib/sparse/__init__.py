"""tensorlib.sparse (torch.sparse): sparse COO and CSR tensors, their products and reductions.

One module per job: `_guard` (a sparse tensor's dense fields and the refusal of dense ops),
`_base` (what the layouts share), `_coo` and `_csr` (the tensor types and constructors),
`_ops` (mm, addmm, sum, softmax and the sparse branch of tensorlib.matmul), `_autograd`
(their derivatives), `_mixed` (where a sparse tensor meets a dense one or a dense op:
zeros_like, dense.add_(sparse), sparse_mask, sparse * sparse, new), `_kernels` (the
computations, on any device's dense primitives or a backend's `sparse_coo_mm`), `_repr`
(printing), `_legacy` (FloatTensor(indices, values, size) and kin). `install` wires the
layouts into tensorlib and Tensor when tensorlib is imported.
"""
from tensorlib._layout import strided
from tensorlib.sparse._legacy import (BFloat16Tensor, ByteTensor, CharTensor,  # noqa: F401
                                      DoubleTensor, FloatTensor, HalfTensor, IntTensor,
                                      LongTensor, ShortTensor)
from tensorlib.sparse._ops import addmm, log_softmax, mm, softmax, sum  # noqa: A004

__all__ = ["addmm", "mm", "sum", "softmax", "log_softmax"]


def _layout_error(name, wanted):
    def refused(self, *args, **kwargs):
        raise RuntimeError(f"{name} expected {wanted} layout but got {self._layout_key()}")
    refused.__name__ = name
    return refused


def _dense_coalesced_(self, coalesced):
    """Tensor._coalesced_ exists for sparse COO tensors only, as in PyTorch."""
    raise NotImplementedError(f"Could not run 'aten::_coalesced_' with arguments from the "
                              f"'{self.device.type.upper()}' backend: it is only available "
                              f"for sparse COO tensors")


def _dense_to_dense(self, dtype=None, *, masked_grad=None):
    return self if dtype is None else self.to(dtype)


def _layout_key(self):
    return "Strided"


def install(tensor_cls, namespace):
    """Tensor's layout API for dense tensors, tensorlib's sparse constructors and layouts,
    and the refusal of dense methods on sparse tensors (after every op family installed
    its methods)."""
    import tensorlib._layout as layouts
    from tensorlib.sparse._base import refuse_dense_methods
    from tensorlib.sparse._coo import SparseCooTensor, sparse_coo_tensor, to_sparse
    from tensorlib.sparse._csc import SparseCscTensor, sparse_csc_tensor, to_csc
    from tensorlib.sparse._csr import SparseCsrTensor, dense_to_csr, sparse_csr_tensor
    from tensorlib.sparse._mixed import sparse_mask
    tensor_cls.layout = property(lambda self: strided, doc="strided (a dense tensor)")
    tensor_cls.is_sparse = False
    tensor_cls.is_sparse_csr = False
    tensor_cls._layout_key = _layout_key
    tensor_cls.to_dense = _dense_to_dense
    tensor_cls.to_sparse = to_sparse
    tensor_cls.to_sparse_coo = to_sparse
    tensor_cls.to_sparse_csr = dense_to_csr
    tensor_cls.to_sparse_csc = SparseCooTensor.to_sparse_csc = SparseCsrTensor.to_sparse_csc = \
        to_csc
    tensor_cls.sparse_mask = sparse_mask
    tensor_cls.sparse_dim = lambda self: 0
    tensor_cls.dense_dim = lambda self: self.dim()
    coo = "sparse coordinate tensor"
    for name in ("indices", "coalesce", "is_coalesced"):
        setattr(tensor_cls, name, _layout_error(name, coo))
    tensor_cls.values = _layout_error("values", "sparse tensor")
    tensor_cls._coalesced_ = _dense_coalesced_
    rows, columns = "sparse row compressed tensor", "sparse column compressed tensor"
    for name in ("crow_indices", "col_indices"):
        setattr(tensor_cls, name, _layout_error(name, rows))
    for name in ("ccol_indices", "row_indices"):
        setattr(tensor_cls, name, _layout_error(name, columns))
    for cls, wanted, accessors in (
            (SparseCsrTensor, coo, ("indices", "_indices", "coalesce", "is_coalesced")),
            (SparseCscTensor, coo, ("indices", "_indices", "coalesce", "is_coalesced")),
            (SparseCooTensor, rows, ("crow_indices", "col_indices")),
            (SparseCscTensor, rows, ("crow_indices", "col_indices")),
            (SparseCooTensor, columns, ("ccol_indices", "row_indices")),
            (SparseCsrTensor, columns, ("ccol_indices", "row_indices"))):
        for name in accessors:
            setattr(cls, name, _layout_error(name, wanted))
    refuse_dense_methods(tensor_cls)
    layouts.SPARSE_TYPES.add(SparseCooTensor)        # zeros_like, add: _mixed.py's hooks
    for name in layouts.__all__:
        namespace[name] = getattr(layouts, name)
    namespace["sparse_coo_tensor"] = sparse_coo_tensor
    namespace["sparse_csr_tensor"] = sparse_csr_tensor
    namespace["sparse_csc_tensor"] = sparse_csc_tensor
    from tensorlib.sparse._csr import (convert_indices_from_coo_to_csr,
                                       convert_indices_from_csr_to_coo)
    namespace["_convert_indices_from_coo_to_csr"] = convert_indices_from_coo_to_csr
    namespace["_convert_indices_from_csr_to_coo"] = convert_indices_from_csr_to_coo
    namespace["spmm"] = namespace["mm"]
    from tensorlib.sparse._ops import dsmm, hsmm
    namespace["dsmm"], namespace["hsmm"], namespace["smm"] = dsmm, hsmm, hsmm
