"""Samplers written in tensor ops for the distributions that have no inverse-CDF draw:
Gamma (Marsaglia-Tsang), Poisson (inversion for small rates, Hormann's PTRS above), and the
implicit reparameterisation gradient of the standard Gamma. Each rejection sampler runs a
fixed number of vectorised rounds (so every device draws the same numbers from one seed);
an element not accepted after all rounds (probability below 1e-15) takes the documented
fallback named in its function. In pytorch stream mode (ops/random_torch_stream.py) the Gamma
and Poisson draws are PyTorch's own samplers instead (its _standard_gamma, _sample_dirichlet
and poisson), so they equal PyTorch's after the same seed."""
import math

import tensorlib
from tensorlib.distributions.utils import finfo
from tensorlib.ops import random_torch_stream as _ts
from tensorlib.ops.random import _mersenne

_ROUNDS = 12
_POISSON_INVERSION_BELOW = 10.0
_POISSON_INVERSION_TERMS = 48
_SERIES_BELOW = 40.0


def sample_standard_gamma(alpha, shape, generator=None):
    """Gamma(alpha, 1) draws of `shape` (alpha broadcast to it) from `generator` (default: the
    global one). Marsaglia-Tsang (2000): acceptance >= 0.95 per round, 12 rounds; alpha < 1
    draws Gamma(alpha + 1) times U^(1/alpha). Fallback after the rounds: the last candidate
    d (1 + c z)^3 with 1 + c z clamped positive. A NaN draw (alpha NaN or below -1) is the
    dtype's tiny, as PyTorch's max(tiny, draw) makes it."""
    alpha = alpha.detach().expand(shape)
    dtype, device = alpha.dtype, alpha.device
    mt = _mersenne(generator, device)
    if mt is not None:
        return _ts.standard_gamma_values(alpha, mt)
    boost = alpha < 1
    a = tensorlib.where(boost, alpha + 1, alpha)
    d = a - 1.0 / 3.0
    c = (9.0 * d).rsqrt()
    result = tensorlib.zeros(shape, dtype=dtype, device=device)
    done = tensorlib.zeros(shape, dtype=tensorlib.bool, device=device)
    for _ in range(_ROUNDS):
        z = tensorlib.randn(shape, dtype=dtype, device=device, generator=generator)
        u = tensorlib.rand(shape, dtype=dtype, device=device, generator=generator)
        base = 1.0 + c * z
        v = base * base * base
        safe_v = tensorlib.where(v > 0, v, 1.0)
        ok = (v > 0) & (u.log() < 0.5 * z * z + d - d * safe_v + d * safe_v.log())
        result = tensorlib.where(ok & ~done, d * safe_v, result)
        done = done | ok
    fallback = d * base.clamp(min=1e-3) ** 3
    result = tensorlib.where(done, result, fallback)
    u = tensorlib.rand(shape, dtype=dtype, device=device, generator=generator)
    tiny = float(finfo(dtype).tiny)
    scale = tensorlib.where(boost, u.clamp(min=tiny) ** (1.0 / alpha), 1.0)
    return (result * scale).nan_to_num(nan=tiny, posinf=float("inf")).clamp(min=tiny)


def standard_gamma_grad(alpha, x):
    """dx/dalpha of a Gamma(alpha, 1) draw x at fixed CDF value (implicit reparameterisation:
    -(dP(alpha, x)/dalpha) / p(x; alpha)). Exact series for alpha < 40:
    dP/da = sum_n e^-x x^(a+n) / Gamma(a+n+1) (log x - psi(a+n+1)), as many terms as the
    largest x needs; above, the derivative of the Wilson-Hilferty quantile
    x = a (1 - 1/(9a) + z / (3 sqrt a))^3 at fixed z (relative error O(1/a^2))."""
    out_dtype = x.dtype
    try:
        a, x = alpha.to(tensorlib.float64), x.to(tensorlib.float64)
    except TypeError:
        a = alpha
    a, x = tensorlib.broadcast_tensors(a, x)
    series = a < _SERIES_BELOW
    xs = tensorlib.where(series, x, 1.0)
    as_ = tensorlib.where(series, a, 1.0)
    log_x = xs.log()
    term = (as_ * log_x - xs - tensorlib.lgamma(as_ + 1)).exp()
    psi = tensorlib.digamma(as_ + 1)
    total = term * (log_x - psi)
    x_max = float(xs.max()) if xs.numel() else 0.0
    for n in range(1, int(x_max + 12 * math.sqrt(x_max) + 30)):
        term = term * xs / (as_ + n)
        psi = psi + 1.0 / (as_ + n)
        total = total + term * (log_x - psi)
    density = ((as_ - 1) * log_x - xs - tensorlib.lgamma(as_)).exp()
    exact = -total / density
    aw = tensorlib.where(series, 50.0, a)
    w = (x / aw) ** (1.0 / 3.0)
    z = (w - 1 + 1 / (9 * aw)) * (9 * aw).sqrt()
    dw = 1 / (9 * aw * aw) - z / (6 * aw ** 1.5)
    approx = w ** 3 + 3 * aw * w * w * dw
    return tensorlib.where(series, exact, approx).to(out_dtype)


