"""The autograd Functions of factorizations.py: LU's and matrix_exp's backward."""
from scipy.linalg import expm

import tensorlib
from tensorlib.autograd.function import Function
from tensorlib.ops.decompositions import _back, _host
from tensorlib.ops.factorizations import _permutation, _rows, _unpack


class LUPacked(Function):
    """LU = L + U - I of A: backward (square A) dA = P L^-H (tril(L^H gL, -1) + triu(gU U^H))
    U^-H, with gL = tril(gLU, -1) and gU = triu(gLU)."""

    @staticmethod
    def forward(ctx, A, packed, pivots):
        ctx.save_for_backward(packed, pivots)
        ctx.shape = tuple(A.shape)
        return packed.clone()

    @staticmethod
    def backward(ctx, grad):
        packed, pivots = ctx.saved_tensors
        m, n = ctx.shape[-2:]
        if m != n:
            raise NotImplementedError("linalg.lu_factor: the derivative of the LU of a "
                                      "non-square matrix is not implemented")
        L, U = _unpack(packed, m, n)
        phi = (L.mH @ grad).tril(-1) + (grad @ U.mH).triu()
        x = tensorlib.linalg.solve_triangular(L.mH, phi, upper=True, unitriangular=True)
        x = tensorlib.linalg.solve_triangular(U.mH, x, upper=False, left=False)
        order = tensorlib.tensor(_permutation(pivots, m), device=grad.device)
        inverse = tensorlib.argsort(order, dim=-1)
        return _rows(x, inverse), None, None



class MatrixExp(Function):
    """exp(A) on the host (scipy's expm); backward: the top-right block of
    exp([[A^H, G], [0, A^H]]), the Fréchet derivative of exp at A^H applied to G."""

    @staticmethod
    def forward(ctx, A):
        ctx.save_for_backward(A)
        a = _host(A)
        return _back(expm(a) if a.size else a.copy(), A)

    @staticmethod
    def backward(ctx, grad):
        (A,) = ctx.saved_tensors
        n = A.shape[-1]
        AH = A.mH
        top = tensorlib.cat([AH, grad], -1)
        bottom = tensorlib.cat([tensorlib.zeros_like(AH), AH], -1)
        return tensorlib.linalg.matrix_exp(tensorlib.cat([top, bottom], -2))[..., :n, n:]


class NotImplementedDerivative(Function):
    """Passes `result` through; backward raises as PyTorch does for ops without a derivative
    (linalg.ldl_factor_ex, linalg.ldl_solve)."""

    @staticmethod
    def forward(ctx, name, result, *inputs):
        ctx.name = name
        return result.clone()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(f"derivative for aten::{ctx.name} is not implemented")
