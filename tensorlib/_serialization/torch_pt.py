"""PyTorch checkpoints (`torch.save`'s zip format), read safely, without torch.

The zip holds `<archive>/data.pkl`, a pickle of the saved object in which every storage is a
persistent id `("storage", torch.<Type>Storage, key, location, numel)` whose bytes are the
entry `<archive>/data/<key>`. The pickle is read by a restricted unpickler, like PyTorch's
`weights_only=True`: `find_class` admits only tensor rebuilding (`torch._utils.
_rebuild_tensor_v2`, `_rebuild_parameter`, ...), the storage types, dtypes, `torch.Size`,
`torch.device`, plain containers (`collections.OrderedDict`, set, ...) and `_codecs.encode`
(how protocol 2 writes bytes). A class under `torch.` is mapped to tensorlib's class of the
same path (`torch.nn.modules.linear.Linear` -> `tensorlib.nn.modules.linear.Linear`) when
tensorlib has one; other classes must be allowed with `safe_globals`. Anything else raises
UnsafeGlobalError naming the global; nothing named by the file is imported or run.
"""
import io
import pickle
import zipfile

import tensorlib
import tensorlib._C.dtypes as dt
from tensorlib._serialization import globals as _globals
from tensorlib._serialization import tensors as _tensors
from tensorlib._serialization.errors import CheckpointError, UnsafeGlobalError

STORAGE_DTYPES = {"FloatStorage": dt.float32, "DoubleStorage": dt.float64,
                  "HalfStorage": dt.float16, "BFloat16Storage": dt.bfloat16,
                  "LongStorage": dt.int64, "IntStorage": dt.int32, "ShortStorage": dt.int16,
                  "CharStorage": dt.int8, "ByteStorage": dt.uint8, "BoolStorage": dt.bool_}
TORCH_DTYPES = {"float32": dt.float32, "float": dt.float32, "float64": dt.float64,
                "double": dt.float64, "float16": dt.float16, "half": dt.float16,
                "bfloat16": dt.bfloat16, "int64": dt.int64, "long": dt.int64,
                "int32": dt.int32, "int": dt.int32, "int16": dt.int16, "short": dt.int16,
                "int8": dt.int8, "uint8": dt.uint8, "bool": dt.bool_}


class _StorageType:
    def __init__(self, name, dtype):
        self.name = name
        self.dtype = dtype


class _Storage:
    """A persistent-id storage: its key in the archive, element dtype and location."""

    def __init__(self, key, dtype, location):
        self.key, self.dtype, self.location = key, dtype, location


def _codecs_encode(text, encoding="utf-8"):
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1", "utf-8", "utf8"):
        raise UnsafeGlobalError("_codecs.encode is admitted only for str -> bytes")
    return text.encode(encoding)


def _parameter(t, requires_grad):
    try:
        from tensorlib.nn.parameter import Parameter
    except ImportError:
        return t.requires_grad_(bool(requires_grad)) if requires_grad else t
    return Parameter(t, bool(requires_grad))


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, archive):
        super().__init__(file)
        self.archive = archive

    # ---- the rebuild functions the pickle may call -------------------------------------------
    def _rebuild_tensor_v2(self, storage, storage_offset, size, stride, requires_grad=False,
                           backward_hooks=None, metadata=None):
        if not isinstance(storage, _Storage):
            raise CheckpointError("_rebuild_tensor_v2 without a storage: corrupted checkpoint")
        self.archive.load_storage(storage)
        return self.archive.table.tensor(storage.key, storage.dtype, tuple(size),
                                         tuple(stride), storage_offset, bool(requires_grad))

    def _rebuild_tensor(self, storage, storage_offset, size, stride):
        return self._rebuild_tensor_v2(storage, storage_offset, size, stride)

    def _rebuild_parameter(self, data, requires_grad, backward_hooks):
        return _parameter(data.detach(), requires_grad)

    def _rebuild_parameter_with_state(self, data, requires_grad, backward_hooks, state):
        return _parameter(data.detach(), requires_grad)

    def _rebuild_from_type_v2(self, func, new_type, args, state):
        if func not in self._functions():
            raise UnsafeGlobalError("_rebuild_from_type_v2 with an unknown rebuild function")
        ret = func(*args)
        if new_type is not tensorlib.Tensor and isinstance(new_type, type) and \
                issubclass(new_type, tensorlib.Tensor) and type(ret) is not new_type:
            ret = new_type(ret.detach(), ret.requires_grad)
        return ret

    def _functions(self):
        return (self._rebuild_tensor_v2, self._rebuild_tensor, self._rebuild_parameter,
                self._rebuild_parameter_with_state, self._rebuild_from_type_v2)

    def find_class(self, module, name):
        if module == "__builtin__":
            module = "builtins"
        path = f"{module}.{name}"
        if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_tensor",
                                                 "_rebuild_parameter",
                                                 "_rebuild_parameter_with_state"):
            return getattr(self, name)
        if path == "torch._tensor._rebuild_from_type_v2":
            return self._rebuild_from_type_v2
        if module == "torch":
            if name in STORAGE_DTYPES:
                return _StorageType(name, STORAGE_DTYPES[name])
            if name in TORCH_DTYPES:
                return TORCH_DTYPES[name]
            if name == "Size":
                return tensorlib.Size
            if name == "device":
                return tensorlib.device
            if name == "Tensor":
                return tensorlib.Tensor
        if path == "torch.nn.parameter.Parameter":
            from tensorlib.nn.parameter import Parameter
            return Parameter
        if path == "_codecs.encode":
            return _codecs_encode
        if path in ("collections.OrderedDict", "builtins.set", "builtins.frozenset",
                    "builtins.complex", "builtins.slice", "builtins.bytearray",
                    "builtins.dict", "builtins.list", "builtins.tuple", "builtins.int",
                    "builtins.float", "builtins.bool", "builtins.str", "builtins.bytes"):
            return _globals.resolve(path)
        try:
            return _globals.resolve(path, kind="pickle")
        except UnsafeGlobalError:
            if module == "torch" or module.startswith("torch."):
                mapped = "tensorlib" + path[len("torch"):]
                try:
                    obj = _globals.resolve(mapped, kind="pickle")
                except UnsafeGlobalError:
                    obj = None
                if isinstance(obj, type):
                    return obj
            raise UnsafeGlobalError(
                f"Weights only load failed: Unsupported global: GLOBAL {path} was not an "
                f"allowed global by default (nothing was imported or run). If you trust this "
                f"checkpoint, allow it with tensorlib.serialization.safe_globals([...]) or "
                f"add_safe_globals([...]).") from None

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or len(pid) != 5 or pid[0] != "storage":
            raise CheckpointError(f"unsupported persistent id {str(pid)[:80]} in PyTorch "
                                  f"checkpoint")
        _, storage_type, key, location, numel = pid
        if not isinstance(storage_type, _StorageType):
            raise CheckpointError(f"unsupported storage type {storage_type!r} in PyTorch "
                                  f"checkpoint")
        return self.archive.storage(str(key), storage_type.dtype, str(location), numel)


