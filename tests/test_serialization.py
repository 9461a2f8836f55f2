"""tensorlib.serialization: save/load, sharing, map_location, atomic saves, safetensors,
PyTorch checkpoints, and bad or malicious files (nothing in them ever runs)."""
import collections
import enum
import hashlib
import io
import json
import os
import pathlib
import pickle
import stat
import struct
import zipfile

import numpy as np
import pytest

import tensorlib
from tensorlib.serialization import (CheckpointError, UnsafeGlobalError, add_safe_globals,
                                     clear_safe_globals, get_safe_globals, load,
                                     load_safetensors, safe_globals, save, save_safetensors,
                                     safetensors_metadata)
from tensorlib._serialization import native

MARK = {"ran": False}


def _mark(*args):
    MARK["ran"] = True
    return None


class UserThing:
    def __init__(self, a):
        self.a = a
        self.t = tensorlib.ones(2)


class Color(enum.Enum):
    RED = 1


Pair = collections.namedtuple("Pair", "a b")


def _roundtrip(obj, **kw):
    f = io.BytesIO()
    save(obj, f)
    f.seek(0)
    return load(f, **kw)


def _eq(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tolist() == b.tolist()


# ---- round trips ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [tensorlib.bool, tensorlib.uint8, tensorlib.int8,
                                   tensorlib.int16, tensorlib.int32, tensorlib.int64,
                                   tensorlib.float16, tensorlib.bfloat16, tensorlib.float32,
                                   tensorlib.float64])
def test_tensor_dtypes(dtype):
    t = tensorlib.arange(6).view(2, 3).to(dtype)
    assert _eq(_roundtrip(t), t)


def test_nested_containers_and_scalars():
    obj = {"a": [1, 2.5, True, None, "s", float("inf"), float("nan")], "b": (1, (2, [3])),
           3: {"deep": [{"x": tensorlib.zeros(2)}]}, (1, "k"): b"bytes", "ba": bytearray(b"x"),
           "set": {1, 2}, "fs": frozenset({3}), "c": 1 + 2j, "sl": slice(1, None, 2),
           "r": range(2, 9, 3), "big": 2 ** 100, "od": collections.OrderedDict(z=1, a=2),
           "dd": collections.defaultdict(list, {"k": [1]}), "dtype": tensorlib.float16,
           "dev": tensorlib.device("cpu"), "size": tensorlib.Size([2, 3]), "e": [], "ed": {}}
    out = _roundtrip(obj)
    assert out["a"][:6] == obj["a"][:6] and out["a"][6] != out["a"][6]
    assert out["b"] == (1, (2, [3])) and out[(1, "k")] == b"bytes"
    assert out[3]["deep"][0]["x"].tolist() == [0.0, 0.0]
    for key in ("ba", "set", "fs", "c", "sl", "r", "big", "dtype", "dev", "size", "e", "ed"):
        assert out[key] == obj[key] and type(out[key]) is type(obj[key]), key
    assert list(out["od"]) == ["z", "a"] and isinstance(out["od"], collections.OrderedDict)
    assert out["dd"]["new"] == [] and out["dd"]["k"] == [1]


def test_numpy_arrays_and_scalars():
    import ml_dtypes
    obj = {"f": np.arange(6, dtype=np.float32).reshape(2, 3).T, "i": np.int16(-3),
           "s": np.array(["ab", "c"]), "b": np.ones(2, dtype=ml_dtypes.bfloat16),
           "z": np.zeros((0, 4)), "dt": np.dtype("float16")}
    out = _roundtrip(obj)
    assert np.array_equal(out["f"], obj["f"]) and out["f"].dtype == np.float32
    assert out["i"] == np.int16(-3) and out["i"].dtype == np.int16
    assert list(out["s"]) == ["ab", "c"] and out["b"].dtype == obj["b"].dtype
    assert out["z"].shape == (0, 4) and out["dt"] == np.float16
    with pytest.raises(TypeError, match="Python objects"):
        save({"o": np.array([object()])}, io.BytesIO())


