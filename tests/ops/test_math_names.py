"""The top-level math names PyTorch programs use that tensorlib added (ops/pointwise_math.py,
statistics.py, differences.py, matrices.py, and einsum's sublist form), against torch on
every device: values, dtypes, shapes, in-place and method forms, errors; gradients compared
with torch's where torch has them (gradcheck cases are in tests/autograd/op_cases_math.py)."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(15)
A = RNG.standard_normal((3, 5))
NAN = A.copy()
NAN[0, 1] = NAN[2, 4] = np.nan
EDGE = np.array([0.0, 1e-8, -1e-300, 1e10, -1e300, 1.0, -1.0, 0.5, 2.0, 0.999, -0.999,
                 np.inf, -np.inf, np.nan, 5e-324, 1.7e308, -3.3])


def _check(ours, theirs, tol=1e-12):
    ours = ours if isinstance(ours, (tuple, list)) else (ours,)
    theirs = theirs if isinstance(theirs, (tuple, list)) else (theirs,)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        if isinstance(t, (tuple, list)):
            _check(o, t, tol)
            continue
        assert o.dtype.name == str(t.dtype).split(".")[-1], (o.dtype, t.dtype)
        assert tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(o.detach().cpu().numpy(), t.detach().numpy(), rtol=tol,
                                   atol=tol, equal_nan=True)


def _both(fn, *arrays, device="cpu"):
    return (fn(tl, *[tl.tensor(a, device=device) for a in arrays]),
            fn(torch, *[torch.tensor(a) for a in arrays]))


CASES = {
    "asinh": (lambda m, x: (m.asinh(x), m.arcsinh(x), x.asinh()), [EDGE]),
    "acosh": (lambda m, x: (m.acosh(x), m.arccosh(x), x.arccosh()), [EDGE]),
    "atanh": (lambda m, x: (m.atanh(x), m.arctanh(x), x.atanh()), [EDGE]),
    "inverse_hyperbolic_int": (lambda m, x: (m.asinh(x), m.acosh(x), m.atanh(x)),
                               [np.array([0, 1, 2])]),
    "gcd_lcm": (lambda m, a, b: (m.gcd(a, b), m.lcm(a, b), a.gcd(b)),
                [np.array([12, -18, 0, 0, 7, 2 ** 40]), np.array([-8, 12, 5, 0, 1, 6])]),
    "frexp": (lambda m, x: tuple(m.frexp(x)), [EDGE]),
    "ldexp": (lambda m, x, e: (m.ldexp(x, e), x.ldexp(e)),
              [A, RNG.integers(-3, 4, (3, 5))]),
    "nextafter": (lambda m, x, y: m.nextafter(x, y),
                  [EDGE, np.array([1.0, -1, 0, 0, 1, 2, -2, 0, 3, 1, -1, 0, 0, 1, 0, np.inf,
                                   -3.3])]),
    "heaviside": (lambda m, x, v: (m.heaviside(x, v), x.heaviside(v[:1])),
                  [np.array([-1.0, 0, 2, 0]), np.array([0.5, 0.7, 0.1, 0.2])]),
    "isin": (lambda m, x, t: (m.isin(x, t), m.isin(x, t, invert=True), m.isin(x, 2)),
             [np.array([[1, 2, 3], [4, 2, 6]]), np.array([2, 6, 9])]),
    "cov": (lambda m, x, w, a: (m.cov(x), m.cov(x[0]), x.cov(correction=0),
                                m.cov(x, fweights=w, aweights=a)),
            [A, np.array([1, 2, 1, 3, 1]), np.array([0.2, 0.5, 1.0, 0.3, 0.9])]),
    "corrcoef": (lambda m, x: (m.corrcoef(x), x.corrcoef()), [A]),
    "quantile": (lambda m, x: (m.quantile(x, 0.3), m.quantile(x, 0.5, dim=1, keepdim=True),
                               x.quantile(m.tensor([0.1, 0.9], dtype=m.float64,
                                                   device=x.device), dim=0),
                               m.quantile(x, 0.4, dim=1, interpolation="nearest"),
                               m.quantile(x, 0.4, dim=1, interpolation="midpoint")), [NAN]),
    "nanquantile": (lambda m, x: (m.nanquantile(x, 0.3), x.nanquantile(0.7, dim=1),
                                  m.nanquantile(x, m.tensor([0.0, 1.0], dtype=m.float64,
                                                          device=x.device),
                                                dim=1, keepdim=True, interpolation="lower")),
                    [NAN]),
    "diff": (lambda m, x: (m.diff(x), x.diff(n=2, dim=0), m.diff(x, prepend=x[:, :1],
                                                                 append=x[:, :2]),
                           m.diff(x > 0)), [A]),
    "trapezoid": (lambda m, y, x: (m.trapezoid(y), m.trapezoid(y, x[0]), m.trapz(y, x[0]),
                                   m.trapezoid(y, dx=0.5, dim=0), m.trapz(y, dx=2.0),
                                   m.cumulative_trapezoid(y), m.cumulative_trapezoid(y, x[0]),
                                   m.cumulative_trapezoid(y, x, dim=0)),
                  [A, np.sort(RNG.standard_normal((3, 5)), 1)]),
    "vander": (lambda m, x: (m.vander(x), m.vander(x, 3, True), m.vander(x, 0)),
               [np.array([1.0, 2, -3, 0.5])]),
    "vander_int": (lambda m, x: m.vander(x), [np.array([1, 2, 3])]),
    "block_diag": (lambda m, a, b: (m.block_diag(a, b[0], b[:2, :1], m.tensor(3.0,
                                                                            dtype=a.dtype,
                                                                            device=a.device)),
                                    m.block_diag(a[:1].to(m.int64), b)), [A, A[:2, :3]]),
    "diagflat": (lambda m, x: (m.diagflat(x), x[:2, :2].diagflat(-1)), [A]),
    "renorm": (lambda m, x: (m.renorm(x, 2, 0, 1.0), x.renorm(1, 1, 0.5),
                             m.renorm(x, float("inf"), 1, 0.3)), [A * 3]),
    "histogram": (lambda m, x: (tuple(m.histogram(x, 4)),
                                tuple(m.histogram(x, m.tensor([-1.0, 0, 2], dtype=x.dtype,
                                                               device=x.device),
                                                  weight=x.abs(), density=True)),
                                tuple(x.histogram(3, range=(-1.0, 1.0)))), [A]),
    "histogramdd": (lambda m, x: (m.histogramdd(x, [2, 3, 2])[0],
                                  m.histogramdd(x, 2, range=[-1.0, 1, -2, 2, 0, 1],
                                                density=True)[0]),
                    [RNG.standard_normal((10, 3))]),
    "einsum_sublists": (lambda m, a, b: (m.einsum(a, [0, 1], b, [1, 2], [0, 2]),
                                         m.einsum(a, [Ellipsis, 1], b, [1, 2])),
                        [A, A.T.copy()]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_dtypes_and_shapes_match_torch(name, device):
    fn, arrays = CASES[name]
    ours, theirs = _both(fn, *arrays, device=device)
    _check(ours, theirs)


INPLACE = {
    "asinh_": lambda m, x: x.asinh_(), "acosh_": lambda m, x: (x + 1.5).arccosh_(),
    "atanh_": lambda m, x: (x * 0.1).atanh_(), "ldexp_": lambda m, x: x.ldexp_(x.round()),
    "renorm_": lambda m, x: x.renorm_(2, 0, 1.0), "logit_": lambda m, x: x.sigmoid().logit_(),
    "heaviside_": lambda m, x: x.heaviside_(x[0].clone()),
    "nextafter_": lambda m, x: x.nextafter_(x * 2),
    "gcd_": lambda m, x: (x * 10).to(x.dtype).long().gcd_(x.long() + 3),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_forms_match_torch(name, device):
    ours, theirs = _both(INPLACE[name], A, device=device)
    _check(ours, theirs)


GRADS = {
    "asinh_acosh_atanh": lambda m, x: (m.asinh(x) + m.acosh(x.abs() + 1.1)
                                       + m.atanh(x * 0.3)).sum(),
    "quantile": lambda m, x: (m.quantile(x, m.tensor([0.2, 0.7], dtype=x.dtype), dim=1) ** 2
                              ).sum(),
    "cov_corrcoef": lambda m, x: (m.cov(x) ** 2).sum() + (m.corrcoef(x) ** 3).sum(),
    "renorm": lambda m, x: (m.renorm(x, 2, 1, 1.0) ** 3).sum(),
    "diff_trapezoid": lambda m, x: (m.diff(x, 2) ** 2).sum() + m.trapezoid(x ** 2).sum()
                                   + m.cumulative_trapezoid(x.exp()).sum(),
    "frexp_ldexp_nextafter": lambda m, x: (m.frexp(x)[0] ** 2).sum()
                                          + m.ldexp(x, m.tensor(2.0)).sum()
                                          + m.nextafter(x, x * 0).sum(),
    "block_diag": lambda m, x: (m.block_diag(x, x[0]) ** 2).sum(),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_match_torch(name):
    grads = []
    for lib in (tl, torch):
        x = lib.tensor(A, requires_grad=True)
        GRADS[name](lib, x).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)


def test_vander_gradient_is_the_power_rule():
    """torch 2.13's own vander backward fails (an in-place error), so the reference is the
    power rule: d/dx sum_k w_k x^k = sum_k k w_k x^(k-1)."""
    x = tl.tensor(A[0], requires_grad=True)
    weights = tl.tensor([3.0, -2.0, 0.5, 1.5], dtype=tl.float64)        # x^3, x^2, x, 1
    (tl.vander(x, 4) * weights).sum().backward()
    a = A[0]
    np.testing.assert_allclose(x.grad.numpy(), 9 * a ** 2 - 4 * a + 0.5, rtol=1e-12)


def test_complex_inverse_hyperbolics_and_gradients_match_torch():
    """Values and gradients over all four quadrants (their principal branches)."""
    z = (RNG.standard_normal(40) + 1j * RNG.standard_normal(40)) * 2
    for name in ("asinh", "acosh", "atanh"):
        results = []
        for lib in (tl, torch):
            x = lib.tensor(z, requires_grad=True)
            y = getattr(lib, name)(x)
            (lib.view_as_real(y) * lib.tensor([1.0, -0.5], dtype=lib.float64)).sum().backward()
            results.append((y, x.grad))
        _check(results[0], results[1], tol=1e-10)


ERRORS = [
    (lambda m: m.gcd(m.tensor([1.0]), m.tensor([2.0])), NotImplementedError, RuntimeError,
     "gcd"),
    (lambda m: m.frexp(m.tensor([1, 2])), RuntimeError, RuntimeError,
     "only supports floating-point"),
    (lambda m: m.heaviside(m.tensor([1, 0]), m.tensor([0.5])), RuntimeError, RuntimeError,
     "different dtypes"),
    (lambda m: m.quantile(m.tensor([1.0, 2.0]), 1.5), RuntimeError, RuntimeError,
     r"q must be in the range \[0, 1\]"),
    (lambda m: m.quantile(m.tensor([1, 2]), 0.5), RuntimeError, RuntimeError,
     "either float or double"),
    (lambda m: m.quantile(m.tensor([1.0]), 0.5, interpolation="foo"), RuntimeError,
     RuntimeError, "interpolation must be one of"),
    (lambda m: m.quantile(m.tensor([], dtype=m.float32), 0.5), RuntimeError, RuntimeError,
     "non-empty"),
    (lambda m: m.cov(m.zeros(2, 2, 2)), RuntimeError, RuntimeError, "two or fewer"),
    (lambda m: m.diff(m.tensor(1.0)), RuntimeError, RuntimeError, "at least one-dimensional"),
    (lambda m: m.vander(m.zeros(2, 2)), RuntimeError, RuntimeError, "one-dimensional"),
    (lambda m: m.block_diag(m.zeros(1, 1, 1)), RuntimeError, RuntimeError, "2 or fewer"),
    (lambda m: m.histogram(m.tensor([1, 2]), 2), RuntimeError, RuntimeError,
     "not implemented for 'Long'"),
    (lambda m: m.histogramdd(m.tensor([1.0, 2.0]), 2), RuntimeError, RuntimeError,
     "at least 2 dimensions"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch(case):
    fn, ours, theirs, message = ERRORS[case]
    with pytest.raises(theirs, match=message):
        fn(torch)
    with pytest.raises(ours, match=message):
        fn(tl)
