"""float16/bfloat16 arithmetic as PyTorch's CPU kernels do it, against torch: sums (and the
reductions built on them) accumulate in float32 and round once; mul and true div read a
Python number in float32; add/sub with alpha round alpha to the dtype and the rest once;
addcmul, addcdiv, lerp and linear with a bias compute in float32 and round once. Each of
these was off by a rounding or more (a bfloat16 sum of 5000 values of 0.01 stopped at 16)."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

HALVES = ["bfloat16", "float16"]


def _pair(values, dtype):
    """The same values as a torch and a tensorlib tensor of dtype (rounded by torch)."""
    theirs = torch.tensor(values, dtype=torch.float32).to(getattr(torch, dtype))
    return tl.tensor(theirs.float().numpy()).to(getattr(tl, dtype)), theirs


def _equal(ours, theirs):
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


def _values(shape, seed, scale=3.0, shift=0.0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * scale + shift


@pytest.mark.parametrize("dtype", HALVES)
def test_sums_accumulate_in_float32(dtype):
    ours, theirs = _pair(_values((5000, 3), 0, 0.01, 0.01), dtype)
    exact = theirs.double()
    for op in (lambda t: t.sum(0), lambda t: t.sum(), lambda t: t.mean(0), lambda t: t.nansum(0),
               lambda t: t.var(0), lambda t: t.std(0), lambda t: t.logsumexp(0),
               lambda t: t.mean()):
        got, want = op(ours), op(theirs)
        assert got.dtype == getattr(tl, dtype)
        # within one rounding of the float64 value, as PyTorch's: not 16 for a sum of 50
        reference = op(exact).numpy()
        step = float(torch.finfo(getattr(torch, dtype)).eps)
        np.testing.assert_allclose(got.float().numpy(), reference, rtol=step, atol=0)
        np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=step, atol=0)


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_in_float32(dtype, op):
    ours, theirs = _pair(_values((3000, 4), 1), dtype)
    got, want = getattr(ours, op)(0), getattr(theirs, op)(0)
    step = float(torch.finfo(getattr(torch, dtype)).eps)
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=step, atol=1e-6)


@pytest.mark.parametrize("dtype", HALVES)
def test_mul_and_div_read_a_number_in_float32(dtype):
    ours, theirs = _pair(_values(4096, 2), dtype)
    for number in (0.1, -0.3, 1e-3, 3):
        _equal(ours * number, theirs * number)
        _equal(number * ours, number * theirs)
        _equal(ours / number, theirs / number)
        _equal(number / ours, number / theirs)          # PyTorch: reciprocal, then * number
        _equal(ours.clone().mul_(number), theirs.clone().mul_(number))
        _equal(ours.clone().div_(number), theirs.clone().div_(number))
        _equal(ours + number, theirs + number)          # add rounds the number first
        _equal(ours - number, theirs - number)


@pytest.mark.parametrize("dtype", HALVES)
def test_add_and_sub_with_alpha_round_once(dtype):
    (a, ta), (b, tb) = _pair(_values(4096, 3), dtype), _pair(_values(4096, 4), dtype)
    for alpha in (0.1, -2.7):
        _equal(a.add(b, alpha=alpha), ta.add(tb, alpha=alpha))
        _equal(a.sub(b, alpha=alpha), ta.sub(tb, alpha=alpha))


@pytest.mark.parametrize("dtype", HALVES)
def test_addcmul_addcdiv_lerp_round_once(dtype):
    (a, ta), (b, tb), (c, tc) = (_pair(_values(4096, s), dtype) for s in (5, 6, 7))
    c, tc = c.abs() + 1, tc.abs() + 1
    _equal(a.addcdiv(b, c, value=0.3), ta.addcdiv(tb, tc, value=0.3))
    step = float(torch.finfo(getattr(torch, dtype)).eps)
    # PyTorch's vector loops may fuse a multiply-add: at most a rounding apart
    for got, want in ((a.addcmul(b, c, value=0.3), ta.addcmul(tb, tc, value=0.3)),
                      (a.lerp(b, 0.3), ta.lerp(tb, 0.3)), (a.lerp(b, 0.8), ta.lerp(tb, 0.8))):
        g, w = got.float().numpy(), want.float().numpy()
        np.testing.assert_allclose(g, w, rtol=step, atol=0)
        assert (g != w).mean() < 0.01


@pytest.mark.parametrize("dtype", HALVES)
def test_linear_with_bias_rounds_once_and_its_gradients(dtype):
    (x, tx), (w, tw), (b, tb) = (_pair(_values(shape, s), dtype)
                                 for s, shape in ((8, (64, 5)), (9, (7, 5)), (10, 7)))
    _equal(tl.nn.functional.linear(x, w, b), torch.nn.functional.linear(tx, tw, tb))
    x3, tx3 = _pair(_values((4, 16, 5), 11), dtype)
    _equal(tl.nn.functional.linear(x3, w, b), torch.nn.functional.linear(tx3, tw, tb))
    g, tg = _pair(_values((64, 7), 12, 0.01), dtype)
    for t in (w, b, tw, tb):
        t.requires_grad_(True)
    tl.nn.functional.linear(x, w, b).backward(g)
    torch.nn.functional.linear(tx, tw, tb).backward(tg)
    _equal(b.grad, tb.grad)
    _equal(w.grad, tw.grad)
