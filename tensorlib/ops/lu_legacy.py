"""PyTorch's older LU spellings, still in programs written before torch.linalg (normalizing
flows' invertible 1x1 convolutions among them): `torch.lu` / `Tensor.lu` give lu_factor's
(LU, pivots), `torch.lu_unpack` turns them into (P, L, U), and `torch.lu_solve(b, LU,
pivots)` / `Tensor.lu_solve` solve with them. Each is torch.linalg's computation."""
from collections import namedtuple

import numpy as np

import tensorlib
from tensorlib.ops.factorizations import _permutation, _unpack, lu_factor_ex, lu_solve as _solve

__all__ = ["lu", "lu_unpack", "lu_solve"]

lu_unpack_result = namedtuple("lu_unpack", ["P", "L", "U"])


def lu(A, pivot=True, get_infos=False, out=None):
    r"""(LU, pivots), with get_infos also the per-matrix info; a singular matrix does not
    raise here (its info is nonzero), as in PyTorch."""
    LU, pivots, infos = lu_factor_ex(A, pivot=pivot)
    return (LU, pivots, infos) if get_infos else (LU, pivots)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    r"""(P, L, U) with A = P L U from `lu`'s packed result; a part not asked for is an empty
    tensor."""
    if LU_data.dim() < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {tuple(LU_data.shape)} instead")
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    if tuple(LU_pivots.shape) != tuple(LU_data.shape[:-2]) + (k,):
        raise RuntimeError(f"torch.lu_unpack: Expected LU_pivots.size(-1) == "
                           f"min(LU_data.size(-1), LU_data.size(-2)) and matching batch "
                           f"dimensions, but got LU_data of shape {tuple(LU_data.shape)} and "
                           f"LU_pivots of shape {tuple(LU_pivots.shape)}")
    if LU_pivots.dtype != tensorlib.int32:
        raise RuntimeError(f"torch.lu_unpack: LU_pivots is expected to be a contiguous tensor "
                           f"of torch.int32 dtype. Note: this function is intended to be used "
                           f"with the output produced by torch.linalg.lu_factor, got "
                           f"{LU_pivots.dtype}")
    empty = tensorlib.empty(0, dtype=LU_data.dtype, device=LU_data.device)
    L, U = _unpack(LU_data, m, n) if unpack_data else (empty, empty)
    if unpack_pivots:
        order = _permutation(LU_pivots, m)
        P = np.swapaxes(np.eye(m)[order], -1, -2)
        P = tensorlib.tensor(P, dtype=LU_data.dtype, device=LU_data.device)
    else:
        P = empty
    return lu_unpack_result(P, L, U)


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    r"""x with A x = b, A given as `lu`'s (LU, pivots)."""
    return _solve(LU_data, LU_pivots, b)


TENSOR_METHODS = {
    "lu": lambda self, pivot=True, get_infos=False: lu(self, pivot=pivot, get_infos=get_infos),
    "lu_solve": lambda self, LU_data, LU_pivots: lu_solve(self, LU_data, LU_pivots),
}
