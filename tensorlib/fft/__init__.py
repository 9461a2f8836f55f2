"""tensorlib.fft: PyTorch's discrete Fourier transform namespace.

The sample-frequency helpers (fftfreq, rfftfreq) and the shifts (fftshift, ifftshift) are
real-valued and work on every device (the shifts are `roll`, so they are differentiable).
The transforms themselves produce or consume complex tensors, and tensorlib has no complex
dtypes yet: they raise NotImplementedError saying so (issue #15)."""
import tensorlib
from tensorlib._C.dtypes import get_default_dtype

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _frequencies(count, n, d, dtype, device, requires_grad, negative):
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise RuntimeError(f"{'fftfreq' if negative else 'rfftfreq'}: n must be a "
                           f"non-negative integer, got {n}")
    dtype = dtype if dtype is not None else get_default_dtype()
    if not dtype.is_floating_point:
        raise RuntimeError(f"{'fftfreq' if negative else 'rfftfreq'} expects a floating point "
                           f"output dtype, but got dtype={dtype}")
    k = tensorlib.arange(count, dtype=tensorlib.float64, device=device)
    if negative:
        k = tensorlib.where(k >= (n + 1) // 2, k - n, k)
    out = (k / (d * n)).to(dtype)                      # n = 0: 0 / 0, nan as in PyTorch
    return out.requires_grad_(requires_grad) if requires_grad else out


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point FFT with spacing d: [0, 1, ..., -2, -1] / (d n)."""
    return _frequencies(n, n, d, dtype, device, requires_grad, negative=True)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The non-negative sample frequencies of rfft: [0, 1, ..., n // 2] / (d n)."""
    return _frequencies(n // 2 + 1 if n >= 0 else n, n, d, dtype, device, requires_grad,
                        negative=False)


def _shift(input, dim, inverse):  # noqa: A002
    dims = list(range(input.dim())) if dim is None else \
        ([dim] if isinstance(dim, int) else list(dim))
    if not dims:
        return input.clone()
    sizes = [input.shape[d] for d in dims]
    shifts = [-(s // 2) if inverse else s // 2 for s in sizes]
    return tensorlib.roll(input, shifts, dims)


def fftshift(input, dim=None):  # noqa: A002
    """Move the zero-frequency term to the centre along dim (all dims by default)."""
    return _shift(input, dim, inverse=False)


def ifftshift(input, dim=None):  # noqa: A002
    """The inverse of fftshift."""
    return _shift(input, dim, inverse=True)


def _needs_complex(name):
    def transform(input, *args, **kwargs):  # noqa: A002
        raise NotImplementedError(f"tensorlib.fft.{name} is not available: it needs complex "
                                  f"dtypes (complex64/complex128), which tensorlib does not "
                                  f"have yet (issue #15)")
    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = f"torch.fft.{name}; needs complex dtypes (not available yet)."
    return transform


fft, ifft, rfft, irfft, hfft, ihfft = (_needs_complex(n) for n in
                                       ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"))
fft2, ifft2, rfft2, irfft2 = (_needs_complex(n) for n in ("fft2", "ifft2", "rfft2", "irfft2"))
fftn, ifftn, rfftn, irfftn = (_needs_complex(n) for n in ("fftn", "ifftn", "rfftn", "irfftn"))
