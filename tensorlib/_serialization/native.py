"""tensorlib's checkpoint format: one file, a JSON header and raw tensor bytes. No pickle.

Layout (all integers little-endian)::

    8 bytes   magic b"\\x89TLCKPT\\n"
    4 bytes   format version (1)
    8 bytes   header length H
    32 bytes  sha256 of the header
    H bytes   header, JSON (UTF-8)
    padding   to a multiple of 64
    data      the blobs, each at a multiple of 64 from the data start

The header is ``{"format": "tensorlib.checkpoint", "version": 1, "byteorder": "little",
"checksum": "sha256", "data_nbytes": N, "blobs": [{"offset", "nbytes", "sha256"}, ...],
"storages": [{"blob", "nbytes", "location"}, ...], "root": <node>}``. A node is a JSON null,
bool, int or str, or an object tagged by "$":

    float (non-finite), list, tuple, dict (items as [key, value] node pairs; any key type),
    odict, defaultdict, set, frozenset, bytes/bytearray (a blob), complex, slice, range,
    tensor {storage, dtype, shape, stride, offset, requires_grad, cls?},
    ndarray {blob, dtype, shape}, npscalar {dtype, hex}, dtype, npdtype, device, size,
    object {cls, state} (rebuilt as cls.__new__(cls) + __setstate__(state) or __dict__
    update, only for allowed classes, see globals), namedtuple {cls, v}, enum {cls, v},
    global {path} (an allowed class or function), ref {id} (a tensor, object or container
    met before: identity and cycles survive).

Every blob carries its length and sha256, and the file its total length, so truncation and
corruption raise CheckpointError before any tensor is made.
"""
import collections
import enum
import hashlib
import io
import json
import math
import struct
import types

import numpy as np

import tensorlib
from tensorlib._C.opdef import AliasedOp
from tensorlib._serialization import globals as _globals
from tensorlib._serialization import tensors as _tensors
from tensorlib._serialization.errors import CheckpointError, UnsafeGlobalError

MAGIC = b"\x89TLCKPT\n"
VERSION = 1
FORMAT = "tensorlib.checkpoint"
ALIGN = 64
_PREFIX = struct.Struct("<8sIQ32s")
MAX_HEADER = 1 << 31


