"""The rest of the elementwise math (exp2 ... copysign, clamp, lerp, addc*, classification,
isclose): values against numpy/scipy in float64 over layouts and devices, result dtypes and
errors against PyTorch, in-place variants, and derivatives (gradcheck, gradgradcheck)."""
import math

import numpy as np
import pytest
from scipy import special

import tensorlib as tl
from tensorlib.autograd import gradcheck, gradgradcheck
from tests.ops.layouts import LAYOUTS, make

rng = np.random.default_rng(7)


def _sigmoid(a):
    return special.expit(a)


UNARY = {
    "exp2": np.exp2, "log2": np.log2, "log10": np.log10, "rsqrt": lambda a: 1 / np.sqrt(a),
    "square": np.square, "sigmoid": _sigmoid, "relu": lambda a: np.maximum(a, 0),
    "erfc": special.erfc, "frac": lambda a: a - np.trunc(a), "reciprocal": np.reciprocal,
    "negative": np.negative, "positive": lambda a: a, "absolute": np.abs,
    "nan_to_num": np.nan_to_num,
}
POSITIVE = {"log2", "log10", "rsqrt", "reciprocal"}
BINARY = {
    "hypot": np.hypot, "logaddexp": np.logaddexp, "float_power": np.float_power,
    "true_divide": np.true_divide, "copysign": np.copysign,
}


def _inputs(op, shape=(3, 4)):
    a = rng.standard_normal(shape) * 3
    return np.abs(a) + 0.1 if op in POSITIVE else a


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_values(op, layout, device):
    x = make(_inputs(op), layout, device)
    got = getattr(tl, op)(x)
    np.testing.assert_allclose(got.cpu().numpy(), UNARY[op](x.cpu().numpy()), rtol=1e-12,
                               atol=1e-300)
    got32 = getattr(tl, op)(x.float()).cpu().numpy()
    np.testing.assert_allclose(got32, UNARY[op](x.cpu().numpy()), rtol=3e-6, atol=1e-6)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_values(op, layout, device):
    a, b = rng.standard_normal((3, 4)) * 3, rng.standard_normal((3, 4))
    if op == "float_power":
        a = np.abs(a) + 0.1
    x = make(a, layout, device)
    y = make(b, "contiguous" if layout == "broadcast" else layout, device)
    expected = BINARY[op](x.cpu().numpy(), y.cpu().numpy())
    np.testing.assert_allclose(getattr(tl, op)(x, y).cpu().numpy(), expected, rtol=1e-12)


def test_erfc_tail_accuracy():
    """1 - erf(x) has no digits left at x = 10; the continued fraction keeps them all."""
    a = np.array([-5.0, -1.0, 0.0, 0.5, 1.9, 2.0, 2.1, 3.0, 5.0, 10.0, 26.0])
    got = tl.erfc(tl.tensor(a)).numpy()
    np.testing.assert_allclose(got, special.erfc(a), rtol=1e-13)
    np.testing.assert_allclose(tl.erfc(tl.tensor(a, dtype=tl.float32)).numpy(),
                               special.erfc(a), rtol=2e-6, atol=1e-44)


def test_sigmoid_logaddexp_hypot_extremes():
    a = np.array([-1000.0, -40.0, 0.0, 40.0, 1000.0, np.inf, -np.inf, np.nan])
    np.testing.assert_allclose(tl.sigmoid(tl.tensor(a)).numpy(), _sigmoid(a), rtol=1e-15)
    b = np.array([-1000.0, 1e300, 0.0, np.inf, np.inf, np.inf, -np.inf, 1.0])
    with np.errstate(invalid="ignore"):
        expected = np.logaddexp(a, b)
    np.testing.assert_allclose(tl.logaddexp(tl.tensor(a), tl.tensor(b)).numpy(), expected,
                               rtol=1e-15)
    big = np.array([1e300, 1e-300, 0.0, np.inf, np.nan, 3.0])
    other = np.array([1e300, 1e-300, 0.0, np.nan, np.inf, 4.0])
    np.testing.assert_allclose(tl.hypot(tl.tensor(big), tl.tensor(other)).numpy(),
                               np.hypot(big, other), rtol=1e-15)