class StandardGamma(tensorlib.autograd.Function):
    """Gamma(alpha, 1) draws whose gradient in alpha is the implicit one."""

    @staticmethod
    def forward(ctx, alpha, shape, generator=None):
        x = sample_standard_gamma(alpha, shape, generator)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        g = grad * standard_gamma_grad(alpha.detach().expand(x.shape), x)
        return g.sum_to_size(alpha.shape), None, None


class _GivenGamma(tensorlib.autograd.Function):
    """Gamma(alpha, 1) draws x already made, as a function of alpha (the implicit gradient)."""

    @staticmethod
    def forward(ctx, alpha, x):
        ctx.save_for_backward(alpha, x)
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        g = grad * standard_gamma_grad(alpha.detach().expand(x.shape), x)
        return g.sum_to_size(alpha.shape), None


def sample_dirichlet(concentration, shape):
    """PyTorch's _sample_dirichlet in pytorch stream mode: Gamma draws in float64 normalised
    there, rounded to the dtype and kept in [tiny, the float below 1]; differentiable through
    the implicit Gamma gradient. None in Philox mode (the caller composes the draw)."""
    mt = _mersenne(None, concentration.device)
    if mt is None:
        return None
    alpha = concentration.detach().expand(shape)
    gammas = _ts.standard_gamma_values(alpha, mt, tensorlib.float64)
    exact = (gammas / gammas.sum(-1, keepdim=True)).to(concentration.dtype)
    below_one = float(tensorlib.nextafter(tensorlib.ones((), dtype=exact.dtype),
                                          tensorlib.zeros((), dtype=exact.dtype)))
    exact = exact.clamp(min=float(finfo(exact.dtype).tiny), max=below_one)
    if not (concentration.requires_grad and tensorlib.is_grad_enabled()):
        return exact
    g = _GivenGamma.apply(concentration, gammas.to(concentration.dtype))
    smooth = g / g.sum(-1, keepdim=True)
    return smooth + (exact - smooth).detach()


def standard_gamma(alpha, shape, generator=None):
    if alpha.requires_grad and tensorlib.is_grad_enabled():
        return StandardGamma.apply(alpha, shape, generator)
    return sample_standard_gamma(alpha, shape, generator)


def sample_poisson(rate, shape, generator=None):
    """Poisson(rate) draws: inversion over 48 terms of the CDF for rate < 10 (the tail beyond
    is below 1e-15), Hormann's transformed rejection (PTRS, 1993) for rate >= 10 in 12 rounds;
    fallback after the rounds: the rounded normal approximation, clamped at 0. `generator`:
    the stream to draw from (default: the global one)."""
    rate = rate.detach().expand(shape)
    dtype, device = rate.dtype, rate.device
    mt = _mersenne(generator, device)
    if mt is not None:
        return _ts.poisson_values(rate, mt)
    small = rate < _POISSON_INVERSION_BELOW
    lam_s = tensorlib.where(small, rate, 1.0)
    u = tensorlib.rand(shape, dtype=dtype, device=device, generator=generator)
    p = (-lam_s).exp()
    cdf = p
    count = tensorlib.zeros(shape, dtype=dtype, device=device)
    for k in range(1, _POISSON_INVERSION_TERMS):
        count = count + (u > cdf).to(dtype)
        p = p * lam_s / k
        cdf = cdf + p
    lam = tensorlib.where(small, 10.0, rate)
    smu = lam.sqrt()
    b = 0.931 + 2.53 * smu
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)
    big = tensorlib.zeros(shape, dtype=dtype, device=device)
    done = tensorlib.zeros(shape, dtype=tensorlib.bool, device=device)
    for _ in range(_ROUNDS):
        uu = tensorlib.rand(shape, dtype=dtype, device=device, generator=generator) - 0.5
        v = tensorlib.rand(shape, dtype=dtype, device=device, generator=generator)
        us = 0.5 - uu.abs()
        k = ((2 * a / us + b) * uu + lam + 0.43).floor()
        quick = (us >= 0.07) & (v <= vr)
        reject = (k < 0) | ((us < 0.013) & (v > us))
        kk = k.clamp(min=0)
        test = v.log() + inv_alpha.log() - (a / (us * us) + b).log() <= \
            -lam + kk * lam.log() - tensorlib.lgamma(kk + 1)
        ok = quick | (~reject & test)
        big = tensorlib.where(ok & ~done, kk, big)
        done = done | ok
    z = tensorlib.randn(shape, dtype=dtype, device=device, generator=generator)
    big = tensorlib.where(done, big, (lam + smu * z).round().clamp(min=0))
    out = tensorlib.where(small, count, big)
    return tensorlib.where(rate == 0, 0.0, out)
