"""`torch.signal.windows`: SciPy-style windows of length M. `sym=True` gives a symmetric
window (filter design), `sym=False` the periodic one for an M-point FFT. Each samples its
curve on a `linspace` in the requested dtype and device, so the values round as PyTorch's."""
import math
from collections.abc import Iterable

import tensorlib._C.dtypes as dt

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout):
    """PyTorch's argument checks (ValueError), and the dtype a None asks for."""
    from tensorlib._layout import strided
    dtype = dt.get_default_dtype() if dtype is None else dtype
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (dt.float32, dt.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _short(M, dtype, device, requires_grad):
    """The windows of length 0 (empty) and 1 (a single one); None for longer ones."""
    from tensorlib.ops.creation import empty, ones
    if M == 0:
        return empty((0,), dtype=dtype, device=device).requires_grad_(requires_grad)
    if M == 1:
        return ones((1,), dtype=dtype, device=device).requires_grad_(requires_grad)
    return None


def _points(start, step, M, dtype, device, requires_grad):
    from tensorlib.ops.creation import linspace
    return linspace(start, start + (M - 1) * step, M, dtype=dtype, device=device,
                    requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None,
                requires_grad=False):
    """w_n = exp(-|n - center| / tau)."""
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _short(M, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _points(-center / tau, 1 / tau, M, dtype, device, requires_grad)
    return (-k.abs()).exp()


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The sine window: w_n = sin(pi (n + 1/2) / M)."""
    dtype = _checks("cosine", M, dtype, layout)
    if M == 0:
        return _short(M, dtype, device, requires_grad)
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return _points(0.5 * step, step, M, dtype, device, requires_grad).sin()


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None,
             requires_grad=False):
    """w_n = exp(-(n - center)^2 / (2 std^2))."""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _short(M, dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    scale = 1 / (std * math.sqrt(2))
    k = _points(start * scale, scale, M, dtype, device, requires_grad)
    return (-(k * k)).exp()


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None,
           requires_grad=False):
    """w_n = I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)."""
    from tensorlib.ops.creation import tensor
    from tensorlib.ops.special import i0
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    short = _short(M, dtype, device, requires_grad)
    if short is not None:
        return short
    b = tensor(float(beta), dtype=dtype, device=device)
    step = 2.0 * beta / (M if not sym else M - 1)
    k = _points(-beta, step, M, dtype, device, requires_grad)
    k = k.clamp(max=beta)                   # the last point stays inside [-beta, beta]
    return i0((b * b - k * k).sqrt()) / i0(b)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The triangle w_n = 1 - |2n / (M - 1) - 1|."""
    dtype = _checks("bartlett", M, dtype, layout)
    short = _short(M, dtype, device, requires_grad)
    if short is not None:
        return short
    k = _points(-1.0, 2 / (M if not sym else M - 1), M, dtype, device, requires_grad)
    return 1 - k.abs()


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """w_n = sum_i (-1)^i a_i cos(2 pi i n / (M - 1))."""
    from tensorlib.ops.creation import arange, tensor
    dtype = _checks("general_cosine", M, dtype, layout)
    short = _short(M, dtype, device, requires_grad)
    if short is not None:
        return short
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    a = list(a)
    if not a:
        raise ValueError("Coefficients cannot be empty")
    k = _points(0.0, 2 * math.pi / (M if not sym else M - 1), M, dtype, device, requires_grad)
    signed = tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device)
    i = arange(len(a), dtype=dtype, device=device)
    return (signed.unsqueeze(-1) * (i.unsqueeze(-1) * k).cos()).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None,
                    requires_grad=False):
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
