"""Derivatives of the FFT primitives (tensorlib/fft/_primitives.py), as PyTorch's: a DFT is
linear, so its gradient is the adjoint transform (the other direction, with the dual
normalisation). The onesided real transforms add Hermitian bookkeeping: rfft's gradient
zero-fills the dropped half before the inverse, irfft's doubles the bins whose mirror
images were implied by symmetry."""
import tensorlib
from tensorlib.autograd.recording import formula
from tensorlib.fft._primitives import DUAL_NORM, fft_c2c, fft_r2c, zero_extend


@formula("fft_c2c")
def c2c(ctx, g):
    _, dims, norm, forward = ctx.args
    return (fft_c2c(g, dims, DUAL_NORM[norm], not forward), None, None, None)


@formula("fft_r2c")
def r2c(ctx, g):
    x, dims, norm, onesided = ctx.args
    if onesided:
        g = zero_extend(g, dims[-1], x.shape[dims[-1]])
    return (tensorlib.real(fft_c2c(g, dims, DUAL_NORM[norm], False)), None, None, None)


@formula("fft_c2r")
def c2r(ctx, g):
    _, dims, norm, last_size = ctx.args
    grad = fft_r2c(g, dims, DUAL_NORM[norm], True)
    half = grad.shape[dims[-1]]
    doubled = last_size - half             # bins 1 .. doubled stand for two bins each
    if doubled > 0:
        weights = tensorlib.ones(half, dtype=tensorlib.real(grad).dtype, device=grad.device)
        weights[1:1 + doubled] = 2.0
        shape = [1] * grad.dim()
        shape[dims[-1]] = half
        grad = grad * weights.view(shape)
    return (grad, None, None, None)