def _align(n):
    return -(-n // ALIGN) * ALIGN


# ---- saving --------------------------------------------------------------------------------
class _Encoder:
    def __init__(self):
        self.blobs = []            # numpy uint8 arrays (or bytes)
        self.storages = []         # header records
        self.storage_keys = {}     # id(storage) -> index
        self.memo = {}             # id(obj) -> memo id
        self.keep = []             # objects whose id() is in memo stay alive while saving

    def _blob(self, data):
        self.blobs.append(data)
        return len(self.blobs) - 1

    def _memo(self, obj):
        """(node to emit, None) when obj was seen; else (None, memo id) after recording it."""
        key = id(obj)
        if key in self.memo:
            return {"$": "ref", "id": self.memo[key]}, None
        self.memo[key] = len(self.memo)
        self.keep.append(obj)
        return None, self.memo[key]

    def encode(self, obj):
        t = type(obj)
        if obj is None or t in (bool, int, str):
            return obj
        if t is float:
            if math.isfinite(obj):
                return obj
            return {"$": "float", "v": repr(obj)}
        if isinstance(obj, tensorlib.Tensor):
            if obj.layout is not tensorlib.strided:
                return self._sparse(obj)
            return self._tensor(obj)
        if isinstance(obj, tensorlib.dtype):
            return {"$": "dtype", "v": obj.name}
        if isinstance(obj, tensorlib.device):
            return {"$": "device", "v": str(obj)}
        if isinstance(obj, tensorlib.Size):
            return {"$": "size", "v": [int(s) for s in obj]}
        if isinstance(obj, np.ndarray):
            return self._ndarray(obj)
        if isinstance(obj, np.generic):
            return self._npscalar(obj)
        if isinstance(obj, np.dtype):
            return {"$": "npdtype", "v": _tensors.numpy_dtype_name(obj)}
        if t in (list, dict, collections.OrderedDict, collections.defaultdict, set):
            return self._container(obj)
        if t is tuple:
            return {"$": "tuple", "v": [self.encode(x) for x in obj]}
        if t is frozenset:
            return {"$": "frozenset", "v": [self.encode(x) for x in obj]}
        if t in (bytes, bytearray):
            return {"$": t.__name__, "blob": self._blob(np.frombuffer(bytes(obj), np.uint8))}
        if t is complex:
            return {"$": "complex", "re": self.encode(obj.real), "im": self.encode(obj.imag)}
        if t is slice:
            return {"$": "slice", "v": [self.encode(obj.start), self.encode(obj.stop),
                                       self.encode(obj.step)]}
        if t is range:
            return {"$": "range", "v": [obj.start, obj.stop, obj.step]}
        if _is_global(obj):
            return {"$": "global", "path": self._global_path(obj)}
        if isinstance(obj, enum.Enum):
            return {"$": "enum", "cls": _globals.path_of(t), "v": self.encode(obj.value)}
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            return {"$": "namedtuple", "cls": _globals.path_of(t),
                    "v": [self.encode(x) for x in obj]}
        return self._object(obj)

    def _global_path(self, obj):
        path = _globals.path_of(obj)
        if "<lambda>" in path or "<locals>" in path:
            raise TypeError(f"cannot save {obj!r}: only module-level classes and functions "
                            f"can be saved (by their path)")
        return path

    def _container(self, obj):
        ref, mid = self._memo(obj)
        if ref is not None:
            return ref
        t = type(obj)
        if t is list:
            return {"$": "list", "id": mid, "v": [self.encode(x) for x in obj]}
        if t is set:
            return {"$": "set", "id": mid, "v": [self.encode(x) for x in obj]}
        items = [[self.encode(k), self.encode(v)] for k, v in obj.items()]
        if t is dict:
            return {"$": "dict", "id": mid, "v": items}
        if t is collections.OrderedDict:
            return {"$": "odict", "id": mid, "v": items}
        factory = None if obj.default_factory is None else self.encode(obj.default_factory)
        return {"$": "defaultdict", "id": mid, "factory": factory, "v": items}

    def _tensor(self, t):
        ref, mid = self._memo(t)
        if ref is not None:
            return ref
        storage = t._storage
        key = id(storage)
        index = self.storage_keys.get(key)
        if index is None:
            index = len(self.storages)
            self.storage_keys[key] = index
            self.keep.append(storage)
            self.storages.append({"blob": self._blob(_tensors.storage_bytes(t)),
                                  "nbytes": storage._nbytes, "location": str(t._device)})
        node = {"$": "tensor", "id": mid, "storage": index, "dtype": t._dtype.name,
                "shape": list(t._sizes), "stride": list(t._strides), "offset": t._offset,
                "requires_grad": bool(t._requires_grad)}
        if type(t) is not tensorlib.Tensor and not t.is_conj():    # a conj() result: plain
            node["cls"] = _globals.path_of(type(t))
        return node

    def _sparse(self, t):
        """A sparse tensor (tensorlib/sparse): its layout, size and component tensors."""
        ref, mid = self._memo(t)
        if ref is not None:
            return ref
        return {"$": "sparse", "id": mid, "layout": t.layout._name, "size": list(t._sizes),
                "parts": [self.encode(t.__dict__[name].detach()) for name in t._components],
                "coalesced": bool(t.__dict__.get("_coalesced", False)),
                "requires_grad": bool(t._requires_grad)}

    def _ndarray(self, a):
        if a.dtype.hasobject or a.dtype.names is not None:
            raise TypeError(f"cannot save a numpy array of dtype {a.dtype} (it holds Python "
                            f"objects or fields); only plain numeric, bool and string arrays")
        ref, mid = self._memo(a)
        if ref is not None:
            return ref
        data = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
        return {"$": "ndarray", "id": mid, "dtype": _tensors.numpy_dtype_name(a.dtype),
                "shape": list(a.shape), "blob": self._blob(data)}

    def _npscalar(self, x):
        if x.dtype.hasobject:
            raise TypeError(f"cannot save a numpy scalar of dtype {x.dtype}")
        return {"$": "npscalar", "dtype": _tensors.numpy_dtype_name(x.dtype),
                "hex": np.asarray(x).tobytes().hex()}

    def _object(self, obj):
        ref, mid = self._memo(obj)
        if ref is not None:
            return ref
        cls = type(obj)
        getstate = getattr(obj, "__getstate__", None)
        if getstate is None or (not hasattr(obj, "__dict__") and
                                not getattr(cls, "__slots__", None) and
                                type(obj).__getstate__ is object.__getstate__):
            raise TypeError(f"cannot save an object of type {_globals.path_of(cls)}: it has "
                            f"no __dict__ or __getstate__ to save")
        state = getstate()
        return {"$": "object", "id": mid, "cls": self._global_path(cls),
                "state": self.encode(state)}


def _is_global(obj):
    """Classes and functions are saved by their path."""
    return isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType, AliasedOp))


