"""skinny_gemm.h (GEMMs with m, n or k equal to 1 as vector loops, inside gemm.pyx's gemm)
against numpy float64: every operand layout BLAS is given (each transposed or not, row
strides past the width), alpha and beta, beta == 0 ignoring NaN in the output, and the
tensorlib ops that reach it (an LSTM's input-size-1 and Linear(h, 1) products, forward and
backward)."""
import itertools

import numpy as np
import pytest

import tensorlib as tl
from tensorlib_cpu.gemm import gemm

SHAPES = [(97, 1, 204), (5, 1, 1), (97, 51, 1), (204, 97, 1), (1, 97, 51), (1, 1, 7),
          (1, 300, 1), (3, 1, 0)]


def _layout(x, transposed, pad):
    """x (rows, cols) stored row-major or column-major, with `pad` unused elements after
    each stored line (a row stride past the width)."""
    stored = x.T if transposed else x
    wide = np.zeros((stored.shape[0], stored.shape[1] + pad), dtype=x.dtype)
    wide[:, :stored.shape[1]] = stored
    view = wide[:, :stored.shape[1]]
    return view.T if transposed else view


@pytest.mark.parametrize("dtype,tol", [(np.float32, 2e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_matches_numpy_in_every_layout(dtype, tol, m, k, n):
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c0 = rng.standard_normal((m, n)).astype(dtype)
    for ta, tb, pad, (alpha, beta) in itertools.product((False, True), (False, True), (0, 3),
                                                      ((1.0, 0.0), (0.5, 1.0), (2.0, -1.5))):
        c = c0.copy()
        assert gemm(_layout(a, ta, pad), _layout(b, tb, pad), c, alpha, beta)
        want = alpha * (a.astype(np.float64) @ b) + beta * c0
        np.testing.assert_allclose(c, want, rtol=tol, atol=tol,
                                   err_msg=f"ta={ta} tb={tb} pad={pad} beta={beta}")


@pytest.mark.parametrize("m,k,n", [(9, 1, 11), (9, 13, 1), (1, 13, 9)])
def test_beta_zero_ignores_nan_in_the_output(m, k, n):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    c = np.full((m, n), np.nan)
    assert gemm(a, b, c, 1.0, 0.0)
    np.testing.assert_allclose(c, a @ b, rtol=1e-13)


def test_strided_output_rows():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((6, 1)), rng.standard_normal((1, 5))
    wide = np.zeros((6, 9))
    assert gemm(a, b, wide[:, 2:7])
    np.testing.assert_allclose(wide[:, 2:7], a @ b, rtol=1e-15)
    assert not wide[:, :2].any() and not wide[:, 7:].any()


def test_lstm_shaped_products_and_their_gradients_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x, h = rng.standard_normal((97, 1)), rng.standard_normal((97, 51))
    w_ih, w_head = rng.standard_normal((204, 1)), rng.standard_normal((1, 51))
    b_ih, b_head = rng.standard_normal(204), rng.standard_normal(1)
    t_args = [torch.tensor(v, requires_grad=True) for v in (x, h, w_ih, w_head, b_ih, b_head)]
    args = [tl.tensor(v, requires_grad=True) for v in (x, h, w_ih, w_head, b_ih, b_head)]

    def loss(lib, x, h, w_ih, w_head, b_ih, b_head):
        gates = lib.nn.functional.linear(x, w_ih, b_ih)               # k = 1
        out = lib.nn.functional.linear(h, w_head, b_head)             # n = 1
        return (gates * gates).sum() + (out * out).sum()

    loss(torch, *t_args).backward()
    loss(tl, *args).backward()
    for got, want in zip(args, t_args):
        np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy(), rtol=1e-12,
                                   atol=1e-12)
