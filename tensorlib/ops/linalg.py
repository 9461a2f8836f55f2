"""matmul with PyTorch's rules (1-D operands, batch broadcasting) over the batched GEMM
primitive."""
from tensorlib._C.broadcast import broadcast_shapes
from tensorlib._C.dispatch import lookup
from tensorlib._C.factory import empty
from tensorlib._C.tensor_impl import numel
from tensorlib.ops._opdef import differentiable


def _check(a, b):
    if a._device is not b._device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {a._device} and {b._device}!")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a._dtype.name} != {b._dtype.name}")
    if a.dim() == 0 or b.dim() == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a.dim()}D and {b.dim()}D")


@differentiable("matmul")
def matmul(a, b):
    _check(a, b)
    a2 = a.unsqueeze(0) if a.dim() == 1 else a
    b2 = b.unsqueeze(1) if b.dim() == 1 else b
    m, k = a2._sizes[-2:]
    k2, n = b2._sizes[-2:]
    if k != k2:
        if a.dim() == 1 or b.dim() == 1:
            raise RuntimeError(f"size mismatch, got input ({a2._sizes[0]}), mat ({m}x{k}), "
                               f"vec ({k2})" if b.dim() == 1 else
                               f"size mismatch, got input ({k}), mat ({k2}x{n})")
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k} and {k2}x{n})")
    batch = broadcast_shapes(a2._sizes[:-2], b2._sizes[:-2])
    nbatch = numel(batch)
    a3 = a2.expand(batch + (m, k)).reshape(nbatch, m, k)
    b3 = b2.expand(batch + (k, n)).reshape(nbatch, k, n)
    out = empty((nbatch, m, n), a._dtype, a._device)
    if k == 0:
        lookup("fill", a._device)(out, 0)
    else:
        lookup("matmul", a._device)(out, a3, b3)
    shape = batch + ((m,) if a.dim() > 1 else ()) + ((n,) if b.dim() > 1 else ())
    return out.view(shape)


@differentiable("mm")
def mm(a, b):
    if a.dim() != 2 or b.dim() != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {a.dim()}D and {b.dim()}D")
    return matmul(a, b)
