"""Special functions (torch.special and the top-level lgamma, digamma, erfinv, polygamma,
mvlgamma, i0, sinc, logit, xlogy), written in tensorlib ops so they run on every backend.

Each is a short, fixed sequence of elementwise ops (series, asymptotic expansions, Lanczos,
Halley steps): no data-dependent loop, so the work is the same on every device. They are
computed in float64 (where the device has it) and cast back, so float32 results are
correctly rounded approximations rather than float32 cancellation. Accuracy in float64 is
~1e-14 relative except where noted (bessel_j0/j1 near x = 12: ~1e-11 absolute)."""
import math
from fractions import Fraction

import tensorlib._C.dtypes as dt
from tensorlib.ops._opdef import differentiable
from tensorlib.ops._inplace import inplace_composite
from tensorlib.ops.pointwise import where

_LOG_2PI_HALF = 0.5 * math.log(2 * math.pi)
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)


def _bernoulli_numbers(n):
    """B_0..B_n as Fractions (Akiyama-Tanigawa)."""
    out, a = [], [Fraction(0)] * (n + 1)
    for m in range(n + 1):
        a[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        out.append(a[0])
    return out


_B = _bernoulli_numbers(26)
_B2K = [float(_B[2 * k]) for k in range(1, 14)]            # B_2, B_4, ..., B_26
# Euler-Maclaurin coefficients (2k)! / B_2k of the Hurwitz zeta tail (Cephes' A[])
_ZETA_A = [float(math.factorial(2 * k) / _B[2 * k]) for k in range(1, 13)]


def _tensor(x, like=None):
    import tensorlib
    if isinstance(x, tensorlib.Tensor):
        return x
    return tensorlib.tensor(x, dtype=dt.get_default_dtype(),
                            device=None if like is None else like.device)


def _wide(fn, *xs):
    """fn on the inputs in float64 (float32 where the device has no float64), cast back to
    the inputs' floating result dtype (integers give the default float)."""
    from tensorlib._C.promotion import result_type
    out_dtype = result_type(xs)
    if not out_dtype.is_floating_point:
        out_dtype = dt.get_default_dtype()
    try:
        result = fn(*(x.to(dt.float64) for x in xs))
    except TypeError:                   # no float64 on this device
        result = fn(*(x.to(out_dtype) for x in xs))
    return result.to(out_dtype)


def _is_nonpos_int(x):
    return (x <= 0) & (x == x.floor())


def _sin_pi(x):
    """sin(pi x) with x reduced mod 2 first (exact zeros at integers)."""
    r = x - 2.0 * (x * 0.5).floor()
    return where(r == r.round(), 0.0, (math.pi * r).sin())


# ---- gamma family ----------------------------------------------------------------------------
def _lgamma_pos(x):
    """Lanczos (g=7, 9 terms) for x >= 0.5."""
    z = x - 1.0
    acc = _LANCZOS[0]
    for i, c in enumerate(_LANCZOS[1:], start=1):
        acc = acc + c / (z + i)
    t = z + (_LANCZOS_G + 0.5)
    return _LOG_2PI_HALF + (z + 0.5) * t.log() - t + acc.log()


def _lgamma64(x):
    small = x < 0.5
    xr = where(small, 1.0 - x, x)
    pos = _lgamma_pos(xr)
    reflected = math.log(math.pi) - _sin_pi(x).abs().log() - pos
    out = where(small, reflected, pos)
    return where(_is_nonpos_int(x), math.inf, out)


@differentiable("lgamma")
def lgamma(input):  # noqa: A002
    """log|Gamma(x)|: inf at the poles 0, -1, -2, ..."""
    return _wide(_lgamma64, _tensor(input))


def _digamma64(x):
    small = x < 0.5
    y = where(small, 1.0 - x, x)
    shift = 0.0
    for k in range(6):                   # psi(y) = psi(y + 6) - sum 1/(y + k)
        shift = shift + 1.0 / (y + k)
    w = y + 6.0
    inv2 = 1.0 / (w * w)
    series, power = 0.0, inv2
    for k, b in enumerate(_B2K[:8], start=1):
        series = series + (b / (2 * k)) * power
        power = power * inv2
    pos = w.log() - 0.5 / w - series - shift
    tan_pi = _sin_pi(x) / (math.pi * (x - 2.0 * (x * 0.5).floor())).cos()
    reflected = pos - math.pi / tan_pi
    out = where(small, reflected, pos)
    out = where(x == 0, -math.inf, out)
    return where(_is_nonpos_int(x) & (x != 0), math.nan, out)


@differentiable("digamma")
def digamma(input):  # noqa: A002
    """psi(x) = d/dx lgamma(x): -inf at 0, nan at the negative integers (torch)."""
    return _wide(_digamma64, _tensor(input))


def _zeta64(s, q):
    """Hurwitz zeta(s, q) by Euler-Maclaurin after 9 explicit terms (Cephes' scheme) for
    q > 0; inf at the poles q = 0, -1, ...; nan for other q <= 0 and for s < 1."""
    total = q ** (-s)
    a = q
    for _ in range(9):
        a = a + 1.0
        b = a ** (-s)
        total = total + b
    w = a
    total = total + b * w / (s - 1.0) - 0.5 * b
    fac = 1.0
    k = 0.0
    for coef in _ZETA_A:
        fac = fac * (s + k)
        b = b / w
        total = total + fac * b / coef
        k += 1.0
        fac = fac * (s + k)
        b = b / w
        k += 1.0
    # Cephes' order: s == 1 is a pole, s < 1 nan, then the poles of q and nan for q <= 0
    # with a non-integer s (an integer s keeps the series)
    total = where(q <= 0, where(q == q.floor(), math.inf,
                                where(s != s.floor(), math.nan, total)), total)
    total = where(s < 1.0, math.nan, total)
    return where(s == 1.0, math.inf, total)


@differentiable("zeta")
def zeta(input, other):  # noqa: A002
    """Hurwitz zeta(x, q) = sum_k (k + q)^-x (torch.special.zeta); x or q may be numbers."""
    x = _tensor(input, other if hasattr(other, "device") else None)
    q = _tensor(other, x)
    return _wide(_zeta64, x, q)


def _polygamma64(n, x):
    if n == 0:
        return _digamma64(x)
    sign = 1.0 if n % 2 == 1 else -1.0
    return sign * math.factorial(n) * _zeta64(x * 0 + (n + 1), x)


@differentiable("polygamma")
def polygamma(n, input):  # noqa: A002
    """The n-th derivative of digamma: (-1)^(n+1) n! zeta(n + 1, x) for n >= 1 (x > 0; nan
    elsewhere for n >= 1, as the series does not reach there)."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _wide(lambda x: _polygamma64(n, x), _tensor(input))


def mvlgamma(input, p):  # noqa: A002
    """Multivariate log-gamma of dimension p: p(p-1)/4 log(pi) + sum_j lgamma(x - j/2)."""
    if not input.dtype.is_floating_point:
        input = input.to(dt.get_default_dtype())
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if bool(((input <= (p - 1) / 2)).any()):
        raise RuntimeError(f"All elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    import tensorlib
    offsets = tensorlib.arange(p, dtype=input.dtype, device=input.device) * -0.5
    return lgamma(input.unsqueeze(-1) + offsets).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


def _gammainc_terms(a, x):
    """The iterations the series and the continued fraction need for these inputs: both
    converge in O(sqrt(max(a, x))) steps (one host read of the largest input)."""
    top = float(a.amax()) if a.numel() else 0.0
    top = max(top, float(x.amax()) if x.numel() else 0.0)
    return int(24 + 8 * math.sqrt(max(top, 0.0)))


def _gammainc64(a, x, upper):
    """Regularised incomplete gamma P(a, x) (Q = 1 - P when upper): the power series where
    x < a + 1, Lentz's continued fraction for Q elsewhere (Numerical Recipes' split)."""
    import tensorlib
    terms = _gammainc_terms(a, x)
    use_series = x < a + 1.0
    xs = where(use_series, x, 0.5 * (a + 1.0)).clamp(min=1e-300)
    term = 1.0 / a
    total = term
    for n in range(1, terms):
        term = term * xs / (a + n)
        total = total + term
    log_front = a * xs.log() - xs - tensorlib.lgamma(a)
    p_series = (log_front.exp() * total).clamp(max=1.0)
    xc = where(use_series, a + 2.0, x)
    tiny = 1e-300
    b = xc + 1.0 - a
    c = b * 0 + 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, terms):
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = where(d.abs() < tiny, tiny, d)
        c = b + an / c
        c = where(c.abs() < tiny, tiny, c)
        d = 1.0 / d
        h = h * d * c
    q_fraction = ((a * xc.log() - xc - tensorlib.lgamma(a)).exp() * h).clamp(0.0, 1.0)
    p = where(use_series, p_series, 1.0 - q_fraction)
    q = where(use_series, 1.0 - p_series, q_fraction)
    out = q if upper else p
    out = where(x == 0, 1.0 if upper else 0.0, out)
    out = where(x == math.inf, 0.0 if upper else 1.0, out)
    return where((a <= 0) | (x < 0) | (a != a) | (x != x), math.nan, out)


def gammainc(input, other):  # noqa: A002
    """The regularised lower incomplete gamma function P(a, x) (torch.special.gammainc; like
    PyTorch, not differentiable)."""
    a = _tensor(input, other if hasattr(other, "device") else None)
    x = _tensor(other, a)
    a, x = a.detach(), x.detach()
    import tensorlib
    a, x = tensorlib.broadcast_tensors(a, x)
    return _wide(lambda s, t: _gammainc64(s, t, False), a, x)


def gammaincc(input, other):  # noqa: A002
    """The regularised upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a = _tensor(input, other if hasattr(other, "device") else None)
    x = _tensor(other, a)
    a, x = a.detach(), x.detach()
    import tensorlib
    a, x = tensorlib.broadcast_tensors(a, x)
    return _wide(lambda s, t: _gammainc64(s, t, True), a, x)