class _Archive:
    def __init__(self, zf, prefix, map_location):
        self.zf = zf
        self.prefix = prefix
        self.table = _tensors.StorageTable(map_location)
        self.storages = {}

    def storage(self, key, dtype, location, numel):
        s = self.storages.get(key)
        if s is None:
            s = self.storages[key] = _Storage(key, dtype, location)
            s.numel = numel
        return s

    def load_storage(self, s):
        if s.key in self.table.buffers:
            return
        name = f"{self.prefix}data/{s.key}"
        try:
            info = self.zf.getinfo(name)
        except KeyError:
            raise CheckpointError(f"PyTorch checkpoint lacks the storage {name!r}: corrupted "
                                  f"or truncated") from None
        if isinstance(s.numel, int) and info.file_size != s.numel * s.dtype.itemsize:
            raise CheckpointError(f"storage {name!r} holds {info.file_size} bytes, expected "
                                  f"{s.numel} x {s.dtype.itemsize}: corrupted checkpoint")
        buf = _tensors.host_buffer(info.file_size)
        try:
            with self.zf.open(info) as f:
                from tensorlib._serialization.native import _readinto_exact
                _readinto_exact(f, buf, f"storage {name!r}")
                if f.read(1):
                    raise CheckpointError(f"storage {name!r} is longer than its header says")
        except (zipfile.BadZipFile, EOFError, OSError) as e:
            raise CheckpointError(f"PyTorch checkpoint storage {name!r} is corrupted or "
                                  f"truncated ({e})") from None
        self.table.add(s.key, buf, s.location)


def read(f, map_location):
    """Load a PyTorch zip checkpoint from the seekable binary file `f`."""
    try:
        zf = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        raise CheckpointError(f"not a readable zip checkpoint, or truncated ({e})") from None
    with zf:
        pkl = [n for n in zf.namelist() if n.endswith("data.pkl") and n.count("/") == 1]
        if not pkl:
            if any(n.endswith(".tensorlib") for n in zf.namelist()):
                raise CheckpointError("unexpected zip layout")
            raise CheckpointError("zip file is not a PyTorch checkpoint (no <archive>/data.pkl)")
        prefix = pkl[0][:-len("data.pkl")]
        try:
            byteorder = zf.read(prefix + "byteorder").decode().strip()
        except KeyError:
            byteorder = "little"
        except (zipfile.BadZipFile, OSError) as e:
            raise CheckpointError(f"PyTorch checkpoint is corrupted ({e})") from None
        if byteorder != "little":
            raise CheckpointError("big-endian PyTorch checkpoints are not supported")
        try:
            data = zf.read(pkl[0])
        except (zipfile.BadZipFile, OSError, EOFError) as e:
            raise CheckpointError(f"PyTorch checkpoint data.pkl is corrupted or truncated "
                                  f"({e})") from None
        archive = _Archive(zf, prefix, map_location)
        try:
            return _Unpickler(io.BytesIO(data), archive).load()
        except (CheckpointError, UnsafeGlobalError):
            raise
        except pickle.UnpicklingError as e:
            raise CheckpointError(f"PyTorch checkpoint pickle is corrupted ({e})") from None
        except (EOFError, ValueError, TypeError, KeyError, IndexError, AttributeError,
                struct_error()) as e:
            raise CheckpointError(f"PyTorch checkpoint pickle is malformed "
                                  f"({type(e).__name__}: {e})") from None


def struct_error():
    import struct
    return struct.error

