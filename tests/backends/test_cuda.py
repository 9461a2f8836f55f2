"""The CUDA backend on a GPU: the conformance suite on cuda:0, plus what only this backend
has -- the caching allocator on the device, out-of-memory recovery, cuBLAS against the
generated GEMM, the kernel caches and the registered composites. Skips, with the reason,
where no GPU is usable (compile-only checks are in test_cuda_compile.py)."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing.conformance import ConformanceSuite

REASON = tl.backends.why_unavailable("cuda")
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"cuda unavailable: {REASON}")


class TestCUDAConformance(ConformanceSuite):
    device = "cuda"


def _state():
    from tensorlib._C.device import canonical
    return canonical("cuda")._backend.state(0)


def test_every_primitive_and_the_composites_are_registered():
    have, missing = tl.backends.op_coverage("cuda")
    assert not missing
    from tensorlib._C.device import canonical
    table = canonical("cuda")._kernels
    for op in ("softmax", "log_softmax_backward", "max_pool", "max_pool_backward", "sgd_update"):
        assert op in table


def test_freed_blocks_are_reused():
    st = _state()
    x = tl.empty(1 << 18, device="cuda")
    reserved = st.allocator.stats()["reserved_bytes"]
    ptr = x._storage.handle
    del x
    y = tl.empty(1 << 18, device="cuda")
    assert y._storage.handle == ptr and st.allocator.stats()["reserved_bytes"] == reserved


def test_out_of_memory_is_a_runtime_error_and_the_device_stays_usable():
    free, total = tl.cuda.mem_get_info()
    with pytest.raises(tl.cuda.OutOfMemoryError, match="tried to allocate"):
        tl.empty(total, dtype=tl.uint8, device="cuda")
    assert tl.ones(4, device="cuda").sum().item() == 4


@pytest.mark.parametrize("dtype,tol", [(tl.float32, 1e-4), (tl.float16, 2e-2), (tl.bfloat16, 5e-2),
                                       (tl.float64, 1e-10)])
def test_cublas_gemm_against_numpy_with_transposed_operands(dtype, tol):
    from tensorlib_cuda.kernels import cublas_status
    assert cublas_status()[0] is not None, cublas_status()[1]
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 70, 50)), rng.standard_normal((3, 90, 50))
    ta = tl.tensor(a, device="cuda").to(dtype)
    tb = tl.tensor(b, device="cuda").to(dtype).transpose(1, 2)     # column-contiguous
    got = (ta @ tb).double().cpu().numpy()
    ref = ta.double().cpu().numpy() @ tb.double().cpu().numpy()
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * 10)


def test_generated_gemm_for_integers():
    a = tl.arange(12, device="cuda").reshape(3, 4)
    assert (a @ a.t()).cpu().tolist() == (np.arange(12).reshape(3, 4) @ np.arange(12).reshape(3, 4).T).tolist()


def test_kernels_are_built_once_per_device():
    st = _state()
    x = tl.ones(100, device="cuda")
    (x + x).cpu()
    builds = st.compiler.builds
    (x + x).cpu()
    assert st.compiler.builds == builds


def test_fused_softmax_and_sgd_through_the_public_api():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).standard_normal((64, 1000)).astype(np.float32)
    got = tl.tensor(a, device="cuda").softmax(1).cpu().numpy()
    np.testing.assert_allclose(got, torch.tensor(a).softmax(1).numpy(), rtol=1e-5, atol=1e-6)
    p = tl.nn.Parameter(tl.ones(10, device="cuda"))
    opt = tl.optim.SGD([p], lr=0.5, momentum=0.9)
    p.sum().backward()
    opt.step()
    assert np.allclose(p.detach().cpu().numpy(), 0.5)
