"""`.safetensors` files, read and written without the safetensors package.

The format (https://github.com/huggingface/safetensors): 8 bytes little-endian header size N,
then N bytes of JSON ``{"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin,
end]}, ..., "__metadata__": {str: str}}`` padded with spaces to a multiple of 8, then the
tensors' bytes (C order, little-endian), each at its offsets from the end of the header,
together covering the data section without gaps or overlaps.
"""
import io
import json
import struct

import numpy as np

import tensorlib
import tensorlib._C.dtypes as dt
from tensorlib._serialization import tensors as _tensors
from tensorlib._serialization.errors import CheckpointError

__all__ = ["save", "save_file", "load", "load_file", "read"]

TO_CODE = {dt.bool_: "BOOL", dt.uint8: "U8", dt.int8: "I8", dt.int16: "I16", dt.int32: "I32",
           dt.int64: "I64", dt.float16: "F16", dt.bfloat16: "BF16", dt.float32: "F32",
           dt.float64: "F64"}
FROM_CODE = {code: d for d, code in TO_CODE.items()}
MAX_HEADER = 100 * 1024 * 1024


def save(tensors, metadata=None):
    """The bytes of a .safetensors file holding the dict `tensors` (str -> Tensor)."""
    f = io.BytesIO()
    write(tensors, f, metadata)
    return f.getvalue()


def write(tensors, f, metadata=None):
    if not isinstance(tensors, dict):
        raise TypeError(f"safetensors holds a dict of str -> Tensor, got "
                        f"{type(tensors).__name__}")
    header, arrays, offset = {}, [], 0
    if metadata is not None:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise ValueError("safetensors metadata must map str to str")
        header["__metadata__"] = dict(metadata)
    for name in sorted(tensors):
        t = tensors[name]
        if not isinstance(name, str) or name == "__metadata__":
            raise ValueError(f"bad safetensors tensor name {name!r}")
        if not isinstance(t, tensorlib.Tensor):
            raise TypeError(f"safetensors holds tensors only; {name!r} is "
                            f"{type(t).__name__}")
        array = np.ascontiguousarray(t.detach().cpu().numpy())
        header[name] = {"dtype": TO_CODE[t._dtype], "shape": list(t._sizes),
                        "data_offsets": [offset, offset + array.nbytes]}
        arrays.append(array)
        offset += array.nbytes
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    head += b" " * (-len(head) % 8)
    f.write(struct.pack("<Q", len(head)))
    f.write(head)
    for array in arrays:
        f.write(memoryview(array.reshape(-1).view(np.uint8)))


def save_file(tensors, filename, metadata=None):
    """Write `tensors` (str -> Tensor) to `filename` atomically (written aside, renamed)."""
    from tensorlib.serialization import _atomic_write
    _atomic_write(filename, lambda f: write(tensors, f, metadata))


def load(data, device="cpu"):
    """The dict of tensors in the .safetensors bytes `data`."""
    f = io.BytesIO(data)
    return read(f, f.read(8), device)


def load_file(filename, device="cpu"):
    """The dict of tensors in the .safetensors file `filename`, on `device`."""
    with open(filename, "rb") as f:
        return read(f, f.read(8), device)


def metadata(filename):
    """The `__metadata__` dict of a .safetensors file (or None)."""
    with open(filename, "rb") as f:
        return _header(f, f.read(8))[0]


def looks_like(prefix, peek):
    """Whether a file starting with these 8 bytes (+ the next ones) is a safetensors file."""
    if len(prefix) < 8:
        return False
    n = struct.unpack("<Q", prefix)[0]
    return 2 <= n <= MAX_HEADER and peek[:1] == b"{"


def _header(f, prefix):
    if len(prefix) != 8:
        raise CheckpointError("safetensors file is truncated (no header size)")
    n = struct.unpack("<Q", prefix)[0]
    if n > MAX_HEADER:
        raise CheckpointError(f"safetensors header size {n} is too large: corrupted file")
    head = f.read(n)
    if len(head) != n:
        raise CheckpointError(f"safetensors file is truncated: the header needs {n} bytes, "
                              f"the file has {len(head)}")
    try:
        header = json.loads(head.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise CheckpointError(f"safetensors header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise CheckpointError("safetensors header is not a JSON object")
    meta = header.pop("__metadata__", None)
    entries = []
    for name, info in header.items():
        try:
            code, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise CheckpointError(f"safetensors entry {name!r} is malformed") from None
        if code not in FROM_CODE:
            raise CheckpointError(f"safetensors dtype {code!r} of {name!r} is not supported by "
                                  f"tensorlib")
        if not isinstance(shape, list) or any(type(s) is not int or s < 0 for s in shape) or \
                type(begin) is not int or type(end) is not int:
            raise CheckpointError(f"safetensors entry {name!r} is malformed")
        d = FROM_CODE[code]
        if end - begin != int(np.prod(shape, dtype=np.int64)) * d.itemsize:
            raise CheckpointError(f"safetensors entry {name!r}: data_offsets [{begin}, {end}] "
                                  f"do not fit shape {shape} of {code}")
        entries.append((begin, end, name, d, shape))
    entries.sort()
    pos = 0
    for begin, end, name, _, _ in entries:
        if begin != pos:
            raise CheckpointError(f"safetensors entry {name!r} starts at {begin}, expected "
                                  f"{pos}: overlapping or missing data")
        pos = end
    return meta, entries


def read(f, prefix, device="cpu"):
    """Read a safetensors file from `f`, whose first 8 bytes were read already."""
    _, entries = _header(f, prefix)
    table = _tensors.StorageTable(device)
    out = {}
    for key, (begin, end, name, d, shape) in enumerate(entries):
        buf = _tensors.host_buffer(end - begin)
        from tensorlib._serialization.native import _readinto_exact
        _readinto_exact(f, buf, f"tensor {name!r}")
        table.add(key, buf, "cpu")
        shape = tuple(shape)
        out[name] = table.tensor(key, d, shape, _contiguous(shape), 0)
    if f.read(1):
        raise CheckpointError("safetensors file has bytes after its last tensor: corrupted")
    return dict(sorted(out.items()))


def _contiguous(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))
