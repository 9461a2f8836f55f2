"""Reductions over dims (the scans are scan_kernels'). Float sums/prods/extrema go through our
OpenMP kernels (numpy's reductions are single-threaded), read straight off the tensors so a
small one costs little more than its loop; everything else through numpy."""
import numpy as np

from tensorlib._C.tensor_impl import host_array as _h
from tensorlib_cpu.fastreduce import reduce_tensor


def _reduction(name, ufunc):
    def kernel(out, x, dims):
        dims = dims if type(dims) is tuple else tuple(dims)
        if not reduce_tensor(name, out, x, dims):
            ufunc.reduce(_h(x), axis=dims, keepdims=True, out=_h(out))
    kernel.__name__ = name
    return kernel


def _index_reduction(fn):
    def kernel(out, x, dim):
        o = _h(out)
        o[...] = fn(_h(x), axis=dim, keepdims=True)
    kernel.__name__ = fn.__name__
    return kernel


KERNELS = {
    "sum": _reduction("sum", np.add), "prod": _reduction("prod", np.multiply),
    "amax": _reduction("amax", np.maximum), "amin": _reduction("amin", np.minimum),
    "argmax": _index_reduction(np.argmax), "argmin": _index_reduction(np.argmin),
}
