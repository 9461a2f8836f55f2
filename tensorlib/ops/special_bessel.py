"""torch.special's second-kind Bessel family (bessel_y0/y1, modified_bessel_k0/k1 and their
scaled forms), airy_ai and erfcx, written in tensorlib ops so they run on every backend.

As in ops/special.py each is a fixed sequence of elementwise ops computed in float64 and
cast back: power series near 0, Hankel's asymptotic series far out, and in between (for the
K family and Ai on x > 2) the trapezoid rule on e^x K_nu(x) = int_0^inf e^{-x(cosh t - 1)}
cosh(nu t) dt, which converges geometrically for this analytic, double-exponentially decaying
integrand. Float64 accuracy: ~1e-14 relative for K and erfcx, ~1e-11 absolute for Y near
x = 12 and Ai on [-8, -2] (series cancellation). Only erfcx has a derivative, as in PyTorch."""
import math

from tensorlib.ops._opdef import differentiable
from tensorlib.ops.pointwise import where
from tensorlib.ops.special import (_hankel_coefficients, _j64, _no_half_kernel, _power_series,
                                   _tensor, _wide)

_EULER = 0.57721566490153286061
_SERIES_TERMS = 34
_Y_SWITCH = 12.0
_K_SERIES_MAX = 2.0
_K_ASYMPTOTIC_MIN = 25.0
_HANKEL_TERMS = 24
_K_HANKEL_TERMS = 30
_TRAPEZOID_STEP = 0.1
_TRAPEZOID_NODES = 43           # t up to 4.2: e^{-x (cosh t - 1)} < 1e-18 for x >= 1.8
_AIRY_SERIES_MIN = -8.0
_AIRY_SERIES_MAX = 2.0
_AIRY_ZERO = 103.892            # Ai(x) underflows past here (PyTorch returns 0)
_AI0 = 0.355028053887817239260  # Ai(0)
_AIP0 = 0.258819403792806798405  # -Ai'(0)


def _no_graph(name, fn, input):  # noqa: A002
    """PyTorch gives these no derivative: the result records no graph."""
    import tensorlib
    _no_half_kernel(name, input)
    with tensorlib.no_grad():
        return _wide(fn, _tensor(input))


def _harmonic_series(x, nu, alternating):
    """sum_k c_k (+-x^2/4)^k / (k! (k+nu)!) with c_k = H_k (nu = 0) or H_k + H_{k+1}
    (nu = 1): the log-free part of the Y (alternating) and K series."""
    q = x * x * (-0.25 if alternating else 0.25)
    term = x * 0 + 1.0
    total = x * 0 + (0.0 if nu == 0 else 1.0)
    harmonic = 0.0
    for k in range(1, _SERIES_TERMS):
        term = term * q / (k * (k + nu))
        harmonic += 1.0 / k
        total = total + (harmonic if nu == 0 else 2 * harmonic + 1.0 / (k + 1)) * term
    return total


