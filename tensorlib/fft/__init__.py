"""tensorlib.fft: PyTorch's discrete Fourier transform namespace.

The sample-frequency helpers (fftfreq, rfftfreq) and the shifts (fftshift, ifftshift) work
on every device (the shifts are `roll`, so they are differentiable). The transforms have
PyTorch's names, `n`/`s`, `dim`, `norm` and result dtypes, and are differentiable with
PyTorch's gradients: each one resizes its input (zero padding or trimming, recorded ops) and
calls one of three primitives (`_primitives.py`: complex-to-complex, real-to-complex,
complex-to-real), which run numpy.fft on a host copy of the input. Complex results are CPU
tensors, since only the CPU has complex dtypes so far (an input on another device that would
give a complex result raises RuntimeError), and real results (irfft, irfftn, hfft) keep the
input's device. `tensorlib.stft`/`istft` (in `_stft.py`) are written with these transforms,
so they are differentiable too."""
import tensorlib
from tensorlib._C.dtypes import get_default_dtype
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib._C.views import wrap_dim
from tensorlib.fft._primitives import (DUAL_NORM, complex_dtype_of, fft_c2c, fft_c2r,
                                       fft_r2c, zero_extend)

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _frequencies(count, n, d, dtype, device, requires_grad, negative):
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise RuntimeError(f"{'fftfreq' if negative else 'rfftfreq'}: n must be a "
                           f"non-negative integer, got {n}")
    dtype = dtype if dtype is not None else get_default_dtype()
    if dtype.is_complex:                               # PyTorch's arange has no complex kernel
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{dtype.scalar_name}'")
    if not dtype.is_floating_point:
        raise RuntimeError(f"{'fftfreq' if negative else 'rfftfreq'} requires a floating point "
                           "or complex dtype")
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


_NORMS = {None: "backward", "backward": "backward", "ortho": "ortho", "forward": "forward"}


def _check(name, input, norm):  # noqa: A002
    if not isinstance(input, TensorImpl):
        raise TypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return _NORMS[norm]


def _floating(x):
    return x if x.dtype.category >= 2 else x.to(get_default_dtype())


def _complex(name, x):
    """x as a complex tensor (on the CPU: the other backends have no complex dtypes)."""
    x = _floating(x)
    if x.dtype.is_complex:
        return x
    cdtype = complex_dtype_of(x.dtype)
    _require_cpu(name, x, cdtype)
    return x.to(cdtype)


def _require_cpu(name, x, dtype):
    if x.device.type != "cpu":
        raise RuntimeError(f"tensorlib.fft.{name}: a {dtype} result is only supported on the "
                           f"cpu so far (the input is on {x.device}); move the input with "
                           f".cpu() first")


def _plan(name, x, kind, args, kwargs):
    """(sizes or None, dims) from PyTorch's arguments: 1d takes (n, dim), 2d (s, dim) with
    dim=(-2, -1), nd (s, dim) where dim defaults to the last len(s) dims or all."""
    names = ("n", "dim") if kind == "1d" else ("s", "dim")
    values = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names or k in values:
            raise TypeError(f"fft_{name}() got an unexpected keyword argument '{k}'")
        values[k] = v
    size, dim = values.get(names[0]), values.get("dim", -1 if kind == "1d" else
                                                 ((-2, -1) if kind == "2d" else None))
    if kind == "1d":
        return (None if size is None else [size]), [wrap_dim(dim, x.dim())]
    sizes = None if size is None else list(size)
    if dim is None:
        dims = list(range(x.dim())) if sizes is None else \
            list(range(x.dim() - len(sizes), x.dim()))
    else:
        dims = [wrap_dim(d, x.dim()) for d in ((dim,) if isinstance(dim, int) else dim)]
    if sizes is not None and len(sizes) != len(dims):
        raise RuntimeError(f"When given, dim and shape arguments must have the same length "
                           f"(got {len(dims)} dims and {len(sizes)} sizes)")
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"FFT dims must be unique, got {dims}")
    return sizes, dims


def _resize(x, dims, sizes):
    """Trim or zero-pad x along each dim to its size (-1 or None: keep), as PyTorch does."""
    for d, n in zip(dims, sizes):
        if n is None or n == -1:
            continue
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
        x = x.narrow(d, 0, n) if n < x.shape[d] else zero_extend(x, d, n)
    return x


