"""The spectral window factories (torch.hann_window, hamming, blackman, bartlett, kaiser):
cosine sums over `arange` in the requested dtype on the requested device. periodic=True
gives the first N points of the N+1-point symmetric window, as PyTorch (and scipy's
sym=False) does, so the window suits an N-point FFT."""
import math

import tensorlib._C.dtypes as dt

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]
TENSOR_METHODS = {}


def _window(name, window_length, periodic, dtype, layout, device, requires_grad, body):
    from tensorlib.ops.creation import arange, ones
    if not isinstance(window_length, int) or isinstance(window_length, bool):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    dtype = dt.get_default_dtype() if dtype is None else dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if layout is not None and str(layout) not in ("torch.strided", "tensorlib.strided"):
        raise RuntimeError(f"{name} is not implemented for layout {layout}")
    if window_length <= 1:
        out = ones(window_length, dtype=dtype, device=device)
    else:
        n = window_length + 1 if periodic else window_length
        out = body(arange(n, dtype=dtype, device=device), n)
        if periodic:
            out = out[:-1].contiguous()
    return out.requires_grad_(requires_grad)


def _cosine_sum(coefficients):
    """w[k] = sum_j (-1)^j a_j cos(2 pi j k / (N - 1))."""
    def body(k, n):
        out = None
        for j, a in enumerate(coefficients):
            term = (k * (2 * math.pi * j / (n - 1))).cos() * ((-1) ** j * a)
            out = term if out is None else out + term
        return out
    return body


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    return _window("hann_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _cosine_sum((0.5, 0.5)))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False):
    return _window("hamming_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _cosine_sum((alpha, beta)))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    return _window("blackman_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _cosine_sum((0.42, 0.5, 0.08)))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    def body(k, n):
        return 1 - (k * (2.0 / (n - 1)) - 1).abs()
    return _window("bartlett_window", window_length, periodic, dtype, layout, device,
                   requires_grad, body)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    def body(k, n):
        from tensorlib.ops.special import i0
        alpha = (n - 1) / 2.0
        ratio = (k - alpha) / alpha
        return i0((1 - ratio * ratio).clamp(min=0).sqrt() * beta) / i0(k.new_full((), beta))
    return _window("kaiser_window", window_length, periodic, dtype, layout, device,
                   requires_grad, body)
