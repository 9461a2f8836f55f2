"""onednn_linear: a float32 Linear's forward (x @ w + bias) on oneDNN's matmul primitive,
the bias added in its epilogue; what it declines goes on to gemm_bias."""
import numpy as np
import pytest

import tensorlib
from tensorlib_cpu import gemm, onednn, onednn_linear

pytestmark = pytest.mark.skipif(onednn.library() is None or not onednn_linear.takes_rows(1),
                                reason="float32 Linear layers do not run on oneDNN here")


def _case(m, k, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((m, k)).astype(np.float32)
    weight = rng.standard_normal((n, k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    return x, weight, bias


def _expected(x, w, bias):
    return (x.astype(np.float64) @ w.astype(np.float64) + bias).astype(np.float32)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("weight_layout", ["transposed", "contiguous"])
def test_matches_float64_reference(threads, weight_layout):
    x, weight, bias = _case(130, 96, 120, 1)
    w = weight.T if weight_layout == "transposed" else np.ascontiguousarray(weight.T)
    out = np.full((130, 120), np.nan, np.float32)
    before = tensorlib.get_num_threads()
    tensorlib.set_num_threads(threads)
    try:
        assert onednn_linear.linear(x, w, bias, out)
    finally:
        tensorlib.set_num_threads(before)
    np.testing.assert_allclose(out, _expected(x, w, bias), rtol=1e-4, atol=1e-4)


def test_strided_rows_and_a_strided_bias_view():
    """x a column slice of a wider array (row stride > its width); a bias read with a
    stride other than one is left to gemm_bias."""
    x, weight, bias = _case(128, 200, 96, 2)
    wide = np.zeros((128, 256), np.float32)
    wide[:, 10:210] = x
    out = np.empty((128, 96), np.float32)
    assert onednn_linear.linear(wide[:, 10:210], weight.T, bias, out)
    np.testing.assert_allclose(out, _expected(x, weight.T, bias), rtol=1e-4, atol=1e-4)
    spaced = np.repeat(bias, 2)[::2]
    assert not onednn_linear.linear(x, weight.T, spaced, out)


def test_declines_small_float64_and_other_libraries():
    x, weight, bias = _case(8, 8, 8, 3)
    assert not onednn_linear.linear(x, weight.T, bias, np.empty((8, 8), np.float32))
    x, weight, bias = _case(128, 128, 128, 4)
    out64 = np.empty((128, 128))
    assert not onednn_linear.linear(x.astype(np.float64), weight.T.astype(np.float64),
                                    bias.astype(np.float64), out64)
    before = gemm.LIBRARY
    gemm.use_blas("scipy")
    try:
        assert not onednn_linear.linear(x, weight.T, bias, np.empty((128, 128), np.float32))
    finally:
        gemm.use_blas(before)


def test_rows_taken_with_openblas_only_without_avx512(monkeypatch):
    """With float32 products on OpenBLAS the primitive takes Linear layers of up to
    AVX2_MAX_ROWS rows on CPUs without AVX-512 (AMD Zen 3), none elsewhere."""
    monkeypatch.setattr(gemm, "LIBRARY", "openblas")
    rows = onednn_linear.AVX2_MAX_ROWS
    monkeypatch.setattr(onednn_linear, "_AVX512", False)
    assert onednn_linear.takes_rows(rows) and not onednn_linear.takes_rows(rows + 1)
    monkeypatch.setattr(onednn_linear, "_AVX512", True)
    assert not onednn_linear.takes_rows(1)
    monkeypatch.setattr(gemm, "LIBRARY", "onednn")
    assert onednn_linear.takes_rows(rows + 1)


def test_one_plan_per_shape_and_thread_count():
    x, weight, bias = _case(144, 100, 112, 5)
    out = np.empty((144, 112), np.float32)
    onednn_linear.linear(x, weight.T, bias, out)
    count = len(onednn_linear._plans)
    for _ in range(3):
        onednn_linear.linear(x, weight.T, bias, out)
    assert len(onednn_linear._plans) == count


def test_functional_linear_matches_torch():
    torch = pytest.importorskip("torch")
    x, weight, bias = _case(256, 128, 192, 6)
    got = tensorlib.nn.functional.linear(tensorlib.tensor(x), tensorlib.tensor(weight),
                                         tensorlib.tensor(bias))
    ref = torch.nn.functional.linear(torch.tensor(x), torch.tensor(weight), torch.tensor(bias))
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-4, atol=1e-4)


def test_relu_in_the_epilogue():
    x, weight, bias = _case(128, 96, 112, 7)
    out = np.full((128, 112), np.nan, np.float32)
    assert onednn_linear.linear(x, weight.T, bias, out, relu=True)
    np.testing.assert_allclose(out, np.maximum(_expected(x, weight.T, bias), 0), rtol=1e-4,
                               atol=1e-4)
    assert (out >= 0).all()
