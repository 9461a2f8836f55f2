"""The CPU scan kernels (scan_kernels: cumsum, cumprod and cumsum's gradient) against torch
bit for bit: float32 accumulated in double as PyTorch's CPU kernel does, float64, int64
wrapping, along every dim of strided views, at sizes that take the threads and the
eight-row path and its remainder rows."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck
from tensorlib_cpu import scan_kernels

torch = pytest.importorskip("torch")

_SHAPES = [(9, 17), (19, 1000), (3, 5, 70), (70_000,), (2_000, 40)]


def _pair(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "int64":
        t = torch.tensor(rng.integers(-2 ** 62, 2 ** 62, shape))           # sums wrap
    else:
        t = torch.tensor(rng.standard_normal(shape)).to(getattr(torch, dtype))
    return tl.tensor(t.numpy()), t


def _views(x, t):
    yield x, t
    if t.dim() > 1:
        yield x.transpose(0, -1), t.transpose(0, -1)
        yield x[..., ::3], t[..., ::3]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("shape", _SHAPES)
def test_cumsum_cumprod_bit_for_bit(dtype, shape):
    x, t = _pair(shape, dtype)
    for xv, tv in _views(x, t):
        for dim in range(-tv.dim(), tv.dim()):
            assert np.array_equal(xv.cumsum(dim).numpy(), tv.cumsum(dim).numpy())
            # factors near 1, so the products neither vanish nor overflow
            scaled_x = xv if dtype == "int64" else 1 + xv / 64
            scaled_t = tv if dtype == "int64" else 1 + tv / 64
            assert np.array_equal(scaled_x.cumprod(dim).numpy(), scaled_t.cumprod(dim).numpy())


def test_integer_and_bool_inputs_accumulate_in_int64():
    t = torch.tensor([[True, False, True], [True, True, True]])
    assert np.array_equal(tl.tensor(t.numpy()).cumsum(1).numpy(), t.cumsum(1).numpy())
    i = torch.tensor([[2 ** 30, 2 ** 30, 2 ** 30]], dtype=torch.int32)
    got = tl.tensor(i.numpy()).cumsum(1)
    assert got.dtype == tl.int64 and np.array_equal(got.numpy(), i.cumsum(1).numpy())
    assert np.array_equal(tl.tensor(i.numpy()).cumsum(1, dtype=tl.float32).numpy(),
                          i.cumsum(1, dtype=torch.float32).numpy())


def test_special_values_and_empty():
    t = torch.tensor([[1.0, float("nan"), 2.0], [float("inf"), -float("inf"), 1.0],
                      [3e38, 3e38, -3e38]])
    x = tl.tensor(t.numpy())
    for dim in (0, 1):
        assert np.array_equal(x.cumsum(dim).numpy(), t.cumsum(dim).numpy(), equal_nan=True)
        assert np.array_equal(x.cumprod(dim).numpy(), t.cumprod(dim).numpy(), equal_nan=True)
    assert tl.zeros(0, 4).cumsum(0).shape == (0, 4)
    assert tl.zeros(3, 0).cumsum(1).shape == (3, 0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", _SHAPES)
def test_cumsum_gradient_is_torchs(dtype, shape):
    """The gradient is the running sum from the end, rounded as PyTorch's flip-cumsum-flip."""
    x, t = _pair(shape, dtype, seed=1)
    w, tw = _pair(shape, dtype, seed=2)
    for dim in range(t.dim()):
        a = x.detach().requires_grad_()
        ta = t.clone().requires_grad_()
        (a.cumsum(dim) * w).sum().backward()
        (ta.cumsum(dim) * tw).sum().backward()
        assert np.array_equal(a.grad.numpy(), ta.grad.numpy())


def test_gradients_gradcheck_and_double_backward():
    x = tl.tensor(np.random.default_rng(3).standard_normal((4, 6)), requires_grad=True)
    assert gradcheck(lambda a: a.cumsum(1), (x,))
    assert gradcheck(lambda a: a.cumsum(0) * a, (x,))
    assert gradcheck(lambda a: (a / 4 + 1).cumprod(1), (x,))
    g, = tl.autograd.grad((x.cumsum(1) ** 2).sum(), x, create_graph=True)
    gg, = tl.autograd.grad(g.sum(), x)                 # the reference path, recorded
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    tg, = torch.autograd.grad((tx.cumsum(1) ** 2).sum(), tx, create_graph=True)
    tgg, = torch.autograd.grad(tg.sum(), tx)
    np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-12)


def test_reverse_cumsum_kernel_declines_other_dtypes():
    out = tl.empty(3, dtype=tl.complex64)
    assert scan_kernels.reverse_cumsum(out, tl.ones(3, dtype=tl.complex64), 0) is False
    out = tl.empty(2, 3)
    assert scan_kernels.reverse_cumsum(out, tl.ones(2, 3), 1) is True
    assert out.tolist() == [[3.0, 2.0, 1.0]] * 2


def _half_pair(shape, dtype, seed=0):
    t = torch.tensor(np.random.default_rng(seed).standard_normal(shape)).to(dtype)
    t.view(-1)[3] = float("nan")
    ours = tl.tensor(t.view(torch.int16).numpy()).view(tl.bfloat16) \
        if dtype == torch.bfloat16 else tl.tensor(t.numpy())
    return ours, t


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("shape", [(9, 17), (4, 3000), (3000, 5), (70_000,)])
def test_half_scans_accumulate_in_float(dtype, shape):
    """float16/bfloat16 scans add in float and round each running value back, as PyTorch:
    bit for bit (numpy's half scan was off by more than 1 after 3000 elements); the
    gradient likewise."""
    x, t = _half_pair(shape, dtype)
    for dim in range(t.dim()):
        for got, want in ((x.cumsum(dim), t.cumsum(dim)),
                          ((1 + x / 64).cumprod(dim), (1 + t / 64).cumprod(dim))):
            assert np.array_equal(got.view(tl.int16).numpy(), want.view(torch.int16).numpy())
        a, ta = x.detach().requires_grad_(), t.clone().requires_grad_()
        a.cumsum(dim).sum().backward()
        ta.cumsum(dim).sum().backward()
        assert np.array_equal(a.grad.view(tl.int16).numpy(), ta.grad.view(torch.int16).numpy())
