"""tensorlib.fft: PyTorch's discrete Fourier transform namespace.

The sample-frequency helpers (fftfreq, rfftfreq) and the shifts (fftshift, ifftshift) work
on every device (the shifts are `roll`, so they are differentiable). The transforms run
numpy.fft on a host copy of the input (PyTorch's names, `n`/`s`, `dim`, `norm`, result
dtypes); complex results are CPU tensors, since only the CPU has complex dtypes so far, and
real results (irfft, irfftn, hfft) go back to the input's device. They are not
differentiable yet: complex autograd is missing, so an input that requires grad raises
NotImplementedError. `tensorlib.stft`/`istft` (in `_stft.py`) work the same way."""
import numpy as np

import tensorlib
from tensorlib._C.dtypes import get_default_dtype
from tensorlib._C.tensor_impl import TensorImpl

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


_NORMS = (None, "backward", "ortho", "forward")


def _transform(name, kind):
    """One torch.fft transform on numpy.fft: `kind` is "1d" (n, dim), "2d" (s, dim=(-2, -1))
    or "nd" (s, dim=None). The input is copied to the host; complex results stay there (the
    other backends have no complex dtypes yet), real results go back to the input's device."""
    np_fn = getattr(np.fft, name)
    real_out = name in ("irfft", "irfft2", "irfftn", "hfft")

    def transform(input, *args, norm=None, **kwargs):  # noqa: A002
        if not isinstance(input, TensorImpl):
            raise TypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        if norm not in _NORMS:
            raise RuntimeError(f'Invalid normalization mode: "{norm}"')
        if input.requires_grad and tensorlib.is_grad_enabled():
            raise NotImplementedError(f"tensorlib.fft.{name}: gradients through FFTs need "
                                      f"complex autograd, which is not implemented yet")
        if not real_out and input.device.type != "cpu":
            raise RuntimeError(f"tensorlib.fft.{name}: complex results are only supported on "
                               f"the cpu so far; move the input with .cpu() first")
        size, dim = _size_and_dim(name, kind, args, kwargs)
        x = input if input.dtype.category >= 2 else input.to(get_default_dtype())
        parts = _part_dtype(x.dtype)
        host = x.detach().cpu().numpy()
        if kind == "1d":
            res = np_fn(host, n=size, axis=dim, norm=norm)
        else:
            dims = dim if dim is not None else (None if size is None else
                                                tuple(range(-len(size), 0)))
            res = np_fn(host, s=size, axes=dims, norm=norm)
        out_np = res.astype(parts.np if real_out else _complex_of(parts).np, copy=False)
        out = tensorlib.from_numpy(np.ascontiguousarray(out_np))
        return out.to(input.device) if real_out else out

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = (f"torch.fft.{name} on numpy.fft (host copy; see the module "
                         f"docstring).")
    return transform


def _size_and_dim(name, kind, args, kwargs):
    names = ("n", "dim") if kind == "1d" else ("s", "dim")
    default_dim = -1 if kind == "1d" else ((-2, -1) if kind == "2d" else None)
    values = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names or k in values:
            raise TypeError(f"fft_{name}() got an unexpected keyword argument '{k}'")
        values[k] = v
    size = values.get(names[0])
    dim = values.get("dim", default_dim)
    if kind != "1d":
        size = None if size is None else tuple(size)
        dim = None if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    return size, dim


def _part_dtype(d):
    if d.is_complex:
        return tensorlib.float64 if d is tensorlib.complex128 else tensorlib.float32
    return tensorlib.float64 if d is tensorlib.float64 else tensorlib.float32


def _complex_of(d):
    return tensorlib.complex128 if d is tensorlib.float64 else tensorlib.complex64


fft, ifft, rfft, irfft, hfft, ihfft = (_transform(n, "1d") for n in
                                       ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"))
fft2, ifft2, rfft2, irfft2 = (_transform(n, "2d") for n in ("fft2", "ifft2", "rfft2", "irfft2"))
fftn, ifftn, rfftn, irfftn = (_transform(n, "nd") for n in ("fftn", "ifftn", "rfftn", "irfftn"))
