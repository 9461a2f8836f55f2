"""Composite kernels the CPU backend provides in place of decompositions: softmax and
log_softmax, forward and backward, over any dim (fused Cython/OpenMP over the last dim of
contiguous float tensors; numpy elsewhere)."""
import numpy as np

from tensorlib._C.tensor_impl import host_array as _h
from tensorlib_cpu import softmax as _fused


def _last(a, dim):
    return np.ascontiguousarray(np.moveaxis(a, dim, -1))


def _forward(log):
    def kernel(out, x, dim):
        if _fused.forward_tensor(out, x, dim, log):
            return
        xv, o = _h(x), _h(out)
        last = dim in (-1, xv.ndim - 1)
        src = xv if last else _last(xv, dim)
        dst = o if last and o.flags.c_contiguous else np.empty_like(src)
        if not _fused.forward(src, dst, log):
            with np.errstate(all="ignore"):
                shifted = src - src.max(axis=-1, keepdims=True)
                if log:
                    dst[...] = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
                else:
                    e = np.exp(shifted)
                    dst[...] = e / e.sum(axis=-1, keepdims=True)
        if dst is not o:
            o[...] = dst if last else np.moveaxis(dst, -1, dim)
    return kernel


def _backward(log):
    def kernel(grad_input, grad, y, dim):
        if _fused.backward_tensor(grad_input, grad, y, dim, log):
            return
        gv, yv, o = _h(grad), _h(y), _h(grad_input)
        last = dim in (-1, yv.ndim - 1)
        g = np.ascontiguousarray(gv) if last else _last(gv, dim)
        ys = np.ascontiguousarray(yv) if last else _last(yv, dim)
        dst = o if last and o.flags.c_contiguous else np.empty_like(ys)
        if not _fused.backward(g, ys, dst, log):
            if log:
                dst[...] = g - np.exp(ys) * g.sum(axis=-1, keepdims=True)
            else:
                dst[...] = ys * (g - (g * ys).sum(axis=-1, keepdims=True))
        if dst is not o:
            o[...] = dst if last else np.moveaxis(dst, -1, dim)
    return kernel


KERNELS = {"softmax": _forward(False), "log_softmax": _forward(True),
           "softmax_backward": _backward(False), "log_softmax_backward": _backward(True)}