def _dumps_header(header):
    return json.dumps(header, separators=(",", ":"), allow_nan=False).encode("utf-8")


def write(obj, f):
    """Write `obj` to the binary file object `f`."""
    enc = _Encoder()
    root = enc.encode(obj)
    records, offset = [], 0
    for blob in enc.blobs:
        offset = _align(offset)
        nbytes = blob.nbytes if isinstance(blob, np.ndarray) else len(blob)
        records.append({"offset": offset, "nbytes": nbytes,
                        "sha256": hashlib.sha256(blob).hexdigest()})
        offset += nbytes
    header = {"format": FORMAT, "version": VERSION, "byteorder": "little",
              "checksum": "sha256", "data_nbytes": offset, "blobs": records,
              "storages": enc.storages, "root": root}
    head = _dumps_header(header)
    f.write(_PREFIX.pack(MAGIC, VERSION, len(head), hashlib.sha256(head).digest()))
    f.write(head)
    pos = _PREFIX.size + len(head)
    f.write(b"\0" * (_align(pos) - pos))
    written = 0
    for blob, record in zip(enc.blobs, records):
        f.write(b"\0" * (record["offset"] - written))
        f.write(memoryview(blob).cast("B") if isinstance(blob, np.ndarray) else blob)
        written = record["offset"] + record["nbytes"]


# ---- loading -------------------------------------------------------------------------------
def _read_exact(f, n, what):
    data = f.read(n)
    if len(data) != n:
        raise CheckpointError(f"checkpoint is truncated: {what} needs {n} bytes, the file has "
                              f"{len(data)} left")
    return data


def _readinto_exact(f, buffer, what):
    view = memoryview(buffer).cast("B")
    got = 0
    while got < len(view):
        n = f.readinto(view[got:]) if hasattr(f, "readinto") else None
        if n is None:
            chunk = f.read(len(view) - got)
            n = len(chunk)
            view[got:got + n] = chunk
        if not n:
            raise CheckpointError(f"checkpoint is truncated: {what} needs {len(view)} bytes, "
                                  f"the file has {got} left")
        got += n


