"""Elementwise ops against numpy in float64, over layouts, dtypes and devices."""
import numpy as np
import pytest

import tensorlib as tl
from tests.ops.layouts import LAYOUTS, make

rng = np.random.default_rng(1)

UNARY = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
    "abs": np.abs, "neg": np.negative, "floor": np.floor, "ceil": np.ceil, "round": np.rint,
    "sign": np.sign, "expm1": np.expm1, "log1p": np.log1p, "atan": np.arctan, "trunc": np.trunc,
}
POSITIVE = {"log", "sqrt", "log1p"}
BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "maximum": np.maximum, "minimum": np.minimum, "atan2": np.arctan2, "pow": np.power,
    "remainder": np.remainder, "fmod": np.fmod,
}
COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op, layout, device):
    a = rng.standard_normal((3, 4))
    if op in POSITIVE:
        a = np.abs(a) + 0.1
    x = make(a.astype(np.float32), layout, device)
    expected = UNARY[op](x.cpu().numpy().astype(np.float64))
    got = getattr(tl, op)(x).cpu().numpy()
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary(op, layout, device):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    if op in ("pow",):
        a = np.abs(a) + 0.5
    if op in ("remainder", "fmod", "div"):
        b = np.where(np.abs(b) < 0.1, 0.5, b).astype(np.float32)
    x = make(a.copy(), layout, device)
    y = make(b.copy(), "contiguous" if layout == "broadcast" else layout, device)
    a64 = x.cpu().numpy().astype(np.float64)
    b64 = y.cpu().numpy().astype(np.float64)
    got = getattr(tl, op)(x, y).cpu().numpy()
    np.testing.assert_allclose(got, BINARY[op](a64, b64), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", sorted(COMPARE))
@pytest.mark.parametrize("dtype", [tl.float32, tl.int32, tl.int64])
def test_comparisons(op, dtype, device):
    a = rng.integers(-3, 3, (4, 5))
    b = rng.integers(-3, 3, (4, 5))
    got = getattr(tl, op)(tl.tensor(a, dtype=dtype, device=device),
                          tl.tensor(b, dtype=dtype, device=device))
    assert got.dtype is tl.bool
    np.testing.assert_array_equal(got.cpu().numpy(), COMPARE[op](a, b))


def test_operators_and_reflected(device):
    a = np.array([[1.0, -2.0], [3.0, 4.5]], np.float32)
    x = tl.tensor(a, device=device)
    cases = [(x + 2, a + 2), (2 + x, 2 + a), (x - 1, a - 1), (1 - x, 1 - a), (x * 3, a * 3),
             (3 * x, 3 * a), (x / 2, a / 2), (2 / x, 2 / a), (x ** 2, a ** 2), (2 ** x, 2 ** a),
             (x // 2, a // 2), (x % 2, a % 2), (-x, -a), (abs(x), abs(a))]
    for got, expected in cases:
        np.testing.assert_allclose(got.cpu().numpy(), expected, rtol=1e-6)


def test_integer_semantics():
    a = tl.tensor([7, -7, 5])
    b = tl.tensor([2, 2, -3])
    assert (a // b).tolist() == [3, -4, -2]
    assert (a % b).tolist() == [1, 1, -1]
    assert tl.fmod(a, b).tolist() == [1, -1, 2]
    assert (a / b).dtype is tl.float32
    assert tl.div(a, b, rounding_mode="trunc").tolist() == [3, -3, -1]
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):      # as PyTorch
        a // tl.tensor([1, 0, 1])
    assert (a & 3).tolist() == [3, 1, 1]
    assert (~tl.tensor([True, False])).tolist() == [False, True]


def test_bool_errors_like_pytorch():
    m = tl.tensor([True, False])
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool"):
        m - m
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        -m
    assert (m + m).dtype is tl.bool


def test_inplace_keeps_identity_and_bumps_version(device):
    x = tl.ones(2, 3, device=device)
    before = x._version
    y = x
    x += 1
    x *= tl.tensor([1.0, 2.0, 3.0], device=device)
    assert x is y
    assert x._version == before + 2
    np.testing.assert_array_equal(x.cpu().numpy(), [[2, 4, 6], [2, 4, 6]])
    view = x[0]
    view.add_(1)
    assert x._version == before + 3
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        x[0].add_(tl.ones(2, 3, device=device))


def test_inf_and_nan_results_are_quiet(recwarn):
    x = tl.tensor([0.0, 1.0, -1.0])
    assert tl.isnan(tl.log(x))[2].item()
    assert (1 / x)[0].item() == float("inf")
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_mixed_dtype_and_scalar_results():
    assert (tl.tensor([1, 2], dtype=tl.uint8) + 1000).tolist() == [233, 234]
    assert (tl.tensor([1, 2]) * 1.5).tolist() == [1.5, 3.0]
    assert tl.tensor([1, 2], dtype=tl.int32).exp().dtype is tl.float32
    half = tl.tensor([1.0, 2.0], dtype=tl.float16) + tl.tensor([1.0, 2.0], dtype=tl.bfloat16)
    assert half.dtype is tl.float32


def test_alpha_checks_take_complex_results_as_pytorch():
    z = tl.ones(2, dtype=tl.complex64)
    np.testing.assert_allclose(z.add(z, alpha=0.5).numpy(), [1.5, 1.5])
    np.testing.assert_allclose(z.sub(z, alpha=1j).numpy(), [1 - 1j, 1 - 1j])
    with pytest.raises(RuntimeError, match="non-complex input tensors, argument alpha"):
        tl.ones(2).add(tl.ones(2), alpha=1j)
    with pytest.raises(RuntimeError, match="integral input tensors, argument alpha"):
        tl.ones(2, dtype=tl.int64).add(tl.ones(2, dtype=tl.int64), alpha=0.5)
