"""Elementwise kernels: numpy ufuncs writing into the output's strided view. Large outputs are
split across threads (numpy releases the GIL inside ufunc loops)."""
import numpy as np
import scipy.special

from tensorlib._C.tensor_impl import host_array as _h
from tensorlib_cpu import fill_kernels, select_kernels
from tensorlib_cpu.copy_kernels import copy
from tensorlib_cpu.ufunc_kernels import UfuncKernel


def _numpy_fill(o, value):
    try:
        o.fill(value)
    except OverflowError:         # torch wraps out-of-range integers (uint8 + 1000 -> 232)
        o.fill(np.array(value).astype(o.dtype))


def fill(out, value):
    """Large contiguous outputs on the threads (fill_kernels), the value converted by numpy
    into one element first; the rest by numpy's fill."""
    o = _h(out)
    if o.nbytes >= fill_kernels.PARALLEL_MIN_BYTES and o.flags.c_contiguous:
        one = np.empty(1, o.dtype)
        _numpy_fill(one, value)
        if fill_kernels.fill(o, one):
            return
    _numpy_fill(o, value)


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def where(out, cond, a, b):
    """select_kernels.where for contiguous operands; otherwise branch-free on the bits:
    out = (a & m) | (b & ~m) with m all ones where cond. numpy's where branches per element
    and a random mask (relu's backward) made it 20x slower."""
    if select_kernels.where(out, cond, a, b):
        return
    o, c, av, bv = _h(out), _h(cond), _h(a), _h(b)
    bits = _UINT.get(o.itemsize)
    if bits is None or av.dtype != o.dtype or bv.dtype != o.dtype:
        np.copyto(o, bv, casting="unsafe")
        np.copyto(o, av, casting="unsafe", where=c)
        return
    mask = c.astype(bits)
    np.negative(mask, out=mask)
    ob = o.view(bits)
    np.bitwise_and(av.view(bits), mask, out=ob)
    b_bits = bv.view(bits)
    if b_bits.size and not any(b_bits.strides) and b_bits.flat[0] == 0:
        return                                  # b is a broadcast zero: done
    np.invert(mask, out=mask)
    np.bitwise_and(b_bits, mask, out=mask)
    np.bitwise_or(ob, mask, out=ob)


# PyTorch never warns about inf/nan results, so every kernel runs with numpy's warnings off;
# those that can also divide integers by zero raise as PyTorch does.
_QUIET = {
    "abs": np.absolute, "neg": np.negative, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "atan": np.arctan, "tanh": np.tanh, "erf": scipy.special.erf, "floor": np.floor,
    "ceil": np.ceil, "round": np.rint, "trunc": np.trunc, "sign": np.sign, "isnan": np.isnan,
    "logical_not": np.logical_not, "bitwise_not": np.invert, "add": np.add,
    "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
    "atan2": np.arctan2, "eq": np.equal, "ne": np.not_equal, "lt": np.less,
    "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "sqrt": np.sqrt,
    "asin": np.arcsin, "acos": np.arccos, "sinh": np.sinh, "cosh": np.cosh,
    "div": np.true_divide, "pow": np.power,
}
_INTEGER_DIVISION = {"remainder": np.remainder, "fmod": np.fmod, "floor_divide": np.floor_divide}

KERNELS = {"fill": fill, "copy": copy, "where": where}
KERNELS.update({op: UfuncKernel(f, quiet=True) for op, f in _QUIET.items()})
KERNELS.update({op: UfuncKernel(f, quiet=True, integer_division=True)
                for op, f in _INTEGER_DIVISION.items()})

_rint = KERNELS["round"]


def round_(out, x):
    """torch.round of an integer tensor is a copy; numpy's rint has no integer loop."""
    if out._dtype.is_floating_point:
        _rint(out, x)
    else:
        copy(out, x)


KERNELS["round"] = round_