def _hankel_pq(x, nu, terms):
    """Hankel's P and Q series in 1/x (J and Y far from 0)."""
    p, q, power = 1.0, 0.0, 1.0
    for k, a in enumerate(_hankel_coefficients(nu, terms), start=1):
        power = power / x
        if k % 2 == 0:
            p = p + ((-1) ** (k // 2) * a) * power
        else:
            q = q + ((-1) ** (k // 2) * a) * power
    return p, q


def _y64(x, nu):
    """Y_nu(x), nu in {0, 1}: nan for x < 0 and at +inf (as PyTorch), -inf at 0."""
    far = x >= _Y_SWITCH
    near_x = where(far | (x <= 0), 1.0, x)
    log_term = (2 / math.pi) * ((near_x * 0.5).log() + _EULER)
    if nu == 0:
        near = log_term * _j64(near_x, 0) - (2 / math.pi) * _harmonic_series(near_x, 0, True)
    else:
        near = (log_term * _j64(near_x, 1) - 2 / (math.pi * near_x)
                - near_x / (2 * math.pi) * _harmonic_series(near_x, 1, True))
    w_x = where(far, x, _Y_SWITCH)
    p, q = _hankel_pq(w_x, nu, _HANKEL_TERMS)
    w = w_x - (2 * nu + 1) * math.pi / 4
    out = where(far, (2.0 / (math.pi * w_x)).sqrt() * (p * w.sin() + q * w.cos()), near)
    out = where(x == 0, -math.inf, out)
    return where((x < 0) | (x == math.inf), math.nan, out)


def _kve_trapezoid(x, nu):
    """e^x K_nu(x) by the trapezoid rule on its cosh integral (x >= ~1.8)."""
    total = x * 0
    for j in range(_TRAPEZOID_NODES):
        t = j * _TRAPEZOID_STEP
        weight = _TRAPEZOID_STEP * math.cosh(nu * t) * (0.5 if j == 0 else 1.0)
        total = total + weight * (x * (-2.0 * math.sinh(t / 2) ** 2)).exp()
    return total


def _kve_asymptotic(x, nu):
    """e^x K_nu(x) ~ sqrt(pi / 2x) sum_k a_k(nu) / x^k (x >= 25)."""
    total, power = 1.0, 1.0
    for a in _hankel_coefficients(nu, _K_HANKEL_TERMS):
        power = power / x
        total = total + a * power
    return total * (math.pi / (2 * x)).sqrt()


def _kve_far(x, nu):
    """e^x K_nu(x) for x > 2 (any real order nu)."""
    asym = x >= _K_ASYMPTOTIC_MIN
    return where(asym, _kve_asymptotic(where(asym, x, _K_ASYMPTOTIC_MIN), nu),
                 _kve_trapezoid(where(asym, _K_ASYMPTOTIC_MIN, x), nu))


def _k64(x, nu, scaled):
    """K_nu(x) (or e^x K_nu(x)), nu in {0, 1}: nan for x < 0, inf at 0."""
    far = x > _K_SERIES_MAX
    near_x = where(far | (x <= 0), 1.0, x)
    log_term = (near_x * 0.5).log() + _EULER
    i_series = _power_series(near_x, nu, False, _SERIES_TERMS)
    if nu == 0:
        near = -log_term * i_series + _harmonic_series(near_x, 0, False)
    else:
        near = (1.0 / near_x + log_term * i_series * near_x * 0.5
                - near_x * 0.25 * _harmonic_series(near_x, 1, False))
    far_x = where(far, x, 2 * _K_SERIES_MAX)
    far_value = _kve_far(far_x, nu)
    if scaled:
        near = near * near_x.exp()
    else:
        far_value = far_value * (-far_x).exp()
    out = where(far, far_value, near)
    out = where(x == 0, math.inf, where(x == math.inf, 0.0, out))
    return where(x < 0, math.nan, out)


def _airy_series(x):
    """Ai's Maclaurin series, Ai(0) f(x) - (-Ai'(0)) g(x) (for -8 <= x <= 2)."""
    cube = x * x * x
    f_term = x * 0 + 1.0
    g_term = x
    f, g = f_term, g_term
    for k in range(1, 32):
        f_term = f_term * cube / ((3 * k - 1) * (3 * k))
        g_term = g_term * cube / ((3 * k) * (3 * k + 1))
        f, g = f + f_term, g + g_term
    return _AI0 * f - _AIP0 * g


def _airy_u(n):
    """u_k of Ai's asymptotic series: u_k = u_{k-1} (6k-5)(6k-3)(6k-1) / (216 k (2k-1))."""
    out, u = [1.0], 1.0
    for k in range(1, n):
        u = u * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / (216.0 * k * (2 * k - 1))
        out.append(u)
    return out


def _airy_oscillating(x):
    """Ai(x) for x < -8: |x|^-1/4 / sqrt(pi) (sin(z + pi/4) P - cos(z + pi/4) Q)."""
    ax = -x
    zeta = (2.0 / 3.0) * ax * ax.sqrt()
    p, q, power = 1.0, 0.0, 1.0
    for k, u in enumerate(_airy_u(32)[1:], start=1):
        power = power / zeta
        if k % 2 == 0:
            p = p + ((-1) ** (k // 2) * u) * power
        else:
            q = q + ((-1) ** (k // 2) * u) * power
    phase = zeta + math.pi / 4
    return (p * phase.sin() - q * phase.cos()) / (math.sqrt(math.pi) * ax.sqrt().sqrt())


def _airy64(x):
    """Ai(x): the series on [-8, 2], the asymptotic series below, K_1/3 above."""
    low = x < _AIRY_SERIES_MIN
    high = x > _AIRY_SERIES_MAX
    series = _airy_series(where(low | high, 0.0, x))
    osc = _airy_oscillating(where(low, x, 2 * _AIRY_SERIES_MIN))
    high_x = where(high, x, 2 * _AIRY_SERIES_MAX)
    zeta = (2.0 / 3.0) * high_x * high_x.sqrt()
    decay = (high_x / 3.0).sqrt() / math.pi * _kve_far(zeta, 1.0 / 3.0) * (-zeta).exp()
    out = where(low, osc, where(high, decay, series))
    out = where(x > _AIRY_ZERO, 0.0, out)
    return where(x.isinf() | x.isnan(), math.nan, out)


_ERFCX_ASYMPTOTIC_MIN = 25.0


def _erfcx64(x):
    """exp(x^2) erfc(x) directly below x = 25 (erfc keeps its relative accuracy there), the
    asymptotic series 1/(x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k above."""
    import tensorlib
    far = x >= _ERFCX_ASYMPTOTIC_MIN
    near_x = where(far, 0.0, x)
    near = (near_x * near_x).exp() * tensorlib.erfc(near_x)
    far_x = where(far, x, _ERFCX_ASYMPTOTIC_MIN)
    inv = 1.0 / (2.0 * far_x * far_x)
    total, term = 1.0, 1.0
    for k in range(1, 10):
        term = term * (-(2 * k - 1)) * inv
        total = total + term
    return where(far, total / (far_x * math.sqrt(math.pi)), near)


@differentiable("special_erfcx")
def erfcx(input):  # noqa: A002
    """The scaled complementary error function exp(x^2) erfc(x), without its overflow."""
    _no_half_kernel("erfcx", input)
    return _wide(_erfcx64, _tensor(input))


def bessel_y0(input):  # noqa: A002
    """Bessel function of the second kind, order 0 (no derivative, as PyTorch's)."""
    return _no_graph("bessel_y0", lambda x: _y64(x, 0), input)


def bessel_y1(input):  # noqa: A002
    """Bessel function of the second kind, order 1 (no derivative, as PyTorch's)."""
    return _no_graph("bessel_y1", lambda x: _y64(x, 1), input)


def modified_bessel_k0(input):  # noqa: A002
    """Modified Bessel function of the second kind, order 0."""
    return _no_graph("modified_bessel_k0", lambda x: _k64(x, 0, False), input)


def modified_bessel_k1(input):  # noqa: A002
    """Modified Bessel function of the second kind, order 1."""
    return _no_graph("modified_bessel_k1", lambda x: _k64(x, 1, False), input)


def scaled_modified_bessel_k0(input):  # noqa: A002
    """exp(x) K_0(x), which does not underflow."""
    return _no_graph("scaled_modified_bessel_k0", lambda x: _k64(x, 0, True), input)


def scaled_modified_bessel_k1(input):  # noqa: A002
    """exp(x) K_1(x)."""
    return _no_graph("scaled_modified_bessel_k1", lambda x: _k64(x, 1, True), input)


def airy_ai(input):  # noqa: A002
    """The Airy function Ai(x) (no derivative, as PyTorch's)."""
    return _no_graph("airy_ai", _airy64, input)
