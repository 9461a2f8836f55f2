"""A CUDA C kernel string as a custom op's cuda kernel: built by the CUDA backend's compiler
(nvcc to PTX and cubin here, no GPU needed), its signature read as the backend reads its own;
running it needs a GPU (test_custom_ops.py's per-device tests run it on cuda there)."""
import pytest

import tensorlib
from tensorlib.library import CUDAKernel
from tensorlib_cuda import compiler
from tests.library.test_custom_ops import CUDA_SOURCE, softsign_scale

NVCC = compiler.find_nvcc()
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not found (PATH, /usr/local/cuda/bin)")
CUDA = tensorlib.backends.why_unavailable("cuda")


def test_signature_and_dtype_prefix():
    kernel = CUDAKernel(CUDA_SOURCE)
    assert kernel.name == "softsign_scale"
    assert CUDAKernel.kernel_signatures(CUDA_SOURCE) == {"softsign_scale": "PPfq"}
    assert kernel.source_for(tensorlib.float64).startswith("#define T double\n")
    assert kernel.source_for(tensorlib.int64).startswith("#define T long long\n")
    with pytest.raises(TypeError, match="no CUDA C type for .*float16"):
        kernel.source_for(tensorlib.float16)
    with pytest.raises(ValueError, match="defines no extern \"C\" __global__ function"):
        CUDAKernel("__global__ void f(float *x) {}")
    with pytest.raises(ValueError, match="no extern \"C\" __global__ named g"):
        CUDAKernel(CUDA_SOURCE, name="g")


@needs_nvcc
@pytest.mark.parametrize("dtype", [tensorlib.float32, tensorlib.float64])
def test_user_kernel_compiles_to_ptx_and_cubin(dtype):
    kernel = CUDAKernel(CUDA_SOURCE)
    ptx = kernel.compile(dtype, "sm_80", target="ptx").decode()
    assert ".entry softsign_scale(" in ptx
    assert (".f64" in ptx) == (dtype is tensorlib.float64)
    assert kernel.compile(dtype, "sm_90")[:4] == b"\x7fELF"


@needs_nvcc
def test_a_broken_user_kernel_raises_compile_error_with_the_source():
    broken = CUDAKernel(CUDA_SOURCE.replace("fabs(x[i])", "fabs(y[i])"))
    with pytest.raises(compiler.CompileError, match=r"(?s)identifier \"y\".*\| .*fabs\(y"):
        broken.compile(tensorlib.float32, "sm_80")


@pytest.mark.skipif(CUDA is not None, reason=f"needs a GPU (cuda unavailable: {CUDA})")
def test_runs_on_the_gpu_with_gradcheck_and_is_cached():
    x = tensorlib.randn(8, dtype=tensorlib.float64, device="cuda", requires_grad=True)
    assert tensorlib.autograd.gradcheck(lambda t: softsign_scale(t, 1.5), (x,))
    y = tensorlib.randn(1000, device="cuda")
    expected = 0.5 * y.cpu() / (1 + y.cpu().abs())
    assert tensorlib.allclose(softsign_scale(y, 0.5).cpu(), expected, rtol=1e-6)
    state = tensorlib.backends.get("cuda").state(y.device.index)
    hits = state.compiler.memory_hits
    softsign_scale(y, 0.5)
    assert state.compiler.memory_hits == hits + 1