def _nonempty(x, dims):
    """PyTorch's CPU FFT refuses empty input: a transformed dim of size 0, or any other."""
    for d in dims:
        if x.shape[d] == 0:
            raise RuntimeError("Invalid number of data points (0) specified")
    if x.numel() == 0:
        raise RuntimeError("FFT of an empty tensor: PyTorch's CPU FFT (MKL) refuses it "
                           "(Inconsistent configuration parameters)")
    return x


def _c2c(name, forward, kind):
    def transform(input, *args, norm=None, **kwargs):  # noqa: A002
        norm = _check(name, input, norm)
        x = _complex(name, input)
        sizes, dims = _plan(name, x, kind, args, kwargs)
        if sizes is not None:
            x = _resize(x, dims, sizes)
        return fft_c2c(_nonempty(x, dims), tuple(dims), norm, forward)
    return transform


def _r2c(name, kind, hermitian=False):
    """rfft*: the onesided forward transform of a real signal; ihfft* is its conjugate
    with the dual normalisation (numpy's and PyTorch's definition)."""
    def transform(input, *args, norm=None, **kwargs):  # noqa: A002
        norm = _check(name, input, norm)
        if input.dtype.is_complex:
            raise RuntimeError(f"{name} expects a real input tensor, but got "
                               f"{input.dtype.scalar_name}")
        x = _floating(input)
        _require_cpu(name, x, complex_dtype_of(x.dtype))
        sizes, dims = _plan(name, x, kind, args, kwargs)
        if sizes is not None:
            x = _resize(x, dims, sizes)
        _nonempty(x, dims)
        if hermitian:
            return fft_r2c(x, tuple(dims), DUAL_NORM[norm], True).conj()
        return fft_r2c(x, tuple(dims), norm, True)
    return transform


def _c2r(name, kind, hermitian=False):
    """irfft*: a real signal from the onesided half of its spectrum (the last dim's output
    size defaults to 2 (m - 1)); hfft* is irfft* of the conjugate with the dual norm."""
    def transform(input, *args, norm=None, **kwargs):  # noqa: A002
        norm = _check(name, input, norm)
        x = _complex(name, input)
        sizes, dims = _plan(name, x, kind, args, kwargs)
        last = 2 * (x.shape[dims[-1]] - 1) if sizes is None or sizes[-1] in (None, -1) \
            else sizes[-1]
        if last < 1:
            raise RuntimeError(f"Invalid number of data points ({last}) specified")
        x = _resize(x, dims, (sizes[:-1] if sizes is not None else [None] * (len(dims) - 1))
                    + [last // 2 + 1])
        _nonempty(x, dims)
        if hermitian:
            return fft_c2r(x.conj(), tuple(dims), DUAL_NORM[norm], last)
        return fft_c2r(x, tuple(dims), norm, last)
    return transform


def _named(fn, name):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.fft.{name} (differentiable; the transform runs on a host copy)."
    return fn


fft, fft2, fftn = (_named(_c2c(n, True, k), n) for n, k in
                   (("fft", "1d"), ("fft2", "2d"), ("fftn", "nd")))
ifft, ifft2, ifftn = (_named(_c2c(n, False, k), n) for n, k in
                      (("ifft", "1d"), ("ifft2", "2d"), ("ifftn", "nd")))
rfft, rfft2, rfftn = (_named(_r2c(n, k), n) for n, k in
                      (("rfft", "1d"), ("rfft2", "2d"), ("rfftn", "nd")))
ihfft, ihfft2, ihfftn = (_named(_r2c(n, k, hermitian=True), n) for n, k in
                         (("ihfft", "1d"), ("ihfft2", "2d"), ("ihfftn", "nd")))
irfft, irfft2, irfftn = (_named(_c2r(n, k), n) for n, k in
                         (("irfft", "1d"), ("irfft2", "2d"), ("irfftn", "nd")))
hfft, hfft2, hfftn = (_named(_c2r(n, k, hermitian=True), n) for n, k in
                      (("hfft", "1d"), ("hfft2", "2d"), ("hfftn", "nd")))

from tensorlib.ops import _out  # noqa: E402 - out= on the functions that take it in PyTorch
_out.install(globals(), _out.FFT_RULE, "fft.")
