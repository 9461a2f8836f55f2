"""Reductions and scans over dims. Float sums/prods/extrema go through our OpenMP kernels
(numpy's reductions are single-threaded); everything else through numpy."""
import numpy as np

from tensorlib._C.tensor_impl import host_array as _h


def _reduction(name, ufunc):
    def kernel(out, x, dims):
        from tensorlib_cpu.fastreduce import reduce_into
        xv, o = _h(x), _h(out)
        if not reduce_into(name, xv, tuple(dims), o):
            ufunc.reduce(xv, axis=tuple(dims), keepdims=True, out=o)
    kernel.__name__ = name
    return kernel


def _index_reduction(fn):
    def kernel(out, x, dim):
        o = _h(out)
        o[...] = fn(_h(x), axis=dim, keepdims=True)
    kernel.__name__ = fn.__name__
    return kernel


def _scan(fn):
    def kernel(out, x, dim):
        fn(_h(x), axis=dim, out=_h(out))
    kernel.__name__ = fn.__name__
    return kernel


KERNELS = {
    "sum": _reduction("sum", np.add), "prod": _reduction("prod", np.multiply),
    "amax": _reduction("amax", np.maximum), "amin": _reduction("amin", np.minimum),
    "argmax": _index_reduction(np.argmax), "argmin": _index_reduction(np.argmin),
    "cumsum": _scan(np.cumsum), "cumprod": _scan(np.cumprod),
}
