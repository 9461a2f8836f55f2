"""Random numbers from the counter-based Philox generator: element i of a request is a pure
function of (seed, offset + i), so every backend produces the same numbers. And the optional
`mt19937` kernel: PyTorch's CPU stream, for TENSORLIB_RNG=pytorch."""
import numpy as np

from tensorlib._C.tensor_impl import TensorImpl, host_array as _h
from tensorlib_cpu import mt19937_kernels, philox


def _fill(draw, slot):
    def kernel(out, seed, offset):
        o = _h(out)          # number j -> element j in row-major order, whatever out's strides
        fill = philox.C_FILLS.get(o.dtype)
        if fill is not None and o.flags.c_contiguous:
            fill[slot](seed, offset, o.reshape(-1))      # in place: no temporary, no copy
            return
        # drawn in out's own dtype: float16/bfloat16 uniforms use their p significand bits, so
        # they are exact and never round up to 1.0 (a float32 draw cast down can)
        o[...] = draw(seed, offset, o.size, o.dtype).reshape(o.shape)
    kernel.__name__ = draw.__name__
    return kernel


KERNELS = {"random_uniform": _fill(philox.uniform, 0), "random_normal": _fill(philox.normal, 1)}


def _flat(t):
    """A contiguous tensor's elements as a 1-D numpy view (bool as uint8)."""
    a = _h(t).reshape(-1)
    return a.view(np.uint8) if a.dtype == np.bool_ else a


_MT_FILLS = {
    "uniform": mt19937_kernels.uniform,
    "normal_fill": mt19937_kernels.normal_fill,
    "normal_serial": mt19937_kernels.normal_serial,
    "ints_from_to": mt19937_kernels.ints_from_to,
    "ints_full_range": mt19937_kernels.ints_full_range,
    "ints_modulo": mt19937_kernels.ints_modulo,
    "bernoulli": mt19937_kernels.bernoulli_scalar,
    "bernoulli_tensor": mt19937_kernels.bernoulli_tensor,
    "exponential": mt19937_kernels.exponential,
    "cauchy": mt19937_kernels.cauchy,
    "geometric": mt19937_kernels.geometric,
    "randperm": mt19937_kernels.randperm,
    "poisson": mt19937_kernels.poisson,
    "standard_gamma": mt19937_kernels.standard_gamma,
    "binomial": mt19937_kernels.binomial,
}


def mt19937(kind, state, out, *args):
    """PyTorch's CPU generator: fill `kind` into the contiguous tensor `out` (tensor arguments
    contiguous too), drawing from and advancing the 5056-byte `state` (tensorlib_cpu/
    mt19937_kernels.pyx)."""
    if kind == "seed":
        mt19937_kernels.seed(state, args[0] & ((1 << 64) - 1))
    elif kind == "multinomial":
        probs = _h(args[0])
        mt19937_kernels.multinomial(state, probs, _h(out), np.empty(probs.shape[1], probs.dtype))
    else:
        _MT_FILLS[kind](state, _flat(out), *(_flat(a) if isinstance(a, TensorImpl) else a
                                              for a in args))


KERNELS["mt19937"] = mt19937
