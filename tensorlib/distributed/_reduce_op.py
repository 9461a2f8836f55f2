"""ReduceOp (torch.distributed's names) and how each becomes an MPI reduction on a numpy
buffer. MPI has no AVG and no 16-bit floats: AVG is a SUM divided by the group size, float16
and bfloat16 are reduced in float32, bool as uint8 (so SUM/MAX are `or`, PRODUCT/MIN `and`)."""
import enum

import numpy as np

__all__ = ["ReduceOp"]


class ReduceOp(enum.Enum):
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"

    def __repr__(self):
        return f"<ReduceOp.{self.name}>"


# dtypes MPI reduces natively (mpi4py maps them from the buffer); others are widened
_WIDENED = {"float16": np.float32, "bfloat16": np.float32, "bool": np.uint8}


def check_op(op, dtype):
    """Reject what PyTorch rejects (with a message naming the op and the dtype)."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"op must be a torch.distributed.ReduceOp, got {type(op).__name__}")
    kind = np.dtype(dtype).kind
    if op is ReduceOp.AVG and kind not in "fcV":
        raise TypeError(f"ReduceOp.AVG needs a floating point tensor, got {dtype}")
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and kind not in "iub":
        raise TypeError(f"ReduceOp.{op.name} needs an integer or bool tensor, got {dtype}")
    if op in (ReduceOp.MIN, ReduceOp.MAX) and kind == "c":
        raise TypeError(f"ReduceOp.{op.name} is not defined for complex tensors ({dtype})")


def mpi_op(op, MPI):
    """The MPI operation doing `op` (AVG reduces as SUM; the caller divides)."""
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND,
            ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}[op]


def widened(array):
    """`array` itself when MPI reduces its dtype, else a widened copy."""
    wide = _WIDENED.get(array.dtype.name)
    return array if wide is None else array.astype(wide)


def narrow_into(dst, src, op, group_size):
    """Write the reduced `src` into `dst`, finishing AVG (dividing by the group size)."""
    if op is ReduceOp.AVG:
        if src is dst:
            np.divide(src, group_size, out=src, casting="unsafe")
            return
        src = src / group_size
    if src is not dst:
        np.copyto(dst, src if dst.dtype != np.bool_ else src != 0, casting="unsafe")
