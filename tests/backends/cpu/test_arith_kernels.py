"""arith_kernels (pow, fmod, remainder of float tensors in one threaded pass): pow by a
number takes PyTorch's shortcuts and equals its results; fmod is libm's, bit for bit, sign
of zero included, through the quick path and the cases it hands to libm; remainder is fmod
moved to the divisor's sign; layouts the kernels do not take run numpy's ufunc instead."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib_cpu import arith_kernels as ak

SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 7.0, -7.0, 0.7, np.inf, -np.inf, np.nan, 1e-40,
           -1e-40, 3e38, -3e38, 1e30]
LARGE = 300_000                         # past the kernels' threading threshold


def _values(dtype, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-4, 5, n)
    x[:len(SPECIAL)] = SPECIAL
    return x.astype(dtype)


def _same_bits(a, b):
    """Equal values with equal signs (so -0 differs from 0), NaN equal to NaN."""
    return bool(np.all(((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [37, LARGE])
@pytest.mark.parametrize("exponent", [2, 3, -2, -1, -0.5, 0, 1])
def test_pow_shortcuts_equal_torch(dtype, n, exponent):
    torch = pytest.importorskip("torch")
    x = _values(dtype, n, 0)
    ours = tl.from_numpy(x).pow(exponent).numpy()
    assert _same_bits(ours, torch.from_numpy(x).pow(exponent).numpy())


@pytest.mark.parametrize("exponent", [2, 3, -2, -1, -0.5])
def test_pow_shortcuts_hold_for_one_element_tensors(exponent):
    """A one-element tensor (every step reads 0: the exponent broadcast to it looks like a
    full array) takes the shortcut too: 2.8166549 ** 3 is 22.34606 as x * x * x, not powf's
    correctly rounded 22.346058 (a GP kernel compares the two)."""
    torch = pytest.importorskip("torch")
    for value in (2.816654920578003, -1.8831744194030762, 7.3):
        x = np.array([value], np.float32)
        for ours in (tl.from_numpy(x).pow(exponent), tl.from_numpy(x).reshape(()).pow(exponent),
                     tl.from_numpy(x).pow(tl.tensor(float(exponent)).expand(1))):
            assert _same_bits(ours.numpy().reshape(1), torch.from_numpy(x).pow(exponent).numpy())


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 2e-6), (np.float64, 1e-14)])
@pytest.mark.parametrize("exponent", [0.5, 1.7, 4, 5, -3, -3.3, 0.001, 2.0 ** 25])
def test_pow_other_exponents_within_an_ulp_or_two(dtype, rtol, exponent):
    x = _values(dtype, LARGE, 1)
    with np.errstate(all="ignore"):
        expected = np.power(x.astype(np.float64), exponent)
    ours = tl.from_numpy(x).pow(exponent).numpy()
    with np.errstate(all="ignore"):
        expected = expected.astype(dtype)
    finite = np.isfinite(expected) & (np.abs(expected) > np.finfo(dtype).tiny)
    np.testing.assert_allclose(ours[finite], expected[finite], rtol=rtol)
    assert np.array_equal(np.isnan(ours), np.isnan(expected))
    assert np.array_equal(np.isinf(ours), np.isinf(expected) & ~np.isnan(ours))


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 2e-6), (np.float64, 1e-14)])
def test_pow_tensor_exponent_and_number_base(dtype, rtol):
    base = np.abs(_values(dtype, LARGE, 2)) + dtype(0.5)
    exponent = np.clip(_values(dtype, LARGE, 3), -20, 20)
    exponent[np.isnan(exponent)] = 1
    with np.errstate(all="ignore"):
        expected = np.power(base.astype(np.float64), exponent.astype(np.float64)).astype(dtype)
        by_number = np.power(2.0, exponent.astype(np.float64)).astype(dtype)
    ok = np.isfinite(expected) & (expected > np.finfo(dtype).tiny)
    np.testing.assert_allclose(tl.from_numpy(base).pow(tl.from_numpy(exponent)).numpy()[ok],
                               expected[ok], rtol=rtol)
    ok = np.isfinite(by_number) & (by_number > np.finfo(dtype).tiny)
    np.testing.assert_allclose((2 ** tl.from_numpy(exponent)).numpy()[ok], by_number[ok],
                               rtol=rtol)


def test_pow_special_values_as_torch():
    torch = pytest.importorskip("torch")
    base = np.array([0.0, -0.0, -1.0, 1.0, np.inf, -np.inf, np.nan, -2.0], np.float32)
    for exponent in (0.5, -0.5, 1.7, -1.7, 5.0, -3.0, 4.0, 2.0 ** 25, np.inf, -np.inf, np.nan,
                     0.0, 1.0):
        ours = tl.from_numpy(base).pow(exponent).numpy()
        theirs = torch.from_numpy(base).pow(exponent).numpy()
        assert _same_bits(ours, theirs), exponent


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op,reference", [("fmod", np.fmod), ("remainder", None)])
def test_fmod_and_remainder_are_libms_bit_for_bit(dtype, op, reference):
    rng = np.random.default_rng(4)
    n = 1_000_000
    # quotients of every size, the near-integer ones where a / b rounds to the wrong side,
    # zero, subnormal and infinite divisors and dividends
    a = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(dtype)
    b = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(dtype)
    near = slice(0, n // 4)
    b[near] = rng.standard_normal(n // 4).astype(dtype)
    a[near] = (b[near] * rng.integers(-2 ** 22, 2 ** 22, n // 4)
               + rng.standard_normal(n // 4) * 1e-3).astype(dtype)
    a[-len(SPECIAL):] = SPECIAL
    b[-len(SPECIAL) * 2:-len(SPECIAL)] = SPECIAL
    b[-len(SPECIAL):] = SPECIAL[::-1]
    with np.errstate(all="ignore"):
        expected = np.fmod(a, b)
        if op == "remainder":       # PyTorch's formula: fmod moved to the divisor's sign
            move = (expected != 0) & ((b < 0) != (expected < 0))
            expected = np.where(move, expected + b, expected)
    ours = getattr(tl, op)(tl.from_numpy(a), tl.from_numpy(b)).numpy()
    assert _same_bits(ours, expected)


@pytest.mark.parametrize("op", ["fmod", "remainder"])
@pytest.mark.parametrize("divisor", [0.7, -0.7, 3.0, 1e-3, 0.0, np.inf, -np.inf, np.nan])
def test_fmod_and_remainder_by_a_number_as_torch(op, divisor):
    torch = pytest.importorskip("torch")
    x = _values(np.float32, LARGE, 5)
    x[np.abs(x) > 1e20] = 1.5           # torch's vector fmod gives NaN for huge quotients
    ours = getattr(tl, op)(tl.from_numpy(x), divisor).numpy()
    assert _same_bits(ours, getattr(torch, op)(torch.from_numpy(x), divisor).numpy())


def test_integer_division_by_zero_still_raises():
    for op in (tl.fmod, tl.remainder):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            op(tl.tensor([3, 4]), tl.tensor([1, 0]))
        assert op(tl.tensor([7, -7]), tl.tensor([3, 3])).tolist() == \
            ([1, -1] if op is tl.fmod else [1, 2])


def test_kernels_refuse_layouts_they_do_not_take_and_the_ops_still_agree():
    x = tl.from_numpy(_values(np.float32, 64 * 48, 6).reshape(64, 48))
    t = x.t()
    for op, reference in ((tl.pow, np.power), (tl.fmod, np.fmod)):
        with np.errstate(all="ignore"):
            expected = reference(t.numpy(), np.float32(3.0))
        np.testing.assert_allclose(op(t, 3.0).numpy(), expected, rtol=2e-6)
        half = tl.from_numpy(np.float16(np.clip(x.numpy(), -6e4, 6e4)))
        with np.errstate(all="ignore"):
            expected = reference(half.numpy(), np.float16(3.0))
        np.testing.assert_allclose(op(half, 3.0).numpy().astype(np.float32),
                                   expected.astype(np.float32), rtol=1e-3)


@pytest.mark.parametrize("op", ["pow", "fmod", "remainder"])
def test_in_place_and_broadcast_exponents(op):
    x = _values(np.float64, 48 * 5, 7).reshape(48, 5)
    x = np.clip(np.abs(x), 0.1, 10)
    row = np.array([0.5, 2.0, 3.0, -1.0, 1.7])
    with np.errstate(all="ignore"):
        expected = {"pow": np.power, "fmod": np.fmod,
                    "remainder": lambda a, b: a - b * np.floor(a / b)}[op](x, row)
    np.testing.assert_allclose(getattr(tl, op)(tl.from_numpy(x), tl.from_numpy(row)).numpy(),
                               expected, rtol=1e-12)
    t = tl.from_numpy(x.copy())
    getattr(t, op + "_")(3.0)
    with np.errstate(all="ignore"):
        single = {"pow": np.power, "fmod": np.fmod, "remainder": np.remainder}[op](x, 3.0)
    np.testing.assert_allclose(t.numpy(), single, rtol=1e-12)


def test_an_output_that_holds_the_broadcast_operand_reads_it_first():
    x = tl.from_numpy(np.array([2.0, 3.0, 4.0], np.float32))
    ak.pow(x, x, x[0:1].expand(3))   # writing x[0] first would change the later exponents
    assert x.tolist() == [4.0, 9.0, 16.0]
    y = tl.from_numpy(np.array([7.0, 8.0, 9.0], np.float32))
    ak.fmod(y, y, y[2:3].expand(3))
    assert y.tolist() == [7.0, 8.0, 0.0]


def test_gradients_of_pow_by_shortcut_exponents():
    torch = pytest.importorskip("torch")
    x = _values(np.float64, 200, 8)
    x = x[np.isfinite(x) & (np.abs(x) < 1e10) & (np.abs(x) > 1e-3)]
    for exponent in (2, 3, -2, -1, 0.5, -0.5, 1.7):
        base = np.abs(x) if exponent in (0.5, -0.5, 1.7) else x
        ours = tl.from_numpy(base.copy()).requires_grad_()
        ours.pow(exponent).sum().backward()
        theirs = torch.from_numpy(base.copy()).requires_grad_()
        theirs.pow(exponent).sum().backward()
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-6), (np.float64, 1e-15)])
@pytest.mark.parametrize("n", [37, LARGE])
def test_lerp_addcmul_addcdiv_match_torch(dtype, rtol, n):
    torch = pytest.importorskip("torch")
    a, b, c = (np.clip(_values(dtype, n, seed), -1e6, 1e6) for seed in (10, 11, 12))
    w = np.random.default_rng(13).uniform(-0.5, 1.5, n).astype(dtype)
    w[:4] = [0.5, -0.5, np.nan, 1.0]
    ours, theirs = (tl.from_numpy(a), tl.from_numpy(b), tl.from_numpy(c), tl.from_numpy(w)), \
        (torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(c), torch.from_numpy(w))
    cases = [lambda m, s, e, x, k: m.lerp(s, e, 0.25), lambda m, s, e, x, k: m.lerp(s, e, 0.75),
             lambda m, s, e, x, k: m.lerp(s, e, k), lambda m, s, e, x, k: m.lerp(s, e, 0.5),
             lambda m, s, e, x, k: m.addcmul(s, e, x, value=0.3),
             lambda m, s, e, x, k: m.addcmul(s, e, x),
             lambda m, s, e, x, k: m.addcdiv(s, e, x, value=-2.0)]
    for case in cases:
        got = case(tl, *ours).numpy()
        want = case(torch, *theirs).numpy()
        assert np.array_equal(np.isnan(got), np.isnan(want))
        finite = np.isfinite(want)
        np.testing.assert_allclose(got[finite], want[finite], rtol=rtol * 4,
                                   atol=rtol * np.abs(want[finite]).max())


def test_blends_in_place_under_no_grad_and_through_the_graph():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(14)
    a, b, c = (rng.standard_normal((70, 1000)).astype(np.float32) for _ in range(3))
    ema, tema = tl.from_numpy(a.copy()), torch.from_numpy(a.copy())
    with tl.no_grad():
        ema.lerp_(tl.from_numpy(b), 0.1)
        ema.addcmul_(tl.from_numpy(b), tl.from_numpy(c), value=0.5)
    tema.lerp_(torch.from_numpy(b), 0.1).addcmul_(torch.from_numpy(b), torch.from_numpy(c),
                                                  value=0.5)
    np.testing.assert_allclose(ema.numpy(), tema.numpy(), rtol=1e-5, atol=1e-6)
    start = tl.from_numpy(a.copy()).requires_grad_()
    tstart = torch.from_numpy(a.copy()).requires_grad_()
    for m, s in ((tl, start), (torch, tstart)):
        bb, cc = m.from_numpy(b), m.from_numpy(c)
        (m.lerp(s, bb, 0.3) * m.addcdiv(s, bb, cc.abs() + 1, value=0.7)).sum().backward()
    np.testing.assert_allclose(start.grad.numpy(), tstart.grad.numpy(), rtol=1e-5, atol=1e-5)
    assert start.grad is not None


def test_blends_decline_mixed_shapes_and_dtypes():
    x = tl.from_numpy(np.clip(_values(np.float32, 40, 16), -1e6, 1e6).reshape(8, 5))
    row = tl.from_numpy(np.arange(5, dtype=np.float32))
    out = tl.empty(8, 5)
    assert not ak.lerp(out, x, row.expand(8, 5), 0.3)
    assert not ak.addcmul(out, x, x.double(), x, 1.0)
    assert not ak.addcdiv(out, x.t().contiguous().t(), x, x, 1.0)
    np.testing.assert_allclose(tl.lerp(x, row, 0.3).numpy(),
                               x.numpy() + 0.3 * (row.numpy() - x.numpy()), rtol=1e-5,
                               atol=1e-5)
