"""matmul, bmm and linear on every BLAS the CPU backend can bind (MKL, numpy's OpenBLAS
alone and with MKL for the float32 products with B transposed, scipy's), forced in-process
with `gemm.use_blas`: the conformance suite's matmul cases, forward and backward against
PyTorch, gradcheck in float64, and bf16/fp16 products (MKL's low-precision GEMMs where
present) against float32 products of the rounded inputs."""
from types import SimpleNamespace

import numpy as np
import pytest

import tensorlib
from tensorlib._C.device import canonical
from tensorlib.testing._cases import CASES
from tensorlib.testing.conformance import ConformanceSuite
from tensorlib_cpu import blas_choice, gemm, onednn

torch = pytest.importorskip("torch")


@pytest.fixture(params=["mkl", "onednn", "openblas", "openblas+mkl", "scipy"], autouse=True)
def blas(request):
    if "mkl" in request.param and blas_choice.find_mkl() is None:
        pytest.skip("the mkl wheel is not installed")
    if request.param == "onednn" and onednn.library() is None:
        pytest.skip("oneDNN (onednn-cpu-gomp) is not installed")
    before = gemm.LIBRARY
    gemm.use_blas(request.param)
    yield request.param
    gemm.use_blas(before)


def test_conformance_matmul_cases():
    """The backend conformance suite's cases of the matmul primitive (every layout)."""
    suite = SimpleNamespace(device="cpu", rtol=ConformanceSuite.rtol, atol=ConformanceSuite.atol)
    kernel = canonical("cpu")._kernels["matmul"]
    for label, run in CASES["matmul"](suite, kernel, "matmul"):
        run()


# (a shape, b shape): matrices, thin and large enough to be split over the threads, batches
# of small and of large products, broadcast batches, vectors
SHAPES = [((7, 5), (5, 3)), ((128, 96), (96, 80)), ((3, 1), (1, 4)),
          ((6, 9, 8), (6, 8, 7)), ((2, 70, 64), (2, 64, 50)), ((4, 3, 8, 5), (5, 6)),
          ((3, 40, 33), (33,)), ((9,), (9, 4))]


def _pair(shape_a, shape_b, dtype, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape_a).astype(dtype), rng.standard_normal(shape_b).astype(dtype)


@pytest.mark.parametrize("shape_a,shape_b", SHAPES)
def test_matmul_forward_and_backward_match_torch(shape_a, shape_b):
    a, b = _pair(shape_a, shape_b, np.float32, len(shape_a) * 10 + shape_a[-1])
    ta, tb = (tensorlib.tensor(x, requires_grad=True) for x in (a, b))
    ra, rb = (torch.tensor(x, requires_grad=True) for x in (a, b))
    out, ref = ta @ tb, ra @ rb
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-4,
                               atol=1e-4)
    g = np.random.default_rng(1).standard_normal(ref.shape).astype(np.float32)
    out.backward(tensorlib.tensor(g))
    ref.backward(torch.tensor(g))
    np.testing.assert_allclose(ta.grad.numpy(), ra.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(tb.grad.numpy(), rb.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_bmm_and_linear_match_torch():
    a, b = _pair((5, 33, 17), (5, 17, 40), np.float32, 3)
    np.testing.assert_allclose(tensorlib.bmm(tensorlib.tensor(a), tensorlib.tensor(b)).numpy(),
                               torch.bmm(torch.tensor(a), torch.tensor(b)).numpy(),
                               rtol=1e-4, atol=1e-4)
    # the second: x @ w.T over "openblas+mkl"'s MKL threshold, also per thread
    for rows, outs, ins in ((64, 30, 48), (256, 128, 128)):
        x, w = _pair((rows, ins), (outs, ins), np.float32, 4)
        bias = np.arange(outs, dtype=np.float32)
        got = tensorlib.nn.functional.linear(tensorlib.tensor(x), tensorlib.tensor(w),
                                             tensorlib.tensor(bias))
        ref = torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), torch.tensor(bias))
        np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-4, atol=1e-4)


