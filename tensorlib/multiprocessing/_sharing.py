"""CPU tensors in shared memory, and how they cross process boundaries.

NOTE [ Sharing a storage ]
`share_memory_()` moves a CPU tensor's Storage into an anonymous shared file (memfd): the
bytes are copied once, and the Storage's handle becomes a numpy view of a MAP_SHARED mapping,
so every view of that Storage (whose cached numpy views are dropped) now reads and writes the
shared pages. The old buffer lives until the Storage dies, so numpy arrays taken before stay
valid (they no longer alias the tensor). Sending a CPU tensor through a multiprocessing
Queue or Pipe, or as a spawned Process's argument, shares it first (as PyTorch's
file_descriptor strategy) and sends a duplicate of the file descriptor plus the view's
geometry; the receiver maps the same pages, so writes on either side are seen by both and
nothing is copied. Forked children inherit the mapping itself. As with PyTorch's strategy, the
sender must stay alive until the receiver has unpickled the tensor (the descriptor is handed
over by the sender's multiprocessing resource sharer).
"""
import ctypes
import gc
import mmap
import os
import tempfile
import weakref
from multiprocessing import reduction

import numpy as np

import tensorlib
from tensorlib._C.device import canonical
from tensorlib._C.storage import Storage
from tensorlib._C.tensor_impl import TensorImpl, wrap

__all__ = ["share_memory_", "is_shared", "init_reductions"]

_shared = weakref.WeakKeyDictionary()      # Storage -> fd of its shared file


class _Release:
    """A shared Storage's release: hand the old buffer back to its allocator, close the fd."""

    def __init__(self, fd, old_handle=None, old_release=None):
        self.fd, self.old_handle, self.old_release = fd, old_handle, old_release

    def __call__(self, handle, nbytes):
        if self.old_release is not None:
            self.old_release(self.old_handle, nbytes)
        try:
            os.close(self.fd)
        except OSError:
            pass


def _shared_file(nbytes):
    """An fd of an anonymous file of nbytes in memory (memfd, else an unlinked /dev/shm file)."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("tensorlib", 0)
    else:                                  # pragma: no cover - not Linux
        fd, path = tempfile.mkstemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        os.unlink(path)
    os.ftruncate(fd, max(nbytes, 1))
    return fd


def _map(fd, nbytes):
    return np.frombuffer(mmap.mmap(fd, max(nbytes, 1)), dtype=np.uint8, count=nbytes)


def _drop_cached_views(storage):
    """Tensors on `storage` cache a numpy view of its old handle: forget them."""
    for obj in gc.get_referrers(storage):
        if isinstance(obj, TensorImpl) and obj._storage is storage:
            obj._cache = None


def is_shared(self):
    """Whether this CPU tensor's storage is in shared memory."""
    return self._storage in _shared


def share_memory_(self):
    """Move the storage to shared memory (a no-op when it is there already, and for tensors
    on other devices, as PyTorch's for CUDA). See NOTE [ Sharing a storage ]."""
    storage = self._storage
    if self._device.type != "cpu" or storage in _shared:
        return self
    nbytes = storage._nbytes
    fd = _shared_file(nbytes)
    array = _map(fd, nbytes)
    old = storage.handle
    if nbytes:
        ctypes.memmove(array.ctypes.data, old.ctypes.data, nbytes)
    storage._release = _Release(fd, old, storage._release)
    storage.handle = array
    _shared[storage] = fd
    _drop_cached_views(storage)
    return self


def _rebuild(dup, nbytes, sizes, strides, offset, dtype_name, requires_grad, cls):
    fd = dup.detach()
    storage = Storage(_map(fd, nbytes), nbytes, canonical("cpu"), _Release(fd))
    _shared[storage] = fd
    t = wrap(storage, sizes, strides, offset, getattr(tensorlib, dtype_name))
    if cls is not tensorlib.Tensor:
        return cls(t, requires_grad)
    return t.requires_grad_(requires_grad) if requires_grad else t


def _reduce(t):
    if t._device.type != "cpu":
        return t.__reduce_ex__(reduction.ForkingPickler.HIGHEST_PROTOCOL)
    if t._requires_grad and t._grad_fn is not None:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                           "since autograd does not support crossing process boundaries.  If "
                           "you just want to transfer the data, call detach() on the tensor "
                           "before serializing (e.g., putting it on the queue).")
    share_memory_(t)
    storage = t._storage
    return (_rebuild, (reduction.DupFd(_shared[storage]), storage._nbytes, t._sizes,
                       t._strides, t._offset, str(t._dtype).split(".")[-1], t._requires_grad,
                       type(t)))


def init_reductions():
    """Make multiprocessing's pickler (Queue, Pipe, spawned Process arguments) pass CPU
    tensors through shared memory."""
    from tensorlib.nn.parameter import Parameter
    for cls in (tensorlib.Tensor, Parameter):
        reduction.ForkingPickler.register(cls, _reduce)