def test_views_share_storage_after_loading():
    base = tensorlib.arange(20.)
    a = base.view(4, 5)
    b = a[1:3, ::2]
    c = a.t()
    out = _roundtrip({"a": a, "b": b, "c": c, "again": a})
    assert out["again"] is out["a"]
    assert _eq(out["b"], b) and _eq(out["c"], c)
    assert out["b"].stride() == b.stride() and out["b"].storage_offset() == b.storage_offset()
    out["a"][1, 0] = -1.0
    assert out["b"][0, 0].item() == -1.0 and out["c"][0, 1].item() == -1.0
    f = io.BytesIO()
    save({"a": a, "b": b, "c": c}, f)
    single = io.BytesIO()
    save(a, single)
    assert len(f.getvalue()) < len(single.getvalue()) + 1024   # one storage, not three


def test_requires_grad_and_parameters():
    t = tensorlib.ones(3, requires_grad=True)
    out = _roundtrip({"t": t, "plain": tensorlib.ones(1)})
    assert out["t"].requires_grad and not out["plain"].requires_grad and out["t"].is_leaf
    nn = pytest.importorskip("tensorlib.nn")
    p = nn.Parameter(tensorlib.zeros(2))
    q = _roundtrip(p)
    assert type(q) is nn.Parameter and q.requires_grad


def test_module_and_optimizer_state_dicts():
    nn = pytest.importorskip("tensorlib.nn")
    optim = pytest.importorskip("tensorlib.optim")
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(tensorlib.ones(5, 4)).sum().backward()
    opt.step()
    ckpt = _roundtrip({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3})
    model2 = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    model2.load_state_dict(ckpt["model"])
    opt2 = optim.SGD(model2.parameters(), lr=0.1, momentum=0.9)
    opt2.load_state_dict(ckpt["opt"])
    x = tensorlib.ones(2, 4)
    assert model2(x).tolist() == model(x).tolist()
    assert ckpt["epoch"] == 3


def test_whole_module_and_user_classes():
    nn = pytest.importorskip("tensorlib.nn")
    model = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    loaded = _roundtrip(model)
    assert type(loaded) is nn.Sequential
    x = tensorlib.ones(1, 2)
    assert loaded(x).tolist() == model(x).tolist()
    obj = {"u": UserThing(5), "enum": Color.RED, "pair": Pair(1, "x"), "fn": _mark}
    f = io.BytesIO()
    save(obj, f)
    f.seek(0)
    with pytest.raises(UnsafeGlobalError, match="UserThing"):
        load(f)
    f.seek(0)
    with safe_globals([UserThing, Color, Pair, _mark]):
        out = load(f)
    assert out["u"].a == 5 and out["u"].t.tolist() == [1.0, 1.0]
    assert out["enum"] is Color.RED and out["pair"] == Pair(1, "x") and out["fn"] is _mark
    assert not MARK["ran"]
    add_safe_globals([UserThing, Color, Pair, _mark])
    try:
        assert UserThing in get_safe_globals()
        f.seek(0)
        assert load(f)["u"].a == 5
    finally:
        clear_safe_globals()
    assert get_safe_globals() == []
    with pytest.raises(TypeError, match="module-level"):
        save({"f": lambda: 0}, io.BytesIO())


# ---- files, paths, map_location ----------------------------------------------------------------
def test_paths_pathlib_and_file_objects(tmp_path):
    t = tensorlib.arange(4)
    save(t, str(tmp_path / "a.pt"))
    save(t, tmp_path / "b.pt")
    with open(tmp_path / "c.pt", "wb") as f:
        save(t, f)
    for name in ("a.pt", "b.pt", "c.pt"):
        assert load(tmp_path / name).tolist() == [0, 1, 2, 3]
        assert load(str(tmp_path / name), weights_only=True).tolist() == [0, 1, 2, 3]
        with open(tmp_path / name, "rb") as f:
            assert load(f, map_location="cpu", weights_only=False).tolist() == [0, 1, 2, 3]
    assert sorted(os.listdir(tmp_path)) == ["a.pt", "b.pt", "c.pt"]   # no temporaries left


