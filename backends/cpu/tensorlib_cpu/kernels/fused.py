"""Composite kernels the CPU backend provides in place of decompositions: softmax and
log_softmax, forward and backward, over any dim (fused Cython/OpenMP kernels on C-contiguous
float32/float64 data, after one copy of a strided input; numpy for the other dtypes)."""
import numpy as np

from tensorlib._C.tensor_impl import host_array as _h
from tensorlib_cpu import softmax as _fused


def _forward(log):
    def kernel(out, x, dim):
        if _fused.forward_tensor(out, x, dim, log):
            return
        o = _h(out)
        src = np.ascontiguousarray(_h(x))
        dst = o if o.flags.c_contiguous else np.empty_like(src)
        if not _fused.forward(src, dst, log, dim):
            with np.errstate(all="ignore"):
                shifted = src - src.max(axis=dim, keepdims=True)
                if log:
                    dst[...] = shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
                else:
                    e = np.exp(shifted)
                    dst[...] = e / e.sum(axis=dim, keepdims=True)
        if dst is not o:
            o[...] = dst
    return kernel


def _backward(log):
    def kernel(grad_input, grad, y, dim):
        if _fused.backward_tensor(grad_input, grad, y, dim, log):
            return
        o = _h(grad_input)
        g, ys = np.ascontiguousarray(_h(grad)), np.ascontiguousarray(_h(y))
        dst = o if o.flags.c_contiguous else np.empty_like(ys)
        if not _fused.backward(g, ys, dst, log, dim):
            if log:
                dst[...] = g - np.exp(ys) * g.sum(axis=dim, keepdims=True)
            else:
                dst[...] = ys * (g - (g * ys).sum(axis=dim, keepdims=True))
        if dst is not o:
            o[...] = dst
    return kernel


KERNELS = {"softmax": _forward(False), "log_softmax": _forward(True),
           "softmax_backward": _backward(False), "log_softmax_backward": _backward(True)}
