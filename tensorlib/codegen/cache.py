"""The on-disk kernel cache: compiled program binaries stored by content.

The key is a SHA-256 over everything that decides the binary: the source, the compiler
options, the device (name, version), the driver and platform versions, the dialect and
tensorlib's version. An entry is one file `<key[:2]>/<key>.bin`:

    b"TLKC1\\n" + sha256(payload).hexdigest() + b"\\n" + payload

written to a temporary file in the same directory and renamed into place (atomic), and checked
against its hash when read; a damaged entry is deleted and treated as a miss. Entries are raw
bytes, never pickled. Location: `$TENSORLIB_KERNEL_CACHE_DIR`, else the per-user cache dir
(platformdirs, falling back to ~/.cache)/tensorlib/kernels; `$TENSORLIB_CACHE_DIR/kernels`
moves the whole per-user cache. `TENSORLIB_DISABLE_KERNEL_CACHE=1`
turns the disk cache off (the in-memory cache of each backend stays).
"""
import hashlib
import os
import tempfile

_MAGIC = b"TLKC1\n"


def default_dir():
    env = os.environ.get("TENSORLIB_KERNEL_CACHE_DIR")
    if env:
        return os.path.expanduser(env)
    env = os.environ.get("TENSORLIB_CACHE_DIR")
    if env:
        return os.path.join(os.path.expanduser(env), "kernels")
    try:
        import platformdirs
        base = platformdirs.user_cache_dir("tensorlib", appauthor=False)
    except ImportError:
        base = os.path.join(os.path.expanduser("~"), ".cache", "tensorlib")
    return os.path.join(base, "kernels")


def disabled():
    return os.environ.get("TENSORLIB_DISABLE_KERNEL_CACHE", "0") not in ("", "0")


def _version():
    try:
        from importlib.metadata import version
        return version("tensorlib")
    except Exception:
        return "unknown"


TENSORLIB_VERSION = _version()


def make_key(*parts):
    """The hex SHA-256 of the parts (str or bytes), length-prefixed so parts can't run together,
    with tensorlib's version appended."""
    h = hashlib.sha256()
    for part in parts + (TENSORLIB_VERSION,):
        data = part if isinstance(part, bytes) else str(part).encode()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


class DiskCache:
    """get(key) -> bytes or None; put(key, bytes). Counts hits, misses and writes."""

    def __init__(self, directory=None, enabled=None):
        self.directory = directory or default_dir()
        self.enabled = (not disabled()) if enabled is None else enabled
        self.hits = self.misses = self.writes = 0

    def _path(self, key):
        return os.path.join(self.directory, key[:2], key + ".bin")

    def get(self, key):
        if not self.enabled:
            return None
        path = self._path(key)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            self.misses += 1
            return None
        head = len(_MAGIC) + 65
        if (data[:len(_MAGIC)] != _MAGIC or len(data) < head
                or hashlib.sha256(data[head:]).hexdigest().encode() != data[len(_MAGIC):head - 1]):
            try:                                    # damaged or foreign: drop it
                os.remove(path)
            except OSError:
                pass
            self.misses += 1
            return None
        self.hits += 1
        return data[head:]

    def put(self, key, payload):
        if not self.enabled:
            return False
        path = self._path(key)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(_MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
            os.replace(tmp, path)
        except OSError:
            return False                            # a read-only or full disk only costs speed
        self.writes += 1
        return True

    def clear(self):
        import shutil
        shutil.rmtree(self.directory, ignore_errors=True)