def test_map_location_forms():
    t = tensorlib.arange(3.)
    for ml in ("cpu", tensorlib.device("cpu"), {"cpu": "cpu"}, lambda storage, loc: storage,
               lambda storage, loc: None, lambda storage, loc: "cpu"):
        assert _roundtrip(t, map_location=ml).tolist() == [0.0, 1.0, 2.0]
    seen = []
    _roundtrip(t, map_location=lambda s, loc: seen.append(loc))
    assert seen == ["cpu"]
    with pytest.raises(CheckpointError, match="unavailable|no backend"):
        _roundtrip(t, map_location="nosuchdevice:0")


def test_saving_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.tl"
    save({"v": 1, "t": tensorlib.ones(3)}, path)
    good = path.read_bytes()

    class Crash(Exception):
        pass

    real_write = native.write

    def crashing(obj, f):
        real_write(obj, f)
        f.write(b"partial")
        raise Crash()
    monkeypatch.setattr(native, "write", crashing)
    with pytest.raises(Crash):
        save({"v": 2}, path)
    monkeypatch.setattr(native, "write", real_write)
    assert path.read_bytes() == good and load(path)["v"] == 1
    # a crash inside the file write itself (after the data was encoded)
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(Crash()))
    with pytest.raises(Crash):
        save({"v": 3}, path)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert load(path)["v"] == 1
    assert os.listdir(tmp_path) == ["ckpt.tl"]
    with pytest.raises(TypeError):                     # unsaveable: the file is not touched
        save({"f": lambda: 1}, path)
    assert load(path)["v"] == 1



