"""Random numbers from the counter-based Philox generator: element i of a request is a pure
function of (seed, offset + i), so every backend produces the same numbers."""
from tensorlib._C.tensor_impl import host_array as _h
from tensorlib_cpu import philox


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