# ---- error function family --------------------------------------------------------------
def _erf_guess(c):
    """Winitzki's approximation to erfc^-1(c) for c in (0, 1] (rel. error < 2e-3), with
    log(1 - y^2) written as log(c (2 - c)) so tiny c keeps its digits."""
    a = 0.147
    ln = (c * (2.0 - c)).log()
    t = 2.0 / (math.pi * a) + 0.5 * ln
    return ((t * t - ln / a).sqrt() - t).clamp(min=0.0).sqrt()


def _erfcinv_unit(c):
    """x >= 0 with erfc(x) = c for c in (0, 1], by 3 Halley steps from Winitzki's guess."""
    import tensorlib
    x = _erf_guess(c)
    for _ in range(3):
        d = (2.0 / math.sqrt(math.pi)) * (-(x * x)).exp()
        g = tensorlib.erfc(x) - c
        x = x + g / (d - x * g)
    return x


def _erfinv_small(a):
    """x with erf(x) = a for |a| < 0.5, by Halley steps (erf needs no complement here)."""
    import tensorlib
    x = _erf_guess(1.0 - a.abs()) * a.sign()
    for _ in range(3):
        d = (2.0 / math.sqrt(math.pi)) * (-(x * x)).exp()
        f = tensorlib.erf(x) - a
        x = x - f / (d + x * f)
    return x


