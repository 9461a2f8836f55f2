"""The CPU's fused layer_norm kernel against torch, on the layouts it takes and those it
hands to numpy."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
@pytest.mark.parametrize("shape,normalized", [((64, 33), (33,)), ((4, 5, 6), (5, 6)),
                                               ((1, 7), (7,))])
def test_layer_norm_kernel_matches_torch(dtype, affine, shape, normalized):
    r = np.random.default_rng(0)
    x = r.standard_normal(shape).astype(dtype) * 3 + 1
    w = r.standard_normal(normalized).astype(dtype) if affine in ("both", "weight") else None
    b = r.standard_normal(normalized).astype(dtype) if affine in ("both", "bias") else None

    def conv(lib, a):
        return None if a is None else lib.tensor(a)
    got = F.layer_norm(tl.tensor(x), normalized, conv(tl, w), conv(tl, b), eps=1e-5)
    want = torch.nn.functional.layer_norm(torch.tensor(x), normalized, conv(torch, w),
                                          conv(torch, b), eps=1e-5)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol * 10, atol=tol * 10)


def test_layer_norm_kernel_on_a_strided_input_uses_the_numpy_path():
    x = np.random.default_rng(1).standard_normal((8, 12)).astype(np.float32)
    got = F.layer_norm(tl.tensor(x).t(), (8,))
    want = torch.nn.functional.layer_norm(torch.tensor(x).t(), (8,))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [31, 1024, 3000])
def test_layer_norm_kernel_rows_over_lanes_and_blocks(dtype, n):
    """Rows shorter than the partial sums, exactly one block, and several blocks with a
    tail; a large mean (the variance is taken around it, not from sums of squares)."""
    x = np.random.default_rng(2).standard_normal((9, n)).astype(dtype) + 1000
    got = F.layer_norm(tl.tensor(x), (n,)).numpy()
    want = torch.nn.functional.layer_norm(torch.tensor(x), (n,)).numpy()
    tol = 5e-3 if dtype == "float32" else 1e-9     # float32 rounds x - mean at |x| ~ 1000
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype,shape", [("float32", (2048, 1025)), ("float64", (1024, 1030))])
def test_layer_norm_kernel_streamed_output_equals_the_cached_one(dtype, shape):
    """An output over 8 MB is written with streaming stores (rows of odd lengths start off
    the vector boundary): every row equals, bit for bit, the same row normalized alone."""
    r = np.random.default_rng(3)
    x = r.standard_normal(shape).astype(dtype)
    w, b = (r.standard_normal(shape[1:]).astype(dtype) for _ in range(2))
    big = F.layer_norm(tl.tensor(x), shape[1:], tl.tensor(w), tl.tensor(b)).numpy()
    for rows in (slice(0, 3), slice(shape[0] - 2, shape[0])):
        small = F.layer_norm(tl.tensor(x[rows]), shape[1:], tl.tensor(w), tl.tensor(b))
        np.testing.assert_array_equal(big[rows], small.numpy())
    want = torch.nn.functional.layer_norm(torch.tensor(x), shape[1:], torch.tensor(w),
                                          torch.tensor(b)).numpy()
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(big, want, rtol=tol * 10, atol=tol * 10)
