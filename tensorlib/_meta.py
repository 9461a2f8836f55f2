r"""The `meta` device: tensors with sizes, strides and dtype and no data (PyTorch's meta
tensors), for building models without memory and for shape propagation.

NOTE [ The meta backend ]
It is a built-in backend (the loader knows it without an entry point) whose allocator hands
out no memory and whose primitive kernels do nothing. Every op already computes its output's
shape, dtype and strides before it calls a kernel, so each op that runs on primitives runs on
meta tensors unchanged: elementwise, matmul, reductions, views, nn layers, autograd. Reading
data raises as in PyTorch: copying to another device or to numpy, `item()`, printing shows
`tensor(..., device='meta', size=...)`, and an op whose output size depends on data
(nonzero, masked_select, boolean indexing, unique, bincount) raises PyTorch's
NotImplementedError (`data_dependent_on_meta`) where it would read the count. A composite op
that looks for a fused kernel of its own finds none and takes its decomposition. The device
has no index, as PyTorch's (`meta`, not `meta:0`). Modules move off the meta
device with `Module.to_empty(device=...)`.
"""
from tensorlib.backends.interface import PRIMITIVES, Backend

__all__ = ["backend"]

NO_DATA = ("Cannot copy out of meta tensor; no data! Please use "
           "tensorlib.nn.Module.to_empty() instead of tensorlib.nn.Module.to() when moving "
           "module from meta to a different device.")


def data_dependent_on_meta(op):
    """PyTorch's NotImplementedError for an operator whose output size depends on the data
    (it has no meta kernel; nonzero's names the reason itself)."""
    if op == "nonzero":
        return NotImplementedError(
            "The register_meta function for tensorlib.nonzero() raises unimplemented by "
            "default, as a correct data-independent implementation does not exist: the number "
            "of nonzero elements of a meta tensor is unknown.")
    return NotImplementedError(
        f"aten::{op}: attempted to run this operator with Meta tensors, but there was no fake "
        f"impl or Meta kernel registered (its output size depends on the data).")


def _nothing(*args, **kwargs):
    """A primitive on meta tensors: the output's metadata is already right."""


class MetaBackend(Backend):
    device_type = "meta"

    def device_count(self):
        return 1

    def device_name(self, index):
        return "meta"

    def runs_on_host(self, index):
        return True                  # not an accelerator

    def allocate(self, nbytes, index):
        return None

    def copy_from_host(self, dst, array):
        """tensor(data, device='meta') keeps only the metadata, as PyTorch's."""

    def copy_to_host(self, src):
        raise NotImplementedError(NO_DATA)

    def copy_between_devices(self, dst, src):
        """meta to meta: nothing to copy."""

    def register(self, table):
        table.update(dict.fromkeys(PRIMITIVES, _nothing))


backend = MetaBackend()