def _erfinv64(y):
    a = y.abs()
    big = a >= 0.5
    tail = _erfcinv_unit(where(big, 1.0 - a, 0.5)) * y.sign()
    core = _erfinv_small(where(big, 0.0, y))
    out = where(big, tail, core)
    out = where(a == 1.0, y * math.inf, out)
    return where(a > 1.0, math.nan, out)


@differentiable("erfinv")
def erfinv(input):  # noqa: A002
    """The inverse of erf on (-1, 1): +-inf at +-1, nan outside."""
    return _wide(_erfinv64, _tensor(input))


def _no_half_kernel(name, input):  # noqa: A002
    """PyTorch has no float16/bfloat16 kernel for these (they compute in float64 here)."""
    dtype = getattr(input, "dtype", None)
    if dtype in (dt.float16, dt.bfloat16):
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{dtype.scalar_name}'")


def _ndtri64(p):
    low = p < 0.5
    c = where(low, 2.0 * p, 2.0 - 2.0 * p)       # erfc(x / sqrt2) = c, c in (0, 1]
    x = _erfcinv_unit(where((c > 0) & (c <= 1.0), c, 0.5)) * math.sqrt(2.0)
    out = where(low, -x, x)
    out = where(p == 0, -math.inf, where(p == 1, math.inf, out))
    return where((p < 0) | (p > 1), math.nan, out)


@differentiable("ndtri")
def ndtri(input):  # noqa: A002
    """The standard normal quantile (inverse of ndtr), through erfc^-1 so tails keep their
    digits."""
    _no_half_kernel("ndtri", input)
    return _wide(_ndtri64, _tensor(input))


def ndtr(input):  # noqa: A002
    """The standard normal CDF: erfc(-x / sqrt 2) / 2."""
    import tensorlib
    x = _tensor(input)
    if not x.dtype.is_floating_point:
        x = x.to(dt.get_default_dtype())
    return 0.5 * tensorlib.erfc(x * (-1.0 / math.sqrt(2.0)))


_ERFC_TERMS = 40


def _log_erfc_tail(z):
    """log erfc(z) for z >= 2: -z^2 - log(sqrt(pi) * continued fraction), never underflows."""
    t = z
    for k in range(_ERFC_TERMS, 0, -1):
        t = z + (k / 2) / t
    return -(z * z) - (t * math.sqrt(math.pi)).log()