def test_copysign_signed_zero():
    a = tl.tensor([1.0, 2.0, 3.0, -4.0])
    b = tl.tensor([-0.0, 0.0, -2.0, 5.0])
    assert tl.copysign(a, b).tolist() == [-1.0, 2.0, -3.0, 4.0]
    assert tl.copysign(a, -0.0).tolist() == [-1.0, -2.0, -3.0, -4.0]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_clamp_values(layout, device):
    a = rng.standard_normal((3, 4))
    x = make(a, layout, device)
    a = x.cpu().numpy()
    np.testing.assert_array_equal(tl.clamp(x, -0.5, 0.5).cpu().numpy(), np.clip(a, -0.5, 0.5))
    np.testing.assert_array_equal(tl.clip(x, min=0.1).cpu().numpy(), np.maximum(a, 0.1))
    np.testing.assert_array_equal(x.clamp(max=0.1).cpu().numpy(), np.minimum(a, 0.1))
    lo = rng.standard_normal(4) - 1
    hi = lo + 1
    got = tl.clamp(x, tl.tensor(lo, device=device), tl.tensor(hi, device=device))
    np.testing.assert_array_equal(got.cpu().numpy(), np.minimum(np.maximum(a, lo), hi))
    nan = tl.clamp(tl.tensor([float("nan"), 2.0], device=device), 0, 1).cpu().numpy()
    assert np.isnan(nan[0]) and nan[1] == 1.0
    assert tl.clamp(tl.tensor([5.0]), min=3, max=1).tolist() == [1.0]       # min > max: max


@pytest.mark.parametrize("layout", LAYOUTS)
def test_lerp_addcmul_addcdiv(layout, device):
    a, b, c = (rng.standard_normal((3, 4)) for _ in range(3))
    x = make(a, layout, device)
    a = x.cpu().numpy()
    y, z = tl.tensor(b, device=device), tl.tensor(np.abs(c) + 0.5, device=device)
    w = rng.random((3, 4)) * 1.4 - 0.2
    np.testing.assert_allclose(tl.lerp(x, y, 0.3).cpu().numpy(), a + 0.3 * (b - a), rtol=1e-12)
    np.testing.assert_allclose(tl.lerp(x, y, 0.8).cpu().numpy(), a + 0.8 * (b - a), rtol=1e-12)
    np.testing.assert_allclose(tl.lerp(x, y, tl.tensor(w, device=device)).cpu().numpy(),
                               a + w * (b - a), rtol=1e-12)
    assert tl.lerp(x, y, 1.0).cpu().numpy().tolist() == b.tolist()        # exact at the end
    np.testing.assert_allclose(tl.addcmul(x, y, z, value=0.5).cpu().numpy(),
                               a + 0.5 * b * (np.abs(c) + 0.5), rtol=1e-12)
    np.testing.assert_allclose(tl.addcdiv(x, y, z, value=-2).cpu().numpy(),
                               a - 2 * b / (np.abs(c) + 0.5), rtol=1e-12)


def test_addcdiv_accepts_complex_and_refuses_integers():
    # PyTorch refuses only two integral (or bool) divisors; complex ones divide
    a, b, c = (np.array(v, np.complex128) for v in ([1 + 2j, 0.5j], [2 - 1j, 3], [1j, 2 + 2j]))
    got = tl.addcdiv(tl.tensor(a), tl.tensor(b), tl.tensor(c), value=0.5).numpy()
    np.testing.assert_allclose(got, a + 0.5 * b / c, rtol=1e-14)
    ints = tl.ones(2, dtype=tl.int64)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        tl.addcdiv(ints, ints, ints)


