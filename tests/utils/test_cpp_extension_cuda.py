"""CUDA extensions: .cu sources built by nvcc into the same module as the C++ ones, their
kernels launched on the CUDA backend's device pointers. Building needs only nvcc; running
needs a GPU (benchmarks/gpu_check.sh runs it)."""
import shutil

import numpy as np
import pytest

pytest.importorskip("pybind11")

import tensorlib as torch
from tensorlib.utils import cpp_extension

# the pattern of PyTorch's CUDA extension guide: a __global__ kernel and its launcher in the
# .cu, a C++ wrapper checking its inputs and calling the launcher
CUDA = """
template <typename scalar_t>
__global__ void axpb_kernel(const scalar_t* x, scalar_t* y, scalar_t a, scalar_t b, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
torch::Tensor axpb_cuda(torch::Tensor x, double a, double b) {
  auto y = torch::empty_like(x);
  const int threads = 256;
  const int64_t n = x.numel();
  const int blocks = (int)((n + threads - 1) / threads);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "axpb_cuda", [&] {
    axpb_kernel<scalar_t><<<blocks, threads>>>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(),
                                               (scalar_t)a, (scalar_t)b, n);
  });
  cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "axpb launch failed: ", cudaGetErrorString(err));
  return y;
}
"""
CPP = """
torch::Tensor axpb_cuda(torch::Tensor x, double a, double b);
torch::Tensor axpb(torch::Tensor x, double a, double b) {
  TORCH_CHECK(x.is_cuda(), "axpb: x must be a CUDA tensor");
  TORCH_CHECK(x.is_contiguous(), "axpb: x must be contiguous");
  return axpb_cuda(x, a, b);
}
"""

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")


def _has_gpu():
    try:
        return torch.cuda.is_available()
    except Exception:   # no driver: the backend does not load
        return False


@pytest.fixture(scope="module")
def axpb(tmp_path_factory):
    return cpp_extension.load_inline("axpb_ext", CPP, cuda_sources=CUDA, functions=["axpb"],
                                     build_directory=str(tmp_path_factory.mktemp("cu_ext")))


@needs_nvcc
def test_cuda_sources_build_into_one_module(axpb):
    assert callable(axpb.axpb)
    # the C++ wrapper's checks run before any CUDA call
    with pytest.raises(RuntimeError, match="x must be a CUDA tensor"):
        axpb.axpb(torch.ones(3), 2.0, 1.0)


@needs_nvcc
def test_cuda_include_and_library_paths():
    assert any(p.endswith("include") and "cuda" in p.lower()
               for p in cpp_extension.include_paths(cuda=True))
    assert cpp_extension.library_paths(cuda=True)


@needs_nvcc
def test_nvcc_error_reports_the_source_line(tmp_path):
    broken = CUDA.replace("y[i] = a * x[i] + b;", "y[i] = a * x[i] + undefined_b;")
    with pytest.raises(RuntimeError, match="undefined_b") as info:
        cpp_extension.load_inline("axpb_broken", CPP, cuda_sources=broken,
                                  functions=["axpb"], build_directory=str(tmp_path))
    assert "Error building extension 'axpb_broken'" in str(info.value)


@needs_nvcc
@pytest.mark.skipif(not _has_gpu(), reason="no CUDA GPU")
def test_kernel_runs_on_cuda_tensors(axpb):
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    for dtype in (torch.float32, torch.float64):
        t = torch.tensor(x, dtype=dtype, device="cuda")
        y = axpb.axpb(t, 2.0, -1.0)
        assert y.is_cuda
        np.testing.assert_allclose(y.cpu().numpy(), 2.0 * x.astype(y.cpu().numpy().dtype) - 1.0,
                                   rtol=1e-6)
    # a view's data_ptr is its storage's device pointer plus its offset
    base = torch.tensor(x, device="cuda")
    np.testing.assert_allclose(axpb.axpb(base[10:20], 1.0, 0.5).cpu().numpy(), x[10:20] + 0.5,
                               rtol=1e-6)