def _log_ndtr64(x):
    import tensorlib
    z = -x / math.sqrt(2.0)
    far = z >= 2.0
    tail = _log_erfc_tail(where(far, z, 2.0)) - math.log(2.0)
    near = where(x > 0, (-0.5 * tensorlib.erfc(x / math.sqrt(2.0))).log1p(),
                 (0.5 * tensorlib.erfc(where(far, 0.0, z))).log())
    return where(far, tail, near)


@differentiable("log_ndtr")
def log_ndtr(input):  # noqa: A002
    """log of the standard normal CDF, accurate far into the left tail."""
    _no_half_kernel("log_ndtr", input)
    return _wide(_log_ndtr64, _tensor(input))


# ---- elementary combinations ----------------------------------------------------------------
@differentiable("xlogy")
def xlogy(input, other):  # noqa: A002
    """x * log(y), 0 where x == 0 (unless y is nan); x or y may be numbers (a number does
    not widen the tensor's dtype)."""
    x = _tensor(input, other if hasattr(other, "device") else None)
    y = _tensor(other, x)
    out = _wide(lambda a, b: where((a == 0) & (b == b), 0.0, a * b.log()), x, y)
    from tensorlib._C.promotion import result_type
    dtype = result_type((input, other))
    return out if not dtype.is_floating_point or out.dtype is dtype else out.to(dtype)


@differentiable("xlog1py")
def xlog1py(input, other):  # noqa: A002
    """x * log1p(y), 0 where x == 0 (unless y is nan)."""
    x = _tensor(input, other if hasattr(other, "device") else None)
    y = _tensor(other, x)
    return _wide(lambda a, b: where((a == 0) & (b == b), 0.0, a * b.log1p()), x, y)


@differentiable("entr")
def entr(input):  # noqa: A002
    """-x log x for x > 0, 0 at 0, -inf below 0."""
    return _wide(lambda x: where(x > 0, -x * where(x > 0, x, 1.0).log(),
                                 where(x == 0, 0.0, -math.inf)), _tensor(input))


@differentiable("sinc")
def sinc(input):  # noqa: A002
    """sin(pi x) / (pi x), 1 at 0 (the normalised sinc)."""
    def f(x):
        px = math.pi * where(x == 0, 1.0, x)
        return where(x == 0, 1.0, px.sin() / px)
    return _wide(f, _tensor(input))


@differentiable("logit")
def logit(input, eps=None):  # noqa: A002
    """log(p / (1 - p)), p clamped to [eps, 1 - eps] when eps is given: clamped in the
    result dtype, as PyTorch's (1 - eps rounds there), then computed wide."""
    p = _tensor(input)
    if eps is not None:
        if not p.dtype.is_floating_point:
            p = p.to(dt.get_default_dtype())
        p = p.clamp(eps, 1.0 - eps)
    return _wide(lambda p: (p / (1.0 - p)).log(), p)


def expit(input):  # noqa: A002
    import tensorlib
    return tensorlib.sigmoid(input)


# ---- Bessel functions -----------------------------------------------------------------------
_SERIES_TERMS = 48         # (x^2/4)^k / (k! (k+nu)!) below 1e-17 of the sum for |x| <= 20
_I_SWITCH = 20.0
_J_SWITCH = 12.0
_J_SERIES_TERMS = 34
_ASYMPTOTIC_TERMS = 18


def _power_series(x, nu, alternating, terms):
    """sum_k (+-x^2/4)^k / (k! (k + nu)!) for nu in {0, 1}, by the term recurrence."""
    q = x * x * (-0.25 if alternating else 0.25)
    term = x * 0 + (1.0 if nu == 0 else 1.0)
    total = term
    for k in range(1, terms):
        term = term * q / (k * (k + nu))
        total = total + term
    return total


def _hankel_coefficients(nu, n):
    """a_k(nu) = prod_{j<=k} (4nu^2 - (2j-1)^2) / (k! 8^k), the asymptotic series' terms."""
    mu = 4.0 * nu * nu
    out, a = [], 1.0
    for k in range(1, n + 1):
        a = a * (mu - (2 * k - 1) ** 2) / (k * 8.0)
        out.append(a)
    return out


def _ive_asymptotic(x, nu):
    """e^-x I_nu(x) ~ 1/sqrt(2 pi x) sum_k (-1)^k a_k(nu) / x^k, for x >= 20."""
    total, power = 1.0, 1.0
    for k, a in enumerate(_hankel_coefficients(nu, _ASYMPTOTIC_TERMS), start=1):
        power = power / x
        total = total + ((-1) ** k * a) * power
    return total / (2 * math.pi * x).sqrt()