def test_classification(device):
    a = np.array([1.0, -np.inf, np.inf, np.nan, 0.0, -2.5])
    x = tl.tensor(a, device=device)
    for name, fn in (("isinf", np.isinf), ("isfinite", np.isfinite), ("isposinf", np.isposinf),
                     ("isneginf", np.isneginf)):
        got = getattr(tl, name)(x)
        assert got.dtype is tl.bool
        np.testing.assert_array_equal(got.cpu().numpy(), fn(a))
        assert getattr(x, name)().cpu().numpy().tolist() == fn(a).tolist()
    ints = tl.tensor([1, 2, 3], device=device)
    assert tl.isinf(ints).tolist() == [False] * 3 and tl.isfinite(ints).tolist() == [True] * 3
    got = tl.nan_to_num(x, nan=1.5, posinf=9.0, neginf=-9.0).cpu().numpy()
    np.testing.assert_array_equal(got, np.nan_to_num(a, nan=1.5, posinf=9.0, neginf=-9.0))
    half = tl.nan_to_num(tl.tensor([np.inf, -np.inf], dtype=tl.float16)).tolist()
    assert half == [65504.0, -65504.0]


def test_isclose_allclose_equal(device):
    a = np.array([1.0, np.nan, np.inf, 1.0, -np.inf, 1e-9, 100.0])
    b = np.array([1.0 + 1e-9, np.nan, np.inf, np.inf, np.inf, 0.0, 100.001])
    x, y = tl.tensor(a, device=device), tl.tensor(b, device=device)
    for kwargs in ({}, {"equal_nan": True}, {"rtol": 1e-3}, {"atol": 0.0, "rtol": 0.0}):
        np.testing.assert_array_equal(tl.isclose(x, y, **kwargs).cpu().numpy(),
                                      np.isclose(a, b, **kwargs))
    assert tl.allclose(x[:1], y[:1]) is True and tl.allclose(x, y) is False
    assert x.allclose(x, equal_nan=True)
    assert tl.equal(tl.tensor([1, 2]), tl.tensor([1.0, 2.0])) is True
    assert tl.equal(tl.tensor([1, 2]), tl.tensor([1, 2, 3])) is False
    assert tl.equal(tl.tensor([float("nan")]), tl.tensor([float("nan")])) is False
    assert tl.isclose(tl.tensor([1, 5]), tl.tensor([1, 6])).tolist() == [True, False]


DTYPE_CASES = [
    ("exp2", (tl.int64,)), ("log2", (tl.int32,)), ("rsqrt", (tl.int64,)),
    ("square", (tl.bool,)), ("square", (tl.int8,)), ("sigmoid", (tl.bool,)),
    ("relu", (tl.int64,)), ("reciprocal", (tl.int64,)), ("erfc", (tl.int64,)),
    ("nan_to_num", (tl.int64,)), ("copysign", (tl.int64, tl.int64)),
    ("float_power", (tl.int64, tl.int32)), ("float_power", (tl.float32, tl.float32)),
    ("true_divide", (tl.int64, tl.int64)), ("hypot", (tl.float32, tl.float64)),
    ("logaddexp", (tl.float16, tl.float32)), ("copysign", (tl.float16, tl.float64)),
    ("isinf", (tl.int64,)), ("isfinite", (tl.float16,)), ("isclose", (tl.int64, tl.int64)),
    ("logical_and", (tl.int64, tl.float32)),
]


@pytest.mark.parametrize("op,dtypes", DTYPE_CASES)
def test_result_dtypes_match_torch(op, dtypes):
    torch = pytest.importorskip("torch")
    ours = [tl.ones(2, dtype=d) for d in dtypes]
    theirs = [torch.ones(2, dtype=getattr(torch, str(d).split(".")[-1])) for d in dtypes]
    assert str(getattr(tl, op)(*ours).dtype).split(".")[-1] == \
        str(getattr(torch, op)(*theirs).dtype).split(".")[-1]


def test_clamp_dtypes_match_torch():
    torch = pytest.importorskip("torch")
    cases = [({"min": 1.5}, None), ({"min": 1}, None), ({"max": 2}, "float64")]
    for kwargs, bound in cases:
        ours = tl.clamp(tl.tensor([1, 2, 3]), **kwargs)
        theirs = torch.clamp(torch.tensor([1, 2, 3]), **kwargs)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    ours = tl.clamp(tl.tensor([1, 2, 3]), min=tl.tensor(1.5))
    assert ours.dtype is tl.float32


