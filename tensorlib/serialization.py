"""tensorlib.save and tensorlib.load: checkpoints that never execute code on load.

`save(obj, f)` writes tensorlib's own format (see tensorlib/_serialization/native.py): a JSON
header describing the object and the raw bytes of every tensor storage, once per storage, each
with its length and sha256. No pickle. Tensors, numpy arrays, state_dicts of modules and
optimizers, any nesting of dict/list/tuple/set/str/int/float/bool/None, dtypes, devices, and
whole objects (a module, an optimizer) are saved: an object as its class path and its state
(`__getstate__`/`__dict__`). Views of one storage are stored once and share again after
loading. Saving to a path is atomic: the file is written aside, flushed and renamed over the
target, so a crash mid-save leaves the previous checkpoint intact.

`load(f, map_location=None)` reads that format, `.safetensors` files, and PyTorch `.pt`/`.pth`
checkpoints (the zip format `torch.save` writes) through a restricted unpickler that admits
only tensor rebuilding and plain containers, like PyTorch's `weights_only=True`. An object is
rebuilt only when its class is allowed: tensorlib's own, or named with `safe_globals([...])`
(context manager) / `add_safe_globals([...])`; nothing named by a file is ever imported.

Every bad file -- truncated, corrupted, of an unknown format, or naming a class or function
that is not allowed -- raises CheckpointError (a RuntimeError); a forbidden class raises its
subclass UnsafeGlobalError, which is also a pickle.UnpicklingError as in PyTorch.

`f` is a path (str or os.PathLike) or a binary file object. PyTorch's keyword arguments are
accepted: `weights_only` (loading is always weights-only-safe here, whatever its value),
`mmap`, `pickle_module`, `pickle_protocol`, `_use_new_zipfile_serialization` (ignored).
"""
import io
import os
import stat
import tempfile
from typing import Callable, Optional, Union

from tensorlib._C.device import device as _device
from tensorlib._serialization import native as _native
from tensorlib._serialization import safetensors as _safetensors
from tensorlib._serialization import torch_pt as _torch_pt
from tensorlib._serialization.errors import CheckpointError, UnsafeGlobalError
from tensorlib._serialization.globals import (add_safe_globals, clear_safe_globals,
                                              get_safe_globals, safe_globals)

# torch.serialization's annotation aliases (libraries annotate their own load wrappers)
FILE_LIKE = Union[str, os.PathLike, io.IOBase]
MAP_LOCATION = Optional[Union[Callable, _device, str, dict]]

__all__ = ["save", "load", "CheckpointError", "UnsafeGlobalError", "safe_globals",
           "add_safe_globals", "get_safe_globals", "clear_safe_globals", "save_safetensors",
           "load_safetensors", "safetensors_metadata"]

DEFAULT_PROTOCOL = 2          # PyTorch's name; unused (nothing is pickled)

_PICKLE_PROTOCOLS = (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")


def _is_path(f):
    return isinstance(f, (str, os.PathLike))


def _umask():
    try:                                  # Linux: read it without changing it
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_of_a_written_file(path):
    """The permissions open(path, "wb") would leave: the existing file's, or 0o666 less the
    umask (mkstemp's own 0o600 made saved checkpoints unreadable to a group that reads
    PyTorch's)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _atomic_write(path, write):
    """write(file) into a temporary file beside `path`, fsync it, then rename it over `path`
    (atomic on POSIX and Windows), so readers see the old file or the new one, never half."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                               dir=directory)
    try:
        os.chmod(tmp, _mode_of_a_written_file(path))
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:                                  # make the rename itself durable (best effort)
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Save `obj` to `f` (a path, written atomically, or a writable binary file object) in
    tensorlib's format. Raises TypeError, before touching the file, for what cannot be saved
    (lambdas, objects without state, numpy object arrays)."""
    data = io.BytesIO()
    _native.write(obj, data)          # everything encodable is checked before any file I/O
    payload = data.getbuffer()
    if _is_path(f):
        _atomic_write(f, lambda out: out.write(payload))
    else:
        f.write(payload)
        if hasattr(f, "flush"):
            f.flush()


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load what `f` holds: a tensorlib checkpoint, a `.safetensors` file (a dict of
    tensors) or a PyTorch zip checkpoint. `map_location` (None: where each tensor was saved)
    is a device or string, a dict {saved location: new location}, or a callable
    `fn(storage, location)` returning a tensor, device or None; `weights_only` is accepted
    for PyTorch compatibility (loading is always restricted)."""
    if _is_path(f):
        with open(f, "rb") as fh:
            return _load(fh, map_location)
    return _load(f, map_location)


def _load(f, map_location):
    if not hasattr(f, "read"):
        raise TypeError(f"load expects a path or a binary file object, got "
                        f"{type(f).__name__}")
    start = f.tell() if _seekable(f) else None
    prefix = f.read(8)
    if isinstance(prefix, str):
        raise TypeError("load needs a file opened in binary mode ('rb')")
    if prefix == _native.MAGIC:
        return _native.read(f, prefix, map_location)
    if prefix[:4] == b"PK\x03\x04":
        if start is None:
            f = io.BytesIO(prefix + f.read())
        else:
            f.seek(start)
        return _torch_pt.read(f, map_location)
    if not prefix:
        raise CheckpointError("checkpoint file is empty")
    if prefix[:2] in _PICKLE_PROTOCOLS:
        raise CheckpointError("this is a raw pickle (or PyTorch's legacy, pre-1.6 format): "
                              "loading it would run arbitrary code, so tensorlib does not. "
                              "Re-save it with torch.save (zip format) or tensorlib.save.")
    if len(prefix) == 8:
        peek = f.read(1)
        if _safetensors.looks_like(prefix, peek):
            rest = io.BytesIO(peek + f.read()) if start is None else f
            if start is not None:
                f.seek(start + 8)
            return _safetensors.read(rest, prefix, _device_of(map_location))
    if _native.MAGIC.startswith(prefix):
        raise CheckpointError("checkpoint is truncated (it ends inside the file prefix)")
    raise CheckpointError(f"unknown checkpoint format (starts with {prefix!r}): not a "
                          f"tensorlib checkpoint, a .safetensors file or a PyTorch zip "
                          f"checkpoint")


def _seekable(f):
    try:
        return f.seekable()
    except (AttributeError, ValueError):
        return False


def _device_of(map_location):
    return "cpu" if map_location is None else map_location


def save_safetensors(tensors, filename, metadata=None):
    """Write a dict {name: tensor} to a .safetensors file (atomically). Tensors that share
    memory are written as separate copies."""
    _safetensors.save_file(tensors, filename, metadata)


def load_safetensors(filename, device="cpu"):
    """The dict {name: tensor} of a .safetensors file, on `device`."""
    return _safetensors.load_file(filename, device)


def safetensors_metadata(filename):
    """The `__metadata__` str -> str dict of a .safetensors file, or None."""
    return _safetensors.metadata(filename)