def read(f, prefix, map_location):
    """Load a native checkpoint from `f`, whose first 8 bytes (`prefix`) were read already."""
    rest = _read_exact(f, _PREFIX.size - len(prefix), "the file prefix")
    magic, version, hlen, digest = _PREFIX.unpack(prefix + rest)
    if version != VERSION:
        raise CheckpointError(f"checkpoint format version {version} is not supported (this "
                              f"tensorlib reads version {VERSION}); upgrade tensorlib")
    if hlen > MAX_HEADER:
        raise CheckpointError(f"checkpoint header length {hlen} is implausible: the file is "
                              f"corrupted")
    head = _read_exact(f, hlen, "the header")
    if hashlib.sha256(head).digest() != digest:
        raise CheckpointError("checkpoint header checksum mismatch: the file is corrupted")
    try:
        header = json.loads(head.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise CheckpointError(f"checkpoint header is not valid JSON ({e})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise CheckpointError("not a tensorlib checkpoint (header format field)")
    if header.get("byteorder", "little") != "little":
        raise CheckpointError("big-endian checkpoints are not supported")
    pos = _PREFIX.size + hlen
    _read_exact(f, _align(pos) - pos, "the header padding")
    try:
        blobs = _read_blobs(f, header["blobs"], header["data_nbytes"])
        return _Decoder(header, blobs, map_location).decode(header["root"])
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as e:
        raise CheckpointError(f"checkpoint header is malformed or an object could not be "
                              f"rebuilt ({type(e).__name__}: {e})") from None


def _read_blobs(f, records, data_nbytes):
    blobs, pos = [], 0
    for i, rec in enumerate(records):
        offset, nbytes = rec["offset"], rec["nbytes"]
        if not (isinstance(offset, int) and isinstance(nbytes, int)) or offset < pos or \
                nbytes < 0 or offset + nbytes > data_nbytes:
            raise CheckpointError(f"checkpoint blob {i} has a bad offset/length: the file is "
                                  f"corrupted")
        _read_exact(f, offset - pos, f"padding before blob {i}")
        buf = _tensors.host_buffer(nbytes)
        _readinto_exact(f, buf, f"blob {i}")
        if hashlib.sha256(buf).hexdigest() != rec["sha256"]:
            raise CheckpointError(f"checksum mismatch in blob {i} ({nbytes} bytes at data "
                                  f"offset {offset}): the checkpoint is corrupted")
        blobs.append(buf)
        pos = offset + nbytes
    return blobs


class _Decoder:
    def __init__(self, header, blobs, map_location):
        self.blobs = blobs
        self.memo = {}
        self.table = _tensors.StorageTable(map_location)
        for i, rec in enumerate(header["storages"]):
            buf = blobs[rec["blob"]]
            if buf.nbytes != rec["nbytes"]:
                raise CheckpointError(f"storage {i} should hold {rec['nbytes']} bytes, its "
                                      f"blob has {buf.nbytes}: the file is corrupted")
            self.table.add(i, buf, rec["location"])

    def _remember(self, node, obj):
        if "id" in node:
            self.memo[node["id"]] = obj
        return obj

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if not isinstance(node, dict) or "$" not in node:
            raise CheckpointError(f"malformed checkpoint node {str(node)[:80]!r}")
        tag = node["$"]
        method = getattr(self, "_" + tag, None) if isinstance(tag, str) else None
        if method is None:
            raise CheckpointError(f"unknown node type {tag!r} in checkpoint (written by a "
                                  f"newer tensorlib?)")
        return method(node)

    def _ref(self, node):
        try:
            return self.memo[node["id"]]
        except KeyError:
            raise CheckpointError(f"checkpoint refers to object {node['id']} before it is "
                                  f"defined: the file is corrupted") from None

    def _float(self, node):
        if node["v"] not in ("nan", "inf", "-inf"):
            raise CheckpointError(f"bad float {node['v']!r} in checkpoint")
        return float(node["v"])

    def _list(self, node):
        out = self._remember(node, [])
        out.extend(self.decode(x) for x in node["v"])
        return out

    def _tuple(self, node):
        return tuple(self.decode(x) for x in node["v"])

    def _set(self, node):
        out = self._remember(node, set())
        out.update(self.decode(x) for x in node["v"])
        return out

    def _frozenset(self, node):
        return frozenset(self.decode(x) for x in node["v"])

    def _fill(self, out, node):
        for k, v in node["v"]:
            out[self.decode(k)] = self.decode(v)
        return out

    def _dict(self, node):
        return self._fill(self._remember(node, {}), node)

    def _odict(self, node):
        return self._fill(self._remember(node, collections.OrderedDict()), node)

    def _defaultdict(self, node):
        factory = None if node["factory"] is None else self.decode(node["factory"])
        if factory is not None and not callable(factory):
            raise CheckpointError("defaultdict factory is not callable")
        return self._fill(self._remember(node, collections.defaultdict(factory)), node)

    def _bytes(self, node):
        return self.blobs[node["blob"]].tobytes()

    def _bytearray(self, node):
        return bytearray(self.blobs[node["blob"]].tobytes())

    def _complex(self, node):
        return complex(self.decode(node["re"]), self.decode(node["im"]))

    def _slice(self, node):
        return slice(*(self.decode(x) for x in node["v"]))

    def _range(self, node):
        start, stop, step = node["v"]
        if not all(type(v) is int for v in (start, stop, step)):
            raise CheckpointError("bad range in checkpoint")
        return range(start, stop, step)

    def _dtype(self, node):
        return _tensors.dtype_by_name(node["v"])

    def _npdtype(self, node):
        return _tensors.numpy_dtype(node["v"])

    def _device(self, node):
        return tensorlib.device(node["v"])

    def _size(self, node):
        return tensorlib.Size(int(v) for v in node["v"])

    def _tensor(self, node):
        dtype = _tensors.dtype_by_name(node["dtype"])
        t = self.table.tensor(node["storage"], dtype, node["shape"], node["stride"],
                              node["offset"])
        cls_path = node.get("cls")
        requires_grad = bool(node.get("requires_grad", False))
        if cls_path is not None:
            cls = _globals.resolve(cls_path, "tensor class", "tensor class")
            if not (isinstance(cls, type) and issubclass(cls, tensorlib.Tensor)):
                raise UnsafeGlobalError(f"{cls_path!r} is not a tensor class")
            t = cls(t, requires_grad)
        elif requires_grad:
            t.requires_grad_(True)
        return self._remember(node, t)

    def _sparse(self, node):
        """Through the checked constructors: indices out of the size raise."""
        parts = [self.decode(p) for p in node["parts"]]
        size = tuple(int(n) for n in node["size"])
        if node["layout"] == "sparse_coo" and len(parts) == 2:
            t = tensorlib.sparse_coo_tensor(*parts, size, is_coalesced=bool(node["coalesced"]))
        elif node["layout"] == "sparse_csr" and len(parts) == 3:
            t = tensorlib.sparse_csr_tensor(*parts, size)
        else:
            raise CheckpointError(f"bad sparse tensor node (layout {node['layout']!r}, "
                                  f"{len(parts)} parts) in checkpoint")
        if node.get("requires_grad"):
            t.requires_grad_(True)
        return self._remember(node, t)

    def _ndarray(self, node):
        dtype = _tensors.numpy_dtype(node["dtype"])
        shape = tuple(node["shape"])
        if any(type(s) is not int or s < 0 for s in shape):
            raise CheckpointError(f"bad numpy array shape {shape} in checkpoint")
        buf = self.blobs[node["blob"]]
        count = int(np.prod(shape, dtype=np.int64))
        if count * dtype.itemsize != buf.nbytes:
            raise CheckpointError(f"numpy array of shape {shape} and dtype {dtype} needs "
                                  f"{count * dtype.itemsize} bytes, its blob has {buf.nbytes}")
        return self._remember(node, buf.view(dtype).reshape(shape))

    def _npscalar(self, node):
        dtype = _tensors.numpy_dtype(node["dtype"])
        raw = bytes.fromhex(node["hex"])
        if len(raw) != dtype.itemsize:
            raise CheckpointError("bad numpy scalar in checkpoint")
        return np.frombuffer(raw, dtype=dtype)[0]

    def _global(self, node):
        return _globals.resolve(node["path"])

    def _enum(self, node):
        cls = _globals.resolve(node["cls"], "enum class", "class")
        if not (isinstance(cls, type) and issubclass(cls, enum.Enum)):
            raise UnsafeGlobalError(f"{node['cls']!r} is not an enum")
        return cls(self.decode(node["v"]))

    def _namedtuple(self, node):
        cls = _globals.resolve(node["cls"], "class", "class")
        if not (isinstance(cls, type) and issubclass(cls, tuple)):
            raise UnsafeGlobalError(f"{node['cls']!r} is not a namedtuple class")
        return cls(*(self.decode(x) for x in node["v"]))

    def _object(self, node):
        cls = _globals.resolve(node["cls"], "class", "class")
        if not isinstance(cls, type):
            raise UnsafeGlobalError(f"{node['cls']!r} is not a class")
        obj = cls.__new__(cls)
        self._remember(node, obj)
        state = self.decode(node["state"])
        setstate = getattr(obj, "__setstate__", None)
        if setstate is not None and type(obj).__setstate__ is not getattr(
                object, "__setstate__", None):
            setstate(state)
            return obj
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        if state:
            obj.__dict__.update(state)
        if slots:
            for k, v in slots.items():
                setattr(obj, k, v)
        return obj


def dumps(obj):
    f = io.BytesIO()
    write(obj, f)
    return f.getvalue()