def _ive64(x, nu):
    """e^-|x| I_nu(x) for nu in {0, 1} (I_1 odd, I_0 even)."""
    ax = x.abs()
    far = ax >= _I_SWITCH
    near_x = where(far, 0.0, ax)
    near = _power_series(near_x, nu, False, _SERIES_TERMS) * (-near_x).exp()
    if nu == 1:
        near = near * near_x * 0.5
    out = where(far, _ive_asymptotic(where(far, ax, _I_SWITCH), nu), near)
    return out * x.sign() if nu == 1 else out


@differentiable("i0")
def i0(input):  # noqa: A002
    """Modified Bessel function of the first kind, order 0."""
    return _wide(lambda x: _ive64(x, 0) * x.abs().exp(), _tensor(input))


@differentiable("i0e")
def i0e(input):  # noqa: A002
    """exp(-|x|) i0(x), which does not overflow."""
    return _wide(lambda x: _ive64(x, 0), _tensor(input))


@differentiable("i1")
def i1(input):  # noqa: A002
    """Modified Bessel function of the first kind, order 1."""
    return _wide(lambda x: _ive64(x, 1) * x.abs().exp(), _tensor(input))


@differentiable("i1e")
def i1e(input):  # noqa: A002
    """exp(-|x|) i1(x)."""
    return _wide(lambda x: _ive64(x, 1), _tensor(input))


def _j_asymptotic(x, nu):
    """J_nu(x) ~ sqrt(2/(pi x)) (P cos(w) - Q sin(w)), w = x - (2 nu + 1) pi / 4, x >= 12."""
    coeffs = _hankel_coefficients(nu, _ASYMPTOTIC_TERMS)
    p, q, power = 1.0, 0.0, 1.0
    for k, a in enumerate(coeffs, start=1):
        power = power / x
        if k % 2 == 0:
            p = p + ((-1) ** (k // 2) * a) * power
        else:
            q = q + ((-1) ** (k // 2) * a) * power
    w = x - (2 * nu + 1) * math.pi / 4
    return (2.0 / (math.pi * x)).sqrt() * (p * w.cos() - q * w.sin())


def _j64(x, nu):
    ax = x.abs()
    far = ax >= _J_SWITCH
    near_x = where(far, 0.0, ax)
    near = _power_series(near_x, nu, True, _J_SERIES_TERMS)
    if nu == 1:
        near = near * near_x * 0.5
    out = where(far, _j_asymptotic(where(far, ax, _J_SWITCH), nu), near)
    return out * x.sign() if nu == 1 else out


@differentiable("bessel_j0")
def bessel_j0(input):  # noqa: A002
    """Bessel function of the first kind, order 0 (series below |x| = 12, Hankel's
    asymptotic expansion above: ~1e-11 absolute near the switch in float64)."""
    _no_half_kernel("bessel_j0", input)
    return _wide(lambda x: _j64(x, 0), _tensor(input))


def spherical_bessel_j0(input):  # noqa: A002
    """j0(x) = sin(x) / x (PyTorch's Taylor polynomial below |x| = 0.5, 0 at +-inf). As in
    PyTorch it has no derivative: the result records no graph."""
    import tensorlib
    _no_half_kernel("spherical_bessel_j0", input)

    def j0(x):
        x2 = x * x
        series = 1 + x2 * (-1 / 6 + x2 * (1 / 120 + x2 * (-1 / 5040 + x2 * (
            1 / 362880 + x2 * (-1 / 39916800 + x2 * (1 / 6227020800))))))
        small = x.abs() < 0.5
        far = tensorlib.where(small, tensorlib.ones_like(x), x)
        out = tensorlib.where(small, series, tensorlib.sin(far) / far)
        return tensorlib.where(tensorlib.isinf(x), tensorlib.zeros_like(x), out)
    with tensorlib.no_grad():
        return _wide(j0, _tensor(input))


@differentiable("bessel_j1")
def bessel_j1(input):  # noqa: A002
    """Bessel function of the first kind, order 1."""
    _no_half_kernel("bessel_j1", input)
    return _wide(lambda x: _j64(x, 1), _tensor(input))


__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma", "erfinv", "xlogy", "i0", "sinc",
           "logit"]
TENSOR_METHODS = {"lgamma": lgamma, "digamma": digamma, "erfinv": erfinv, "i0": i0,
                  "sinc": sinc, "logit": logit, "xlogy": xlogy, "mvlgamma": mvlgamma,
                  "polygamma": lambda self, n: polygamma(n, self)}
TENSOR_METHODS["xlogy_"] = inplace_composite(xlogy)
