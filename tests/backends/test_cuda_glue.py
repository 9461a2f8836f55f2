"""The CUDA backend's Python glue, end to end without a GPU: a subprocess runs tensor ops on
`cuda` over a fake pycuda (host memory, launches recorded after packing their arguments as
pycuda does) and a fake nvcc, so a wrong attribute, argument count or type in the device,
allocator, compiler, copy or launch code fails here. Numbers are not computed: kernels do
not run (the GPU check does that)."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "fake_cuda")


def test_backend_glue_over_a_fake_driver(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = FAKE + os.pathsep + env.get("PYTHONPATH", "")
    env["TENSORLIB_NVCC"] = os.path.join(FAKE, "fake_nvcc")
    env["TENSORLIB_CUDA_COMPILER"] = "nvcc"
    env["TENSORLIB_KERNEL_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run([sys.executable, os.path.join(FAKE, "drive.py")], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "launches" in done.stdout


# ---- cuBLAS argument mapping, against a numpy model of cublasGemmStridedBatchedEx ----------

import ctypes  # noqa: E402
from types import SimpleNamespace  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from tensorlib_cuda import cublas  # noqa: E402


def _value(x):
    return getattr(x, "value", x)


class _ModelBLAS:
    """cublasGemmStridedBatchedEx's column-major semantics over float64 host memory."""

    def cublasCreate_v2(self, handle):
        return 0

    def cublasSetStream_v2(self, handle, stream):
        return 0

    def cublasGemmStridedBatchedEx(self, h, opa, opb, m, n, k, alpha, A, at, lda, sa, B, bt,
                                   ldb, sb, beta, C, ct, ldc, sc, batch, compute, algo):
        self.compute = compute

        def mat(ptr, op, rows, cols, ld, stride, p):
            shape, strides = ((rows, cols), (1, ld)) if op == 0 else ((rows, cols), (ld, 1))
            base = _value(ptr) + _value(stride) * p * 8
            span = (rows - 1) * strides[0] + (cols - 1) * strides[1] + 1
            flat = np.ctypeslib.as_array((ctypes.c_double * span).from_address(base))
            return np.lib.stride_tricks.as_strided(flat, shape, [s * 8 for s in strides])

        for p in range(batch):
            a, b = mat(A, opa, m, k, lda, sa, p), mat(B, opb, k, n, ldb, sb, p)
            c = mat(C, 0, m, n, ldc, sc, p)
            c[...] = a @ b
        return 0


def _fake(arr, view):
    """A tensor-shaped stand-in: `view` of the float64 array `arr` (strides in elements)."""
    return SimpleNamespace(_sizes=view.shape, _strides=tuple(s // 8 for s in view.strides),
                           _offset=(view.__array_interface__["data"][0] - arr.ctypes.data) // 8,
                           _storage=SimpleNamespace(handle=arr.ctypes.data),
                           _dtype=SimpleNamespace(name="float64", itemsize=8))


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_cublas_row_major_mapping(ta, tb):
    rng = np.random.default_rng(0)
    B, M, N, K = 2, 5, 7, 3
    a_mem = rng.standard_normal((B, K, M) if ta else (B, M, K))
    b_mem = rng.standard_normal((B, N, K) if tb else (B, K, N))
    a = a_mem.transpose(0, 2, 1) if ta else a_mem
    b = b_mem.transpose(0, 2, 1) if tb else b_mem
    out_mem = np.zeros((B, M, N))
    blas = cublas.CuBLAS.__new__(cublas.CuBLAS)
    blas.lib, blas.handles = _ModelBLAS(), {0: ctypes.c_void_p()}
    dev = SimpleNamespace(index=0, stream=SimpleNamespace(handle=0))
    assert blas.gemm(dev, _fake(out_mem, out_mem), _fake(a_mem, a), _fake(b_mem, b))
    np.testing.assert_allclose(out_mem, a @ b, rtol=1e-12)
    assert blas.lib.compute == cublas._COMPUTE_64F


def test_cublas_declines_layouts_it_cannot_take():
    x = np.zeros((1, 4, 6))
    blas = cublas.CuBLAS.__new__(cublas.CuBLAS)
    blas.lib, blas.handles = _ModelBLAS(), {}
    dev = SimpleNamespace(index=0, stream=SimpleNamespace(handle=0))
    sliced = x[:, :, ::2]                                   # neither rows nor columns contiguous
    out = np.zeros((1, 4, 4))
    assert not blas.gemm(dev, _fake(out, out), _fake(x, sliced), _fake(x, x[:, :3, :4]))
