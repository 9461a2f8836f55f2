"""How a batch travels from a worker process to the main process.

The worker pickles the batch with every tensor and numeric numpy array replaced by a
reference (kind, offset, dtype, shape) into one POSIX shared-memory block it creates, then
sends the small pickle and the block's name through a pipe. The main process maps the block,
unlinks its name at once (the mapping outlives the name) and wraps the arrays without a copy:
the batch's tensors share that mapping, and the memory goes back to the system when the last
of them is freed. Nothing large is pickled through the pipe.

Blocks are named `/tl<pid>_<loader id>_<worker>_<n>`, so the main process can remove the
ones a dying worker left behind (`unlink_prefix`). Where POSIX shared memory is missing
(Windows) the bytes travel inline in the message instead.
"""
import io
import mmap
import os
import pickle

import numpy as np

try:
    import _posixshmem
except ImportError:          # pragma: no cover - not POSIX
    _posixshmem = None

ALIGN = 64
SHM_DIR = "/dev/shm"


def _tensor_type():
    from tensorlib._tensor import Tensor
    return Tensor


class _Pickler(pickle.Pickler):
    """Pickles a batch, moving tensors and numeric numpy arrays into an arena list."""

    def __init__(self, file):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.arrays = []          # (offset, contiguous or strided numpy array)
        self.total = 0
        self._tensor = _tensor_type()

    def _place(self, array):
        offset = -(-self.total // ALIGN) * ALIGN
        self.total = offset + array.nbytes
        self.arrays.append((offset, array))
        return offset

    def persistent_id(self, obj):
        if isinstance(obj, self._tensor):
            from tensorlib._C.tensor_impl import host_array
            t = obj.detach()
            if t._device.type != "cpu":
                t = t.cpu()
            array = host_array(t)
            return ("t", self._place(array), t._dtype, tuple(t._sizes))
        if type(obj) is np.ndarray and not obj.dtype.hasobject and obj.dtype.names is None \
                and obj.dtype.subdtype is None:
            return ("a", self._place(obj), obj.dtype, obj.shape)
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, buffer):
        super().__init__(file)
        self.buffer = buffer

    def persistent_load(self, pid):
        kind, offset, dtype, shape = pid
        npdtype = dtype.np if kind == "t" else dtype
        count = int(np.prod(shape, dtype=np.int64))
        array = np.frombuffer(self.buffer, dtype=npdtype, count=count,
                              offset=offset).reshape(shape)
        if kind == "t":
            import tensorlib
            return tensorlib.from_numpy(array)
        return array


def shm_available():
    return _posixshmem is not None


def encode(batch, name=None):
    """(pickle bytes, shm name or None, inline bytes or None, arena size). With `name`, the
    arrays go into a new shared-memory block of that name; else inline."""
    f = io.BytesIO()
    p = _Pickler(f)
    p.dump(batch)
    size = p.total
    if name is None or _posixshmem is None or not p.arrays:
        blob = bytearray(size)
        for offset, array in p.arrays:
            _copy_into(blob, offset, array)
        return f.getvalue(), None, bytes(blob) if p.arrays else None, size
    fd = _posixshmem.shm_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    try:
        os.ftruncate(fd, max(size, 1))
        mm = mmap.mmap(fd, max(size, 1))
    except BaseException:
        os.close(fd)
        _posixshmem.shm_unlink(name)
        raise
    os.close(fd)
    try:
        for offset, array in p.arrays:
            _copy_into(mm, offset, array)
    finally:
        mm.close()
    return f.getvalue(), name, None, size


def _copy_into(buffer, offset, array):
    dst = np.ndarray(array.shape, dtype=array.dtype, buffer=buffer, offset=offset)
    dst[...] = array
    del dst


def attach(name, size):
    """Map the block `name`, unlink its name and return the mapping (writable)."""
    fd = _posixshmem.shm_open(name, os.O_RDWR, 0o600)
    try:
        mm = mmap.mmap(fd, max(size, 1))
    finally:
        os.close(fd)
        _posixshmem.shm_unlink(name)
    return mm


def decode(message):
    data, name, blob, size = message
    if name is not None:
        buffer = attach(name, size)
    elif blob is not None:
        buffer = bytearray(blob)          # writable, like tensors made in the main process
    else:
        buffer = b""
    return _Unpickler(io.BytesIO(data), buffer).load()


def discard(message):
    """Free a message that will not be decoded (a stale or abandoned batch)."""
    name = message[1]
    if name is not None and _posixshmem is not None:
        unlink(name)


def unlink(name):
    try:
        _posixshmem.shm_unlink(name)
    except (FileNotFoundError, OSError):
        pass


def unlink_prefix(prefix):
    """Remove every block whose name starts with `prefix` (Linux, where they are listed in
    /dev/shm); returns how many."""
    if _posixshmem is None or not os.path.isdir(SHM_DIR):
        return 0
    n = 0
    bare = prefix.lstrip("/")
    try:
        names = os.listdir(SHM_DIR)
    except OSError:
        return 0
    for entry in names:
        if entry.startswith(bare):
            unlink("/" + entry)
            n += 1
    return n
