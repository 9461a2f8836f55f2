"""Every primitive of tensorlib's plugin contract, in plain numpy over strided host views, and
one optional composite kernel (relu) as an example.

`host_array(t)` is a numpy view with t's sizes, strides and offset, so a kernel is
"compute from the input views, assign into the output view": numpy handles stride 0
(broadcast inputs), steps, transposes and offsets, and casts on assignment."""
import math

import numpy as np

from tensorlib._C.tensor_impl import host_array as h

from tensorlib_toy import philox

UNARY = {
    "abs": np.abs, "neg": np.negative, "exp": np.exp, "expm1": np.expm1, "log": np.log,
    "log1p": np.log1p, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "tanh": np.tanh, "erf": np.vectorize(math.erf), "floor": np.floor,
    "ceil": np.ceil, "round": np.round, "trunc": np.trunc, "sign": np.sign,
    "isnan": np.isnan, "logical_not": np.logical_not, "bitwise_not": np.invert,
}
BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "pow": np.power, "maximum": np.maximum, "minimum": np.minimum, "remainder": np.remainder,
    "fmod": np.fmod, "floor_divide": np.floor_divide, "atan2": np.arctan2, "eq": np.equal,
    "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "logical_and": np.logical_and, "logical_or": np.logical_or,
    "logical_xor": np.logical_xor, "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
}
REDUCE = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _elementwise(fn):
    def kernel(out, *inputs):
        with np.errstate(all="ignore"):          # inf/nan results are values, not warnings
            h(out)[...] = fn(*(h(x) for x in inputs))
    return kernel


def _reduce(ufunc):
    def kernel(out, x, dims):
        h(out)[...] = ufunc.reduce(h(x), axis=tuple(dims), keepdims=True)
    return kernel


def _along(fn):
    def kernel(out, x, dim):
        h(out)[...] = fn(h(x), dim)
    return kernel


def fill(out, value):
    h(out)[...] = value


def copy(out, src):
    h(out)[...] = h(src)                         # numpy assignment casts (floats truncate)


def where(out, cond, a, b):
    h(out)[...] = np.where(h(cond), h(a), h(b))


def matmul(out, a, b):
    h(out)[...] = np.matmul(h(a), h(b))


def _grid(index, dim):
    """Index tuple reaching, for each position of `index`, its target along `dim`."""
    grid = list(np.ogrid[tuple(slice(0, n) for n in index.shape)])
    grid[dim] = index
    return tuple(grid)


def gather(out, x, dim, index):
    h(out)[...] = h(x)[_grid(h(index), dim)]


def scatter_add(out, dim, index, src):
    i = h(index)
    np.add.at(h(out), _grid(i, dim), h(src)[tuple(slice(0, n) for n in i.shape)])


def index_select(out, x, dim, index):
    h(out)[...] = np.take(h(x), h(index), axis=dim)


def sort(values, indices, x, dim, descending=False, stable=True):
    xv = h(x)
    keys = xv.astype(np.int64 if xv.dtype.kind in "biu" else xv.dtype)
    order = np.argsort(-keys if descending else keys, axis=dim, kind="stable")
    h(indices)[...] = order
    h(values)[...] = np.take_along_axis(xv, order, axis=dim)


def _random(draw):
    def kernel(out, seed, offset):
        o = h(out)                               # number j -> element j in row-major order
        o[...] = draw(seed, offset, o.size, o.dtype).reshape(o.shape)
    return kernel


def relu(out, x):
    """An optional composite kernel (COMPOSITES["relu"]): one call instead of the framework's
    maximum(x, 0). Returns True (it wrote out); returning False would decline the call."""
    h(out)[...] = np.maximum(h(x), 0)          # NaN stays NaN, as torch.relu
    return True


KERNELS = {"fill": fill, "copy": copy, "where": where, "matmul": matmul, "gather": gather,
           "scatter_add": scatter_add, "index_select": index_select, "sort": sort,
           "argmax": _along(lambda x, d: np.argmax(x, axis=d, keepdims=True)),
           "argmin": _along(lambda x, d: np.argmin(x, axis=d, keepdims=True)),
           "cumsum": _along(lambda x, d: np.cumsum(x, axis=d)),
           "cumprod": _along(lambda x, d: np.cumprod(x, axis=d)),
           "random_uniform": _random(philox.uniform), "random_normal": _random(philox.normal)}
KERNELS.update({op: _elementwise(fn) for op, fn in {**UNARY, **BINARY}.items()})
KERNELS.update({op: _reduce(ufunc) for op, ufunc in REDUCE.items()})
COMPOSITE_KERNELS = {"relu": relu}     # optional: see tensorlib.backends.interface.COMPOSITES
