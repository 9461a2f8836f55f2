"""Complex autograd, PyTorch's convention: the gradient held for a complex z is
dL/dx + i dL/dy (L real, z = x + iy), so for a holomorphic w = f(z) the input gets
grad_w * conj(f'(z)). The elementwise and matmul formulas apply `conj` to their saved
factors, which is the identity for real tensors and numbers (one dtype test). A real input
of a complex op gets the real part of its gradient (done by the node when it casts back)."""
import tensorlib
from tensorlib._C.autograd import conj
from tensorlib.autograd.recording import formula


@formula("view_as_real")
def view_as_real(ctx, g):
    return (tensorlib.view_as_complex(g.contiguous()),)


@formula("view_as_complex")
def view_as_complex(ctx, g):
    return (tensorlib.view_as_real(g),)


@formula("conj_physical")
def conj_physical(ctx, g):
    return (conj(g),)


@formula("complex")
def complex_(ctx, g):
    return (tensorlib.real(g) if ctx.needs_input_grad[0] else None,
            tensorlib.imag(g) if ctx.needs_input_grad[1] else None)


@formula("complex_abs", save=(0,), save_output=True)
def complex_abs(ctx, g):
    """d|z| = Re(conj(sgn z) dz): the gradient is g * sgn(z), 0 at z = 0 (torch)."""
    z, modulus = ctx.args[0], ctx.out
    zero = tensorlib.eq(modulus, 0)
    return (tensorlib.where(zero, 0.0, g * z / tensorlib.where(zero, 1.0, modulus)),)


@formula("angle", save=(0,))
def angle(ctx, g):
    """arg z = atan2(y, x): gradient g * i z / |z|^2, 0 at z = 0; zero for real inputs."""
    z = ctx.args[0]
    if not z.dtype.is_complex:
        return (g * 0,)
    sq = tensorlib.real(z * z.conj())
    zero = tensorlib.eq(sq, 0)
    return (tensorlib.where(zero, 0.0, g * z * 1j / tensorlib.where(zero, 1.0, sq)),)
