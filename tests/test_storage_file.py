"""UntypedStorage.from_file, byte slices of a storage and torch.asarray over a storage (what
safetensors' loader calls), against PyTorch where installed; and safetensors itself, through
the compatibility runner, where it is installed."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorlib as tl

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is the oracle")


@pytest.fixture
def sixteen_bytes(tmp_path):
    path = tmp_path / "bytes.bin"
    path.write_bytes(bytes(range(16)))
    return path


def test_private_map_reads_the_file_and_keeps_writes(sixteen_bytes):
    s = tl.UntypedStorage.from_file(str(sixteen_bytes), shared=False, nbytes=16)
    assert s.nbytes() == 16 and s.untyped() is s and s.tolist() == list(range(16))
    s[0] = 99
    assert s[0] == 99 and sixteen_bytes.read_bytes()[0] == 0


def test_shared_map_creates_grows_and_writes_through(tmp_path):
    path = tmp_path / "new.bin"
    s = tl.UntypedStorage.from_file(path, shared=True, nbytes=8)
    assert s.nbytes() == 8 and path.stat().st_size == 8
    s[3] = 7
    del s
    assert path.read_bytes()[3] == 7


def test_from_file_errors(sixteen_bytes, tmp_path):
    with pytest.raises(RuntimeError, match="size <16> is smaller than the required mapping "
                                           "size <32>"):
        tl.UntypedStorage.from_file(str(sixteen_bytes), shared=False, nbytes=32)
    with pytest.raises(RuntimeError, match="unable to open file .* in read-only mode"):
        tl.UntypedStorage.from_file(str(tmp_path / "missing.bin"), shared=False, nbytes=4)
    assert tl.UntypedStorage.from_file(str(sixteen_bytes), nbytes=0).nbytes() == 0


@needs_torch
def test_slices_share_bytes_as_torchs(sixteen_bytes):
    ours = tl.UntypedStorage.from_file(str(sixteen_bytes), shared=False, nbytes=16)
    theirs = torch.UntypedStorage.from_file(str(sixteen_bytes), shared=False, nbytes=16)
    for index in (slice(4, 8), slice(-4, None), slice(10, 4), slice(2, 100), slice(None)):
        a, b = ours[index], theirs[index]
        assert a.nbytes() == b.nbytes() and a.tolist() == b.tolist()
        if b.nbytes():
            assert a.data_ptr() - ours.data_ptr() == b.data_ptr() - theirs.data_ptr()
    with pytest.raises(RuntimeError, match="only a step of 1"):
        ours[::2]
    view = tl.asarray(ours[4:8], dtype=tl.uint8)
    view[0] = 42
    assert ours[4] == 42


@needs_torch
@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "float32", "float64", None])
def test_asarray_reads_a_storage_as_dtype(sixteen_bytes, dtype):
    ours = tl.asarray(tl.UntypedStorage.from_file(str(sixteen_bytes), nbytes=10)[1:],
                      **({"dtype": getattr(tl, dtype)} if dtype else {}))
    theirs = torch.asarray(torch.UntypedStorage.from_file(str(sixteen_bytes), nbytes=10)[1:],
                           **({"dtype": getattr(torch, dtype)} if dtype else {}))
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_asarray_copy_of_a_storage(sixteen_bytes):
    storage = tl.UntypedStorage.from_file(str(sixteen_bytes), nbytes=16)
    copied = tl.asarray(storage, dtype=tl.uint8, copy=True)
    copied[0] = 5
    assert storage[0] == 0 and tl.asarray(storage, dtype=tl.uint8).data_ptr() == \
        storage.data_ptr()


def test_safetensors_round_trip_through_the_runner(tmp_path):
    pytest.importorskip("safetensors")
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent("""
        import torch
        from safetensors import safe_open
        from safetensors.torch import load_file, save_file
        tensors = {"w": torch.arange(12.).reshape(3, 4), "i": torch.tensor([1, 2, 3]),
                   "h": torch.ones(2, dtype=torch.bfloat16)}
        save_file(tensors, "weights.safetensors")
        loaded = load_file("weights.safetensors")
        assert all(torch.equal(loaded[k], v) and loaded[k].dtype == v.dtype
                   for k, v in tensors.items())
        with safe_open("weights.safetensors", framework="pt") as f:
            print(f.get_slice("w")[1:, :2].tolist())
    """))
    proc = subprocess.run([sys.executable, "-m", "tensorlib.torch_compat", str(program)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "[[4.0, 5.0], [8.0, 9.0]]"
