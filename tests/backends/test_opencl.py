"""The OpenCL backend: the conformance suite on opencl:0 (PoCL in CI), plus what only this
backend has -- the memory pool, the kernel caches, build errors, out-of-memory, device mixing,
float64 availability and the Philox stream against the CPU reference."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.opencl  # noqa: F401  (until tensorlib/__init__.py imports it)
from tensorlib.testing.conformance import ConformanceSuite

REASON = tl.backends.why_unavailable("opencl")
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"opencl unavailable: {REASON}")


class TestOpenCLConformance(ConformanceSuite):
    device = "opencl"


def _state():
    from tensorlib._C.device import canonical
    return canonical("opencl")._backend.state(0)


def test_pool_reuses_freed_blocks():
    st = _state()
    tl.opencl.synchronize()
    x = tl.empty(1 << 18, device="opencl")
    stats = st.allocator.stats()
    assert stats["allocated_bytes"] >= 1 << 20
    reserved = stats["reserved_bytes"]
    del x
    assert st.allocator.stats()["held_blocks"] >= 1
    y = tl.empty(1 << 18, device="opencl")            # same bin: served from the cache
    assert st.allocator.stats()["reserved_bytes"] == reserved
    assert tl.opencl.memory_allocated() >= 1 << 20
    assert tl.opencl.memory_reserved() >= tl.opencl.memory_allocated()
    del y
    tl.opencl.empty_cache()
    assert st.allocator.stats()["held_blocks"] == 0


def test_kernels_are_cached_in_memory_and_on_disk(tmp_path, monkeypatch):
    from tensorlib.codegen.cache import DiskCache
    from tensorlib_opencl.compiler import Compiler
    st = _state()
    monkeypatch.setenv("TENSORLIB_KERNEL_CACHE_DIR", str(tmp_path))
    source = "__kernel void tl_cache_probe(__global float* x) { x[get_global_id(0)] *= 3.0f; }"
    first = Compiler(st.dev, "opencl:0")
    assert first.disk.directory == str(tmp_path)
    k1 = first.kernels(source, ["tl_cache_probe"])
    assert first.builds == 1 and first.disk.writes == 1
    assert first.kernels(source, ["tl_cache_probe"]) is k1 and first.memory_hits == 1
    second = Compiler(st.dev, "opencl:0")                 # a new process, in effect
    k2 = second.kernels(source, ["tl_cache_probe"])
    assert second.builds == 0 and second.disk.hits == 1
    buf = tl.ones(4, device="opencl")
    k2["tl_cache_probe"](st.dev.queue, (4,), None, buf.untyped_storage().handle)
    assert buf.tolist() == [3.0] * 4
    # a damaged entry is dropped and rebuilt, never trusted
    for path in tmp_path.rglob("*.bin"):
        path.write_bytes(path.read_bytes()[:-3] + b"xyz")
    third = Compiler(st.dev, "opencl:0")
    third.kernels(source, ["tl_cache_probe"])
    assert third.builds == 1
    monkeypatch.setenv("TENSORLIB_DISABLE_KERNEL_CACHE", "1")
    assert not DiskCache().enabled


def test_build_failure_shows_the_log_and_numbered_source():
    from tensorlib_opencl.compiler import CompileError
    st = _state()
    with pytest.raises(CompileError) as info:
        st.compiler.kernels("__kernel void broken(__global float* x) { x[0] = y; }", ["broken"])
    text = str(info.value)
    assert "build log" in text and "undeclared" in text and "   1 | __kernel void broken" in text


def test_out_of_memory_is_clear_and_recoverable():
    from tensorlib_opencl.allocator import OutOfMemoryError
    st = _state()
    with pytest.raises(OutOfMemoryError, match="out of memory on opencl:0.*tried to allocate"):
        tl.empty(st.dev.max_alloc // 4 + 1024, device="opencl")
    alloc = st.allocator
    old = alloc.limit
    try:
        alloc.limit = alloc.pool.active_bytes + (8 << 20)
        a = tl.empty(1 << 20, device="opencl")              # 4 MiB, then back to the cache
        del a
        b = tl.empty((1 << 20) + 4096, device="opencl")     # needs the cache emptied first
        with pytest.raises(OutOfMemoryError, match="limit"):
            tl.empty(4 << 20, device="opencl")
        del b
    finally:
        alloc.limit = old
    assert (tl.ones(3, device="opencl") * 2).tolist() == [2.0, 2.0, 2.0]   # still usable


def test_mixing_devices_names_both():
    a, b = tl.ones(3, device="opencl"), tl.ones(3)
    with pytest.raises(RuntimeError, match="opencl:0.*cpu|cpu.*opencl:0"):
        a + b
    from tensorlib._C.device import canonical
    kernel = canonical("opencl")._kernels["add"]
    with pytest.raises(RuntimeError, match="opencl:0.*cpu"):
        kernel(tl.empty(3, device="opencl"), a, b)


def test_float64_follows_the_device():
    st = _state()
    if st.dev.fp64:
        x = tl.tensor([1.0, 2.0], dtype=tl.float64, device="opencl")
        assert (x * 3).tolist() == [3.0, 6.0]
    else:
        with pytest.raises(TypeError, match="cl_khr_fp64"):
            tl.ones(2, dtype=tl.float64, device="opencl") * 3


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_philox_matches_cpu(dtype):
    d = getattr(tl, dtype)
    tl.manual_seed(1234)
    cpu_u, cpu_n = tl.rand(1000, dtype=d), tl.randn(1000, dtype=d)
    tl.manual_seed(1234)
    cl_u, cl_n = tl.rand(1000, dtype=d, device="opencl"), tl.randn(1000, dtype=d, device="opencl")
    np.testing.assert_array_equal(cl_u.cpu().numpy(), cpu_u.numpy())
    tol = 1e-5 if dtype in ("float32", "float64") else 1e-2
    np.testing.assert_allclose(cl_n.cpu().numpy().astype(np.float64),
                               cpu_n.numpy().astype(np.float64), rtol=tol, atol=tol)


def test_large_shapes_use_every_path():
    """Two-pass reductions, the tiled GEMM on several tiles, long sorts."""
    r = np.random.default_rng(0)
    x = r.standard_normal((3, 70000)).astype(np.float32)
    t = tl.tensor(x, device="opencl")
    np.testing.assert_allclose(t.sum().item(), x.sum(dtype=np.float64), rtol=1e-4)
    np.testing.assert_allclose(t.sum(1).cpu().numpy(), x.sum(1, dtype=np.float64), rtol=1e-4)
    np.testing.assert_array_equal(t.amax(1).cpu().numpy(), x.max(1))
    a, b = r.standard_normal((2, 130, 70)), r.standard_normal((2, 70, 150))
    got = (tl.tensor(a, dtype=tl.float32, device="opencl")
           @ tl.tensor(b, dtype=tl.float32, device="opencl")).cpu().numpy()
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)
    v = r.integers(0, 50, 3000)
    values, indices = tl.tensor(v, device="opencl").sort(stable=True)
    np.testing.assert_array_equal(indices.cpu().numpy(), np.argsort(v, kind="stable"))
    np.testing.assert_array_equal(values.cpu().numpy(), np.sort(v))


def test_module_api():
    assert tl.opencl.is_available() and tl.opencl.device_count() >= 1
    assert isinstance(tl.opencl.get_device_name(0), str)
    tl.opencl.manual_seed(5)
    a = tl.rand(3, device="opencl")
    tl.opencl.manual_seed(5)
    assert tl.rand(3, device="opencl").tolist() == a.tolist()
    tl.opencl.synchronize()
