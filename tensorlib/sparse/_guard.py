r"""The dense fields of a sparse tensor.

NOTE [ Sparse tensors are Tensors ]
A sparse tensor is a `tensorlib.Tensor` (PyTorch programs test `isinstance(adj, torch.Tensor)`)
whose data lives in its component tensors (indices and values, or the compressed ones for
CSR). Its TensorImpl fields still say its shape and dtype, and name a *guard device*: equal
to the real device (same type and index) but a distinct object whose kernel table maps every
op to PyTorch's NotImplementedError for the sparse backend and whose backend refuses to copy
(its allocator is the real one, so an op gets as far as its kernel, which names it). So a
dense op handed a sparse tensor (`tensorlib.exp(adj)`, `dense + adj` through a namespace
function) fails naming the op and the layout, and never computes on the placeholder storage.
That storage is one zeroed element with all strides 0, so even a host-side read is in
bounds. The Tensor methods a sparse tensor does not support are refused the same way
(`_base.refuse_dense_methods`).
"""
import numpy as np

from tensorlib._C.device import device as _device
from tensorlib._C.storage import Storage

__all__ = ["backend_name", "not_supported", "guard_device", "guard_storage"]

_DEVICE_KEYS = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta"}
# CSC shares CSR's dispatch key in PyTorch (one key for the compressed layouts)
_LAYOUT_KEYS = {"sparse_coo": "Sparse", "sparse_csr": "SparseCsr", "sparse_csc": "SparseCsr"}
_GUARDS = {}                # (layout name, device type, index) -> guard device


def backend_name(layout, dev):
    """PyTorch's dispatch key name: SparseCPU, SparseCsrCPU, Sparse + the device's own."""
    return _LAYOUT_KEYS[layout._name] + _DEVICE_KEYS.get(dev.type, dev.type.upper())


def not_supported(op, layout, dev):
    return NotImplementedError(
        f"Could not run 'aten::{op}' with arguments from the '{backend_name(layout, dev)}' "
        f"backend. tensorlib runs on {layout} tensors the ops of tensorlib.sparse and the "
        f"Tensor methods that PyTorch defines for that layout; use to_dense() first for a "
        f"dense op.")


class _Refuser:
    """The kernels and the backend of a guard device: calling or reading any of them raises
    the sparse layout's NotImplementedError."""

    def __init__(self, op, layout, real):
        self.op, self.layout, self.real = op, layout, real

    def __call__(self, *args, **kwargs):
        raise not_supported(self.op, self.layout, self.real)

    def __getattr__(self, name):           # the backend's methods (copy_to_host, ...)
        if name.startswith("__"):
            raise AttributeError(name)
        raise not_supported(name, self.layout, self.real)


class _Allocator:
    """The guard device's allocator: the real one, so that a dense op's output is made and
    the op then fails at its kernel, named; `refuse` is what a pointwise op asks before its
    mixed-device error (`tensorlib.add(dense, adj)`)."""

    def __init__(self, layout, real):
        self.layout, self.real = layout, real

    def __call__(self, nbytes, index):
        return self.real._allocate(nbytes, index)

    def refuse(self):
        raise NotImplementedError(
            f"Could not run a dense operator with arguments from the "
            f"'{backend_name(self.layout, self.real)}' backend: a {self.layout} tensor "
            f"meets dense tensors only in the ops of tensorlib.sparse, the products and "
            f"`dense + sparse`; use to_dense() first.")


def guard_device(layout, real):
    """The guard device of `layout` tensors on the canonical device `real`."""
    key = (layout._name, real.type, real.index)
    guard = _GUARDS.get(key)
    if guard is None:
        guard = _device(real.type, real.index)
        # no "mm": matmul's fast path asks has_kernel("mm") and then takes the sparse branch
        guard._kernels = {op: _Refuser(op, layout, real) for op in real._kernels
                          if op != "mm"}
        guard._backend = _Refuser("copy", layout, real)
        guard._allocate = _Allocator(layout, real)
        guard._release = real._release
        _GUARDS[key] = guard
    return guard


def guard_storage(guard, dtype):
    """A one-element zeroed host buffer on the guard device (see the NOTE)."""
    return Storage(np.zeros(dtype.itemsize, np.uint8), dtype.itemsize, guard)