def test_saved_file_has_the_permissions_open_would_give(tmp_path):
    """A new file gets 0o666 less the umask, as open(path, "wb") (PyTorch's save) gives it,
    not the temporary file's 0o600; an existing file keeps its mode."""
    mask = os.umask(0o022)
    try:
        save({"t": tensorlib.ones(2)}, tmp_path / "new.pt")
        save_safetensors({"t": tensorlib.ones(2)}, tmp_path / "new.safetensors")
    finally:
        os.umask(mask)
    for name in ("new.pt", "new.safetensors"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name
    kept = tmp_path / "kept.pt"
    kept.write_bytes(b"")
    kept.chmod(0o640)
    save({"t": tensorlib.ones(2)}, kept)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640 and load(kept)["t"].tolist() == [1, 1]


# ---- bad files --------------------------------------------------------------------------------
def _ckpt_bytes():
    f = io.BytesIO()
    save({"w": tensorlib.arange(100.), "n": 1}, f)
    return f.getvalue()


def test_truncated_files_raise():
    data = _ckpt_bytes()
    for n in (0, 3, 8, 20, 60, len(data) // 2, len(data) - 1):
        with pytest.raises(CheckpointError, match="truncated|empty"):
            load(io.BytesIO(data[:n]))


def test_corrupted_files_raise():
    data = bytearray(_ckpt_bytes())
    tail = bytearray(data)
    tail[-5] ^= 0xFF                                   # tensor bytes
    with pytest.raises(CheckpointError, match="checksum mismatch in blob"):
        load(io.BytesIO(bytes(tail)))
    head = bytearray(data)
    head[native._PREFIX.size + 10] ^= 0x01              # header text
    with pytest.raises(CheckpointError, match="header checksum"):
        load(io.BytesIO(bytes(head)))
    ver = bytearray(data)
    ver[8] = 99
    with pytest.raises(CheckpointError, match="version 99"):
        load(io.BytesIO(bytes(ver)))


def _forge(header_update, blobs=()):
    """A native checkpoint with a hand-written header (and valid checksums)."""
    header = {"format": "tensorlib.checkpoint", "version": 1, "byteorder": "little",
              "checksum": "sha256", "data_nbytes": 0, "blobs": [], "storages": [], "root": None}
    header.update(header_update)
    head = json.dumps(header).encode()
    out = native._PREFIX.pack(native.MAGIC, 1, len(head), hashlib.sha256(head).digest()) + head
    return out + b"\0" * (-len(out) % 64)


def test_forged_headers_raise_and_run_nothing():
    cases = [
        ({"root": {"$": "object", "cls": "os.system", "state": "echo hi"}}, UnsafeGlobalError),
        ({"root": {"$": "object", "cls": "tests.test_serialization.UserThing", "state": {}}},
         UnsafeGlobalError),
        ({"root": {"$": "global", "path": "tests.test_serialization._mark"}}, UnsafeGlobalError),
        ({"root": {"$": "global", "path": "tensorlib.serialization.save"}}, UnsafeGlobalError),
        ({"root": {"$": "global", "path": "tensorlib.ops.creation.np.load"}}, UnsafeGlobalError),
        ({"root": {"$": "defaultdict", "factory": {"$": "global", "path": "builtins.eval"},
                   "v": []}}, UnsafeGlobalError),
        ({"root": {"$": "object", "cls": "tensorlib._C.storage.Storage", "state": {}}},
         UnsafeGlobalError),
        ({"root": {"$": "nope"}}, CheckpointError),
        ({"root": {"$": "ref", "id": 7}}, CheckpointError),
        ({"root": {"$": "tensor", "storage": 0, "dtype": "float32", "shape": [10],
                   "stride": [1], "offset": 0}}, CheckpointError),
        ({"format": "other"}, CheckpointError),
    ]
    for update, error in cases:
        with pytest.raises(error):
            load(io.BytesIO(_forge(update)))
    assert not MARK["ran"]


def test_tensor_reaching_past_its_storage_raises():
    data = _ckpt_bytes()
    prefix = native._PREFIX.unpack(data[:native._PREFIX.size])
    head = json.loads(data[native._PREFIX.size:native._PREFIX.size + prefix[2]])
    head["root"]["v"][0][1]["shape"] = [1000]
    new = json.dumps(head).encode()
    blob_start = native._align(native._PREFIX.size + prefix[2])
    out = native._PREFIX.pack(native.MAGIC, 1, len(new), hashlib.sha256(new).digest()) + new
    out += b"\0" * (native._align(len(out)) - len(out)) + data[blob_start:]
    with pytest.raises(CheckpointError, match="past the end of its storage"):
        load(io.BytesIO(out))


def test_wrong_formats_raise():
    with pytest.raises(CheckpointError, match="unknown checkpoint format"):
        load(io.BytesIO(b"hello world, not a checkpoint"))
    with pytest.raises(CheckpointError, match="raw pickle"):
        load(io.BytesIO(pickle.dumps({"a": 1}, protocol=2)))
    z = io.BytesIO()
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("x.txt", "hi")
    with pytest.raises(CheckpointError, match="not a PyTorch checkpoint"):
        load(io.BytesIO(z.getvalue()))
    with pytest.raises(TypeError, match="binary"):
        load(io.StringIO("abcdefgh"))


class _Evil:
    def __reduce__(self):
        return (_mark, ("pwned",))


def _torch_like_zip(payload):
    """A zip laid out like torch.save's, whose data.pkl is `payload` (made without torch)."""
    z = io.BytesIO()
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("archive/data.pkl", payload)
        zf.writestr("archive/byteorder", "little")
        zf.writestr("archive/version", "3\n")
    return z.getvalue()


def test_code_executing_pickle_is_refused_and_nothing_runs(tmp_path):
    MARK["ran"] = False
    for payload in (pickle.dumps({"x": _Evil()}, protocol=2),
                    pickle.dumps([_Evil()], protocol=4),
                    b"cos\nsystem\n(S'touch " + str(tmp_path / "PWNED").encode() + b"'\ntR."):
        with pytest.raises(UnsafeGlobalError) as info:
            load(io.BytesIO(_torch_like_zip(payload)))
        assert isinstance(info.value, pickle.UnpicklingError)
        assert "_mark" in str(info.value) or "system" in str(info.value)
    assert not MARK["ran"] and not (tmp_path / "PWNED").exists()
    # the same pickle as a raw file
    with pytest.raises(CheckpointError):
        load(io.BytesIO(pickle.dumps(_Evil(), protocol=2)))
    assert not MARK["ran"]


def test_torch_like_zip_garbage_pickle():
    with pytest.raises(CheckpointError):
        load(io.BytesIO(_torch_like_zip(b"\x80\x02}q\x00(X")))
    good = _torch_like_zip(pickle.dumps({"a": [1, 2]}, protocol=2))
    assert load(io.BytesIO(good)) == {"a": [1, 2]}
    with pytest.raises(CheckpointError):
        load(io.BytesIO(good[:len(good) // 2]))


# ---- safetensors ------------------------------------------------------------------------------
def test_safetensors_roundtrip(tmp_path):
    tensors = {"w": tensorlib.arange(6.).view(2, 3),
               "b": tensorlib.ones(2, dtype=tensorlib.bfloat16),
               "i": tensorlib.arange(3), "e": tensorlib.zeros(0, 2),
               "t": tensorlib.arange(6.).view(2, 3).t()}
    path = tmp_path / "m.safetensors"
    save_safetensors(tensors, path, metadata={"format": "pt"})
    out = load_safetensors(path)
    assert set(out) == set(tensors)
    for k in tensors:
        assert _eq(out[k], tensors[k]), k
    assert safetensors_metadata(path) == {"format": "pt"}
    assert _eq(load(path)["w"], tensors["w"])            # tensorlib.load recognises it


def _safetensors_by_hand():
    """A file made from the format description (not by our writer)."""
    a = np.arange(4, dtype="<f4").tobytes()
    b = np.array([1, -2], dtype="<i8").tobytes()
    header = {"a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
              "b": {"dtype": "I64", "shape": [2], "data_offsets": [16, 32]},
              "__metadata__": {"k": "v"}}
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    return struct.pack("<Q", len(head)) + head + a + b, head


def test_safetensors_read_by_spec_and_bad_files(tmp_path):
    data, head = _safetensors_by_hand()
    out = load(io.BytesIO(data))
    assert out["a"].tolist() == [[0.0, 1.0], [2.0, 3.0]] and out["b"].tolist() == [1, -2]
    with pytest.raises(CheckpointError, match="truncated"):
        load(io.BytesIO(data[:-3]))
    bad = data.replace(b'"F32"', b'"F8X"')
    with pytest.raises(CheckpointError, match="not supported"):
        load(io.BytesIO(bad))
    bad = data.replace(b"[16, 32]", b"[20, 36]")
    with pytest.raises(CheckpointError):
        load(io.BytesIO(bad))
    p = tmp_path / "x.safetensors"
    p.write_bytes(data + b"extra")
    with pytest.raises(CheckpointError, match="after its last tensor"):
        load_safetensors(p)


def test_safetensors_package_interop(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "a.safetensors"
    st.save_file({"x": np.arange(5, dtype=np.float32)}, str(path))
    assert load_safetensors(path)["x"].tolist() == [0, 1, 2, 3, 4]
    save_safetensors({"y": tensorlib.arange(3)}, path)
    assert st.load_file(str(path))["y"].tolist() == [0, 1, 2]


# ---- PyTorch checkpoints ----------------------------------------------------------------------
def test_pytorch_checkpoint_loads(tmp_path):
    torch = pytest.importorskip("torch")
    w = torch.arange(12.).view(3, 4)
    obj = {"w": w, "row": w[1], "wt": w.t(), "bf": torch.ones(2, dtype=torch.bfloat16),
           "i": torch.arange(3, dtype=torch.int32), "p": torch.nn.Parameter(torch.zeros(2)),
           "meta": {"epoch": 3, "name": "run", "b": b"raw", "s": {1, 2}},
           "dtype": torch.float16, "size": torch.Size([2, 3]),
           "od": collections.OrderedDict(a=torch.zeros(1))}
    path = tmp_path / "t.pt"
    torch.save(obj, path)
    out = load(path)
    assert out["w"].tolist() == w.tolist() and out["wt"].tolist() == w.t().tolist()
    assert out["bf"].dtype == tensorlib.bfloat16 and out["i"].dtype == tensorlib.int32
    assert out["p"].requires_grad and out["meta"] == {"epoch": 3, "name": "run", "b": b"raw",
                                                      "s": {1, 2}}
    assert out["dtype"] == tensorlib.float16 and out["size"] == tensorlib.Size([2, 3])
    out["w"][1, 0] = 99.0
    assert out["row"][0].item() == 99.0                 # views still share
    with open(path, "rb") as f:
        assert load(f, map_location="cpu", weights_only=True)["w"].shape == (3, 4)


def test_pytorch_model_state_dict_loads_into_tensorlib_model(tmp_path):
    torch = pytest.importorskip("torch")
    nn = pytest.importorskip("tensorlib.nn")
    tmodel = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    torch.save(tmodel.state_dict(), tmp_path / "m.pth")
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    model.load_state_dict(load(tmp_path / "m.pth"))
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    expected = tmodel(torch.from_numpy(x)).detach().numpy()
    got = model(tensorlib.from_numpy(x)).detach().numpy()
    assert np.allclose(got, expected, atol=1e-6)


def test_pytorch_whole_module_and_malicious_checkpoint(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("tensorlib.nn")
    lin = torch.nn.Linear(3, 2)
    torch.save(lin, tmp_path / "whole.pt")
    m = load(tmp_path / "whole.pt")
    assert type(m).__module__ == "tensorlib.nn.modules.linear"
    assert np.allclose(m(tensorlib.ones(1, 3)).detach().numpy(),
                       lin(torch.ones(1, 3)).detach().numpy(), atol=1e-6)
    MARK["ran"] = False
    torch.save({"x": torch.ones(1), "evil": _Evil()}, tmp_path / "evil.pt")
    with pytest.raises(UnsafeGlobalError, match="_mark"):
        load(tmp_path / "evil.pt")
    assert not MARK["ran"]
    cuda = {"x": torch.ones(1)}
    torch.save(cuda, tmp_path / "c.pt")
    assert load(tmp_path / "c.pt", map_location={"cpu": "cpu"})["x"].tolist() == [1.0]


def test_pytorch_reads_nothing_of_ours_but_we_read_its_bytes(tmp_path):
    torch = pytest.importorskip("torch")
    t = torch.randn(5, 7)
    torch.save({"t": t}, tmp_path / "r.pt")
    data = bytearray((tmp_path / "r.pt").read_bytes())
    assert np.array_equal(load(io.BytesIO(bytes(data)))["t"].numpy(), t.numpy())
    with pytest.raises(CheckpointError):
        load(io.BytesIO(bytes(data[:len(data) - 200])))


def test_torch_serialization_annotation_aliases():
    """Pyro's param store imports torch.serialization.MAP_LOCATION for its annotations."""
    import typing

    from tensorlib import serialization
    assert str in typing.get_args(serialization.MAP_LOCATION)
    assert type(None) in typing.get_args(serialization.MAP_LOCATION)
    assert str in typing.get_args(serialization.FILE_LIKE)
