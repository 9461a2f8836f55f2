"""The three transforms every torch.fft function is built from, as PyTorch's ATen has them:
complex-to-complex, real-to-complex (onesided over the last dim) and complex-to-real. They
run numpy.fft on a host copy (see the package docstring) and are differentiable: their
derivatives (autograd/formulas/fft.py) are the adjoint transforms, written with these same
ops, so gradients of any order follow. `norm` has numpy's meaning for the direction taken."""
import numpy as np

import tensorlib
from tensorlib import _capture_state
from tensorlib.ops._opdef import differentiable

DUAL_NORM = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _from_host(array, dtype, device):
    out = tensorlib.from_numpy(np.ascontiguousarray(array.astype(dtype.np, copy=False)))
    return out if device.type == "cpu" else out.to(device)


def _host(x):
    """x on the host; under tensorlib.compile a part of the op, not a break in the program
    (fullgraph=True allows it)."""
    with _capture_state.internal_reads():
        return x.detach().cpu().numpy()


@differentiable("fft_c2c")
def fft_c2c(x, dims, norm, forward):
    """The complex DFT of complex x over dims (inverse when not forward)."""
    fn = np.fft.fftn if forward else np.fft.ifftn
    return _from_host(fn(_host(x), axes=dims, norm=norm), x.dtype, x.device)


@differentiable("fft_r2c")
def fft_r2c(x, dims, norm, onesided):
    """The forward DFT of real x over dims; onesided keeps the last dim's first n // 2 + 1
    (the rest follows by Hermitian symmetry)."""
    host = _host(x)
    out = np.fft.rfftn(host, axes=dims, norm=norm) if onesided else \
        np.fft.fftn(host, axes=dims, norm=norm)
    return _from_host(out, complex_dtype_of(x.dtype), x.device)


@differentiable("fft_c2r")
def fft_c2r(x, dims, norm, last_size):
    """The inverse DFT of a Hermitian signal given by its onesided half x (last dim of size
    last_size // 2 + 1), a real result whose last dim has last_size elements."""
    s = [x.shape[d] for d in dims[:-1]] + [last_size]
    out = np.fft.irfftn(_host(x), s=s, axes=dims, norm=norm)
    return _from_host(out, real_dtype_of(x.dtype), x.device)


def zero_extend(x, dim, size):
    """x with zeros appended along dim up to `size` elements."""
    missing = size - x.shape[dim]
    if missing <= 0:
        return x
    shape = list(x.shape)
    shape[dim] = missing
    return tensorlib.cat([x, tensorlib.zeros(shape, dtype=x.dtype, device=x.device)], dim)


def complex_dtype_of(d):
    return tensorlib.complex128 if d is tensorlib.float64 else tensorlib.complex64


def real_dtype_of(d):
    return tensorlib.float64 if d is tensorlib.complex128 else tensorlib.float32
