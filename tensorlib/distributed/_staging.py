"""Tensors as flat host buffers for MPI. A contiguous CPU tensor lends its own memory (MPI
reads and writes it in place); any other tensor (a strided view, a device tensor) is copied to
host memory through its backend's copy_to_host and written back with copy_from_host when the
operation finishes. A tensor the operation writes gets its version counter bumped, as an
in-place op would, so autograd notices a saved tensor that a collective overwrote."""
import numpy as np

from tensorlib._C.tensor_impl import host_array, is_contiguous

__all__ = ["Staged", "check_tensor", "finish_all"]


def check_tensor(t, name):
    from tensorlib._tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"{name} must be a tensorlib.Tensor, got {type(t).__name__}")


def _lends_memory(t):
    return t._device.type == "cpu" and is_contiguous(t)


class Staged:
    """`array`: the flat host buffer of `tensor`. read: the operation needs its values;
    write: the operation changes them (finish() then writes them back)."""

    def __init__(self, tensor, read=True, write=True):
        self.tensor = tensor
        self._copied = not _lends_memory(tensor)
        if not self._copied:
            self.array = host_array(tensor).reshape(-1)
        elif read:
            self.array = tensor._device._backend.copy_to_host(tensor).reshape(-1)
        else:
            self.array = np.empty(tensor.numel(), dtype=tensor.dtype.np)
        self._write = write
        if write:
            tensor._storage.version += 1

    def finish(self):
        if self._write and self._copied:
            t = self.tensor
            t._device._backend.copy_from_host(t, self.array.reshape(tuple(t.shape)))


def finish_all(staged):
    def finish():
        for s in staged:
            s.finish()
    return finish
