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

NOTE [ The file_system strategy ]
After `set_sharing_strategy("file_system")`, storages shared from then on go into named
POSIX shared-memory files (/dev/shm/tl_fs_<pid>_<n>) instead: no file descriptor stays open
per storage (PyTorch's reason for the strategy: a process holding thousands of shared tensors
runs out of descriptors), and the name is what travels. The process that made a file
unlinks its name when that storage dies; receivers keep their mappings, and can pass the
tensor on while the name exists. A process killed before its storages die leaves its files
in /dev/shm (PyTorch's torch_shm_manager removes those; tensorlib has no such daemon).
"""
import ctypes
import gc
import itertools
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

try:
    import _posixshmem
except ImportError:          # pragma: no cover - not POSIX
    _posixshmem = None

__all__ = ["share_memory_", "is_shared", "init_reductions", "get_strategy", "set_strategy"]

_shared = weakref.WeakKeyDictionary()      # Storage -> fd of its shared file, or its name
_strategy = ["file_descriptor"]
_names = itertools.count()


def get_strategy():
    return _strategy[0]


def set_strategy(name):
    """file_system needs POSIX shared memory; elsewhere only file_descriptor is offered."""
    _strategy[0] = name


def strategies():
    return {"file_descriptor", "file_system"} if _posixshmem is not None else \
        {"file_descriptor"}


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


class _Unlink:
    """A file_system storage's release: hand the old buffer back, remove the file's name."""

    def __init__(self, name, old_handle, old_release):
        self.name, self.old_handle, self.old_release = name, old_handle, old_release

    def __call__(self, handle, nbytes):
        if self.old_release is not None:
            self.old_release(self.old_handle, nbytes)
        try:
            _posixshmem.shm_unlink(self.name)
        except OSError:
            pass


def _named_file(nbytes):
    """(name, mapping) of a new POSIX shared-memory file of nbytes; no descriptor kept."""
    name = f"/tl_fs_{os.getpid()}_{next(_names)}"
    fd = _posixshmem.shm_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    try:
        os.ftruncate(fd, max(nbytes, 1))
        return name, _map(fd, nbytes)
    except BaseException:
        _posixshmem.shm_unlink(name)
        raise
    finally:
        os.close(fd)


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
    old = storage.handle
    if _strategy[0] == "file_system":
        key, array = _named_file(nbytes)
        storage._release = _Unlink(key, old, storage._release)
    else:
        key = _shared_file(nbytes)
        array = _map(key, nbytes)
        storage._release = _Release(key, old, storage._release)
    if nbytes:
        ctypes.memmove(array.ctypes.data, old.ctypes.data, nbytes)
    storage.handle = array
    _shared[storage] = key
    _drop_cached_views(storage)
    return self


def _rebuild(handle, nbytes, sizes, strides, offset, dtype_name, requires_grad, cls):
    if isinstance(handle, str):            # a file_system name: map it, keep no descriptor
        fd = _posixshmem.shm_open(handle, os.O_RDWR, 0o600)
        try:
            storage = Storage(_map(fd, nbytes), nbytes, canonical("cpu"))
        finally:
            os.close(fd)
        _shared[storage] = handle
    else:
        fd = handle.detach()
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
    key = _shared[storage]
    handle = key if isinstance(key, str) else reduction.DupFd(key)
    return (_rebuild, (handle, storage._nbytes, t._sizes,
                       t._strides, t._offset, str(t._dtype).split(".")[-1], t._requires_grad,
                       type(t)))


def init_reductions():
    """Make multiprocessing's pickler (Queue, Pipe, spawned Process arguments) pass CPU
    tensors through shared memory."""
    from tensorlib.nn.parameter import Parameter
    for cls in (tensorlib.Tensor, Parameter):
        reduction.ForkingPickler.register(cls, _reduce)