def test_gradcheck_float64():
    a, b = _pair((3, 6, 5), (3, 5, 4), np.float64, 5)
    x, w = _pair((4, 5), (3, 5), np.float64, 6)
    ta, tb, tx, tw = (tensorlib.tensor(v, requires_grad=True) for v in (a, b, x, w))
    assert tensorlib.autograd.gradcheck(tensorlib.matmul, (ta, tb))
    assert tensorlib.autograd.gradcheck(tensorlib.nn.functional.linear, (tx, tw))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_attention_matches_torch(dtype):
    """The fused SDPA kernels call the same library's GEMMs (their own binding of it)."""
    q, k = _pair((2, 3, 20, 16), (2, 3, 24, 16), dtype, 8)
    v = np.random.default_rng(9).standard_normal((2, 3, 24, 8)).astype(dtype)
    ours = [tensorlib.tensor(x, requires_grad=True) for x in (q, k, v)]
    refs = [torch.tensor(x, requires_grad=True) for x in (q, k, v)]
    out = tensorlib.nn.functional.scaled_dot_product_attention(*ours, is_causal=True)
    ref = torch.nn.functional.scaled_dot_product_attention(*refs, is_causal=True)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=tol, atol=tol)
    g = np.random.default_rng(10).standard_normal(ref.shape).astype(dtype)
    out.backward(tensorlib.tensor(g))
    ref.backward(torch.tensor(g))
    for mine, theirs in zip(ours, refs):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("threads", [1, 2])
def test_fused_attention_follows_the_library_and_threads(threads):
    """A problem large enough for the kernels' parallel regions, on one and two threads: the
    float32 GEMMs run on the library gemm.pyx runs them on (oneDNN's dnnl_sgemm, each call
    on its own thread), and switching the library rebinds them."""
    from tensorlib_cpu import attention_kernels
    q, k = _pair((2, 2, 160, 16), (2, 2, 130, 16), np.float32, 11)
    v = np.random.default_rng(12).standard_normal((2, 2, 130, 24)).astype(np.float32)
    before = tensorlib.get_num_threads()
    tensorlib.set_num_threads(threads)
    try:
        ours = [tensorlib.tensor(x, requires_grad=True) for x in (q, k, v)]
        refs = [torch.tensor(x, requires_grad=True) for x in (q, k, v)]
        out = tensorlib.nn.functional.scaled_dot_product_attention(*ours)
        ref = torch.nn.functional.scaled_dot_product_attention(*refs)
        out.sum().backward()
        ref.sum().backward()
    finally:
        tensorlib.set_num_threads(before)
    assert attention_kernels._bound == (gemm.LIBRARY, gemm.BLAS)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-4,
                               atol=1e-5)
    for mine, theirs in zip(ours, refs):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-4,
                                   atol=1e-4)


@pytest.mark.parametrize("route", ["mkl_low_precision", "float32_copies"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_low_precision_matmul(dtype, route, monkeypatch):
    """Accumulated in float32, rounded once: the float32 product of the rounded inputs,
    rounded to the dtype (up to one rounding step), on MKL's bf16/fp16 GEMM and on float32
    copies."""
    if route == "mkl_low_precision" and gemm.LOW_PRECISION is None:
        pytest.skip("MKL's low-precision GEMMs are not available")
    monkeypatch.setattr(gemm, "LOW_PRECISION_DTYPES",
                        frozenset({dtype}) if route == "mkl_low_precision" else frozenset())
    a, b = _pair((2, 48, 40), (2, 40, 36), np.float32, 7)
    ta = tensorlib.tensor(a).to(getattr(tensorlib, dtype))
    tb = tensorlib.tensor(b).to(getattr(tensorlib, dtype))
    got = (ta @ tb).float().numpy()
    ref = (ta.float() @ tb.float()).numpy()
    tol = 2 ** -7 if dtype == "bfloat16" else 2 ** -10
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * np.abs(ref).max())