ERRORS = [
    (lambda: tl.clamp(tl.ones(2)), RuntimeError, "At least one of 'min' or 'max'"),
    (lambda: tl.relu(tl.tensor([True])), RuntimeError, "Boolean inputs not supported"),
    (lambda: tl.frac(tl.tensor([1])), NotImplementedError, "frac"),
    (lambda: tl.hypot(tl.tensor([1]), tl.tensor([1])), NotImplementedError, "hypot"),
    (lambda: tl.logaddexp(tl.tensor([1]), tl.tensor([1])), NotImplementedError, "logaddexp"),
    (lambda: tl.lerp(tl.tensor([1]), tl.tensor([1]), 0.5), NotImplementedError, "lerp"),
    (lambda: tl.lerp(tl.ones(2), tl.ones(2, dtype=tl.float64), 0.5), RuntimeError,
     "for `end`"),
    (lambda: tl.addcdiv(tl.ones(2), tl.tensor([1]), tl.tensor([1])), RuntimeError,
     "Integer division with addcdiv"),
    (lambda: tl.isclose(tl.ones(2), tl.ones(2, dtype=tl.float64)), RuntimeError,
     "Float did not match Double"),
    (lambda: tl.isclose(tl.ones(2), tl.ones(2), rtol=-1), RuntimeError, "rtol"),
    (lambda: tl.positive(tl.tensor([True])), RuntimeError, "bool tensor"),
    (lambda: tl.tensor([1, 2]).sigmoid_(), RuntimeError, "can't be cast"),
    (lambda: tl.tensor([1, 2]).exp_(), RuntimeError, "can't be cast"),
    (lambda: tl.tensor([1.0, 2.0]).clamp_(tl.ones(3, 2)), RuntimeError, "doesn't match"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    fn, error, message = ERRORS[case]
    with pytest.raises(error, match=message):
        fn()


def test_inplace_variants(device):
    a = rng.standard_normal((3, 4))
    cases = {
        "sigmoid_": ((), _sigmoid(a)), "relu_": ((), np.maximum(a, 0)), "exp_": ((), np.exp(a)),
        "neg_": ((), -a), "abs_": ((), np.abs(a)), "clamp_": ((-0.2, 0.3), np.clip(a, -.2, .3)),
        "mul_": ((2.0,), a * 2), "pow_": ((2,), a ** 2), "square_": ((), a * a),
        "lerp_": ((tl.ones(3, 4, dtype=tl.float64, device=device), 0.25), a + 0.25 * (1 - a)),
        "addcmul_": ((tl.ones(4, dtype=tl.float64, device=device),
                      tl.full((4,), 3.0, dtype=tl.float64, device=device)), a + 3),
        "addcdiv_": ((tl.ones(4, dtype=tl.float64, device=device),
                      tl.full((4,), 4.0, dtype=tl.float64, device=device)), a + 0.25),
        "add_": ((tl.ones(4, dtype=tl.float64, device=device),), a + 1),
        "tanh_": ((), np.tanh(a)), "frac_": ((), a - np.trunc(a)),
        "nan_to_num_": ((), a), "copysign_": ((-1.0,), -np.abs(a)),
    }
    for name, (args, expected) in cases.items():
        x = tl.tensor(a, device=device)
        version = x._version
        assert getattr(x, name)(*args) is x
        assert x._version > version, name
        np.testing.assert_allclose(x.cpu().numpy(), expected, rtol=1e-12, err_msg=name)
    x = tl.tensor(np.abs(a) + 1, device=device)
    x.log_()
    x.sqrt_()
    np.testing.assert_allclose(x.cpu().numpy(), np.sqrt(np.log(np.abs(a) + 1)), rtol=1e-12)
    x = tl.tensor(a, device=device)
    x.add_(tl.ones(4, dtype=tl.float64, device=device), alpha=3)
    np.testing.assert_allclose(x.cpu().numpy(), a + 3, rtol=1e-12)


def test_inplace_records_autograd():
    base = tl.tensor(rng.standard_normal((3,)), requires_grad=True)
    y = base * 1
    y.sigmoid_()
    y.clamp_(0.2, 0.8)
    y.sum().backward()
    s = _sigmoid(base.detach().numpy())
    np.testing.assert_allclose(base.grad.numpy(), np.where((s >= 0.2) & (s <= 0.8),
                                                           s * (1 - s), 0), rtol=1e-12)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        tl.ones(2, requires_grad=True).sigmoid_()


def test_methods_exist():
    x = tl.tensor([[0.5, -1.0]])
    for name in ("exp2", "log2", "log10", "rsqrt", "square", "sigmoid", "relu", "erfc", "frac",
                 "reciprocal", "clamp", "clip", "lerp", "addcmul", "addcdiv", "logical_and",
                 "logical_or", "logical_xor", "logical_not", "isinf", "isfinite", "isposinf",
                 "isneginf", "nan_to_num", "allclose", "isclose", "equal", "hypot", "logaddexp",
                 "float_power", "true_divide", "negative", "positive", "absolute", "copysign",
                 "clamp_", "clip_", "sigmoid_", "relu_", "exp_", "log_", "sqrt_", "neg_",
                 "abs_", "pow_", "lerp_", "addcmul_", "addcdiv_", "mul_"):
        assert callable(getattr(x, name)), name
    assert x.logical_and(tl.tensor([[1, 0]])).tolist() == [[True, False]]
    assert x.positive() is x


# ---- derivatives ---------------------------------------------------------------------------
def _leaf(shape, positive=False, scale=1.0):
    a = rng.standard_normal(shape) * scale
    if positive:
        a = np.abs(a) + 0.5
    return tl.tensor(a, dtype=tl.float64, requires_grad=True)


GRAD_UNARY = {
    "exp2": False, "log2": True, "log10": True, "rsqrt": True, "square": False,
    "sigmoid": False, "relu": False, "erfc": False, "frac": False, "reciprocal": True,
    "nan_to_num": False, "negative": False, "absolute": False,
}


@pytest.mark.parametrize("op", sorted(GRAD_UNARY))
def test_grad_unary(op):
    x = _leaf((3, 4), GRAD_UNARY[op], 1.5)
    fn = getattr(tl, op)
    assert gradcheck(fn, (x,))
    assert gradcheck(lambda t: fn(t.t()), (x,))                     # non-contiguous
    assert gradgradcheck(fn, (x,))


def test_grad_erfc_tail():
    x = tl.tensor([2.5, 4.0, -3.0, 1.0], dtype=tl.float64, requires_grad=True)
    assert gradcheck(tl.erfc, (x,))


GRAD_BINARY = {
    "hypot": lambda a, b: tl.hypot(a, b),
    "logaddexp": lambda a, b: tl.logaddexp(a, b),
    "float_power": lambda a, b: tl.float_power(a.abs() + 0.5, b),
    "true_divide": lambda a, b: tl.true_divide(a, b.abs() + 0.5),
    "copysign": lambda a, b: tl.copysign(a, b),
    "lerp": lambda a, b: tl.lerp(a, b, 0.7),
    "clamp_min_tensor": lambda a, b: tl.clamp(a, min=b),
    "clamp_max_tensor": lambda a, b: tl.clamp(a, max=b),
}


@pytest.mark.parametrize("op", sorted(GRAD_BINARY))
def test_grad_binary_broadcast(op):
    fn = GRAD_BINARY[op]
    a, b = _leaf((3, 4)), _leaf((4,))
    assert gradcheck(fn, (a, b))
    assert gradcheck(lambda x, y: fn(x.t(), y.view(4, 1)), (a, b))   # transposed, broadcast
    assert gradgradcheck(fn, (a, b))


def test_grad_clamp_boundaries_like_torch():
    x = tl.tensor([-2.0, -1.0, 0.0, 1.0, 2.0], dtype=tl.float64, requires_grad=True)
    tl.clamp(x, -1, 1).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]
    lo = tl.tensor([0.5] * 5, dtype=tl.float64, requires_grad=True)
    hi = tl.tensor([1.5] * 5, dtype=tl.float64, requires_grad=True)
    x.grad = None
    tl.clamp(x, lo, hi).sum().backward()
    assert lo.grad.tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert hi.grad.tolist() == [0.0, 0.0, 0.0, 0.0, 1.0]
    # inputs kept 0.1 away from the bounds: finite differences straddle no kink
    a = np.array([[-1.9, -0.5, 0.3, 1.8], [0.9, -1.4, 1.6, -0.2], [2.5, 0.0, -2.6, 1.1]])
    three = tuple(tl.tensor(v, dtype=tl.float64, requires_grad=True)
                  for v in (a, [0.2, -0.3, 0.1, 0.4], [[0.1], [-0.2], [0.3]]))
    assert gradcheck(lambda a, b, c: tl.clamp(a, b - 1, c + 1), three)
    assert gradgradcheck(lambda a, b, c: tl.clamp(a, b - 1, c + 1), three)


def test_grad_ternary():
    a, b, c = _leaf((3, 4)), _leaf((4,)), _leaf((3, 1), positive=True)
    for fn in (lambda x, y, z: tl.addcmul(x, y, z, value=0.5),
               lambda x, y, z: tl.addcdiv(x, y, z, value=-2),
               lambda x, y, z: tl.lerp(x, y.expand(3, 4), z.expand(3, 4) - 1)):
        assert gradcheck(fn, (a, b, c))
        assert gradgradcheck(fn, (a, b, c))


def test_one_pass_blends_match_torch_small_large_and_with_grad():
    """lerp/addcmul/addcdiv through the one-pass kernels (one shape, no graph: 16 floats and
    past the threads' minimum, NaN and inf included), promoted operands (float32 with
    float64, as torch's one kernel), and same-shape leaves that need a gradient (the
    composite then records it)."""
    torch = pytest.importorskip("torch")
    g = np.random.default_rng(9)
    for shape in ((1, 16), (300, 301)):
        a, b, c = (g.standard_normal(shape).astype(np.float32) for _ in range(3))
        a.flat[:3] = [np.nan, np.inf, -np.inf]
        c = np.abs(c) + 0.5
        x, y, z = (tl.from_numpy(v) for v in (a, b, c))
        tx, ty, tz = (torch.from_numpy(v) for v in (a, b, c))
        for ours, theirs in ((tl.lerp(x, y, 0.3), torch.lerp(tx, ty, 0.3)),
                             (tl.lerp(x, y, z), torch.lerp(tx, ty, tz)),
                             (tl.addcmul(x, y, z, value=0.5), torch.addcmul(tx, ty, tz, value=0.5)),
                             (tl.addcdiv(x, y, z, value=-2), torch.addcdiv(tx, ty, tz, value=-2)),
                             (tl.addcmul(x, y.double(), z), torch.addcmul(tx, ty.double(), tz))):
            assert ours.dtype == getattr(tl, str(theirs.dtype).split(".")[1])
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)
    three = tuple(tl.tensor(g.standard_normal((3, 4)) + 2, dtype=tl.float64, requires_grad=True)
                  for _ in range(3))
    for fn in (lambda p, q, r: tl.addcmul(p, q, r, value=0.5),
               lambda p, q, r: tl.addcdiv(p, q, r, value=-2), lambda p, q, r: tl.lerp(p, q, r)):
        assert gradcheck(fn, three)


def test_grad_nan_to_num_and_relu_conventions():
    x = tl.tensor([float("nan"), float("inf"), -1.0, 2.0], dtype=tl.float64,
                  requires_grad=True)
    tl.nan_to_num(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0, 1.0]
    y = tl.tensor([-1.0, 0.0, 3.0], dtype=tl.float64, requires_grad=True)
    tl.relu(y).sum().backward()
    assert y.grad.tolist() == [0.0, 0.0, 1.0]
    s = tl.tensor([-800.0, 800.0], dtype=tl.float64, requires_grad=True)
    tl.sigmoid(s).sum().backward()
    assert np.isfinite(s.grad.numpy()).all()


def test_pow_scalar_base_gradient():
    x = tl.tensor([0.5, 2.0], dtype=tl.float64, requires_grad=True)
    (2 ** x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 ** np.array([0.5, 2.0]) * math.log(2))
    assert gradgradcheck(lambda t: 3.0 ** t, (x,))
