"""torch.linalg's LU family (lu_factor(_ex), lu, lu_solve), matrix_exp, solve_ex, cond,
tensorinv, tensorsolve and diagonal, batched over leading dims.

LU (getrf) and the matrix exponential (scipy's expm) run on the host like the other
factorisations (decompositions.py). lu_solve is composed from differentiable triangular
solves and a row permutation, so its gradients (with respect to LU and B) come from theirs;
lu and matrix_exp carry their own backward (autograd Functions in _factorization_grads.py,
imported at call time: autograd imports the ops), cond / tensorinv /
tensorsolve / solve_ex are compositions of ops with gradients."""
from collections import namedtuple
from math import prod

import numpy as np

import tensorlib
from tensorlib.ops.decompositions import (LinAlgError, _back, _check_matrix, _host,
                                          _getrf_info, solve, svdvals, inv)

__all__ = ["lu_factor", "lu_factor_ex", "lu", "lu_solve", "matrix_exp", "solve_ex", "cond",
           "tensorinv", "tensorsolve", "diagonal", "householder_product"]

lu_factor_result = namedtuple("linalg_lu_factor", ["LU", "pivots"])
lu_factor_ex_result = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
lu_result = namedtuple("linalg_lu", ["P", "L", "U"])
solve_ex_result = namedtuple("linalg_solve_ex", ["result", "info"])


# ---- LU ----------------------------------------------------------------------------------------
def _check_lu(name, A):
    if A.dim() < 2:
        raise RuntimeError(f"torch.{name.split('.')[-1]}: Expected tensor with 2 or more "
                           f"dimensions. Got size: {list(A.shape)} instead")
    if A.dtype not in (tensorlib.float32, tensorlib.float64) and not A.dtype.is_complex:
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{A.dtype.scalar_name}'")
    _check_matrix("linalg." + name.split(".")[-1], A)


def _getrf(a, pivot):
    """(LU, 1-based pivots, info) of every matrix of a (host arrays)."""
    from scipy.linalg import lapack
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the "
                           "CPU")
    m, n = a.shape[-2:]
    flat = a.reshape((int(np.prod(a.shape[:-2])), m, n))
    lu = np.empty_like(flat)
    piv = np.empty((flat.shape[0], min(m, n)), np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    if flat.size:
        getrf = lapack.get_lapack_funcs("getrf", (a,))
        for i, matrix in enumerate(flat):
            lu[i], p, info[i] = getrf(matrix)
            piv[i] = p[:min(m, n)] + 1
    else:
        piv[:] = np.arange(1, min(m, n) + 1, dtype=np.int32)
    batch = a.shape[:-2]
    return lu.reshape(a.shape), piv.reshape(batch + (min(m, n),)), \
        np.maximum(info, 0).reshape(batch)


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    r"""(LU, pivots, info): PA = LU packed in one matrix, LAPACK's 1-based row swaps (int32),
    and per matrix 0 or the index of the first zero pivot."""
    _check_lu("linalg.lu_factor_ex", A)
    lu_, piv, info = _getrf(_host(A), pivot)
    if check_errors and info.any():
        raise LinAlgError(f"torch.linalg.lu_factor_ex: U[{int(info.max())},"
                          f"{int(info.max())}] is zero and using it on lu_solve would result "
                          f"in a division by zero.")
    from tensorlib.ops._factorization_grads import LUPacked
    packed = LUPacked.apply(A, _back(lu_, A), _back(piv, A, tensorlib.int32))
    return lu_factor_ex_result(packed, _back(piv, A, tensorlib.int32),
                               _back(info, A, tensorlib.int32))


def lu_factor(A, *, pivot=True):
    r"""(LU, pivots) of A; a singular matrix raises (use lu_factor_ex to get it anyway)."""
    _check_lu("linalg.lu_factor", A)
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    bad = _host(info)
    if bad.any():
        k = int(bad[bad > 0].flat[0])
        raise RuntimeError(f"torch.linalg.lu_factor: U[{k},{k}] is zero and using it on "
                           f"lu_solve would result in a division by zero. If you still want "
                           f"to perform the factorization, consider calling linalg.lu(A, "
                           f"pivot) or linalg.lu_factor_ex(A, pivot)")
    return lu_factor_result(LU, pivots)


def _permutation(pivots, m):
    """Row order r with A[r] = L U, from LAPACK's 1-based swaps (host array per matrix)."""
    piv = _host(pivots).astype(np.int64) - 1
    order = np.broadcast_to(np.arange(m), piv.shape[:-1] + (m,)).copy()
    count = int(np.prod(piv.shape[:-1]))
    rows = np.arange(count)
    flat, fpiv = order.reshape(count, m), piv.reshape(count, piv.shape[-1])
    for i in range(fpiv.shape[1]):
        a, b = flat[rows, i].copy(), flat[rows, fpiv[:, i]].copy()
        flat[rows, i], flat[rows, fpiv[:, i]] = b, a
    return flat.reshape(order.shape)


def _unpack(LU, m, n):
    k = min(m, n)
    L = LU[..., :, :k].tril(-1) + tensorlib.eye(m, k, dtype=LU.dtype, device=LU.device)
    U = LU[..., :k, :].triu()
    return L, U


def _rows(x, order):
    """x with its rows taken in `order` (batched)."""
    index = order.unsqueeze(-1).expand(tuple(order.shape) + (x.shape[-1],))
    return x.gather(-2, index.expand(tuple(x.shape[:-2]) + tuple(index.shape[-2:])))


def lu(A, *, pivot=True):
    r"""(P, L, U) with A = P L U; L unit lower triangular (m x k), U upper (k x n)."""
    _check_lu("linalg.lu", A)
    LU, pivots, _ = lu_factor_ex(A, pivot=pivot)
    m, n = A.shape[-2:]
    L, U = _unpack(LU, m, n)
    order = _permutation(pivots, m)
    eye = np.eye(m, dtype=_host(LU).dtype)
    P = np.swapaxes(eye[order], -1, -2)
    return lu_result(_back(P, A), L, U)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    r"""X with A X = B (X A = B when not left; A^H in place of A when adjoint) for A = P L U
    given as lu_factor's (LU, pivots)."""
    _check_matrix("linalg.lu_solve", LU, square=True)
    n = LU.shape[-1]
    if B.dim() < 2 or (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{'x'.join(str(s) for s in B.shape[-2:])})")
    L, U = _unpack(LU, n, n)
    order = tensorlib.tensor(_permutation(pivots, n), device=LU.device)
    if not left:            # X A = B  <=>  A^H X^H = B^H
        return lu_solve(LU, pivots, B.mH, left=True, adjoint=not adjoint).mH
    batch = tuple(np.broadcast_shapes(tuple(LU.shape[:-2]), tuple(B.shape[:-2])))
    L, U = L.expand(batch + (n, n)), U.expand(batch + (n, n))
    B = B.expand(batch + tuple(B.shape[-2:]))
    order = order.expand(batch + (n,))
    if not adjoint:         # X = U^-1 L^-1 P^T B
        y = tensorlib.linalg.solve_triangular(L, _rows(B, order), upper=False,
                                              unitriangular=True)
        return tensorlib.linalg.solve_triangular(U, y, upper=True)
    y = tensorlib.linalg.solve_triangular(U.mH, B, upper=False)   # X = P L^-H U^-H B
    y = tensorlib.linalg.solve_triangular(L.mH, y, upper=True, unitriangular=True)
    return _rows(y, tensorlib.argsort(order, dim=-1))


# ---- matrix exponential ----------------------------------------------------------------------
def matrix_exp(A):
    r"""exp(A) = sum A^k / k! of each square matrix."""
    if A.dtype in (tensorlib.float16, tensorlib.bfloat16):     # computed in float32
        _check_matrix("linalg.matrix_exp", A.float(), square=True)
        return matrix_exp(A.float()).to(A.dtype)
    _check_matrix("linalg.matrix_exp", A, square=True)
    from tensorlib.ops._factorization_grads import MatrixExp
    return MatrixExp.apply(A)


# ---- solve_ex, cond, tensorinv, tensorsolve, diagonal -----------------------------------------
def solve_ex(A, B, *, left=True, check_errors=False):
    r"""(X, info): solve's X and, per matrix, 0 or the index of a zero pivot. A singular
    matrix raises only with check_errors; otherwise its X is LAPACK's (inf/nan)."""
    _check_matrix("linalg.solve_ex", A, square=True)
    a = _host(A)
    info = _getrf_info(a) if a.size else np.zeros(a.shape[:-2], np.int32)
    if not info.any():
        return solve_ex_result(solve(A, B, left=left), _back(info, A, tensorlib.int32))
    if check_errors:
        return solve_ex_result(solve(A, B, left=left), None)    # raises solve's error
    return solve_ex_result(_singular_solve(A, B, left), _back(info, A, tensorlib.int32))


def _singular_solve(A, B, left):
    """LAPACK's getrs on the host after a getrf that found a zero pivot: the inf/nan
    PyTorch returns too (no gradient: there is no solution to differentiate)."""
    from scipy.linalg import lu_solve as getrs
    a, b = _host(A), _host(B)
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vector:
        b = b[..., None]
    if not left:
        a, b = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:]).reshape((-1,) + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    flat_b = b.reshape((-1,) + b.shape[-2:])
    lu_, piv, _ = _getrf(a, True)
    with np.errstate(all="ignore"):
        x = np.stack([getrs((m, p - 1), r, check_finite=False)
                      for m, p, r in zip(lu_, piv, flat_b)]).reshape(b.shape)
    if not left:
        x = np.swapaxes(x, -1, -2)
    return _back(x[..., 0] if vector else x, A)


def cond(A, p=None):
    r"""The condition number of A in the norm p: sigma_max / sigma_min for p in (None, 2, -2)
    (any shape), else ||A||_p ||A^-1||_p (square A)."""
    if A.dtype in (tensorlib.float16, tensorlib.bfloat16):
        raise NotImplementedError(f"\"linalg_svd_cpu\" not implemented for "
                                  f"'{A.dtype.scalar_name}'")
    if p in (None, 2, -2):
        _check_matrix("linalg.svd", A)
        if A.numel() == 0:
            return _empty_cond(A)
        s = svdvals(A)
        ratio = s[..., 0] / s[..., -1]
        return ratio if p != -2 else 1 / ratio
    _check_matrix(f"linalg.cond(ord={p})", A, square=True)
    if A.numel() == 0:
        return _empty_cond(A)
    norm = tensorlib.linalg.matrix_norm
    return norm(A, p) * norm(inv(A), p)


def _empty_cond(A):
    """PyTorch's condition number of empty matrices: zeros (real dtype), one per matrix."""
    real = tensorlib.empty(0, dtype=A.dtype).real.dtype if A.dtype.is_complex else A.dtype
    return tensorlib.zeros(tuple(A.shape[:-2]), dtype=real, device=A.device)


def tensorinv(A, ind=2):
    r"""The tensor B with tensordot(A, B, ind) the identity: A reshaped to a square matrix of
    (prod(A.shape[:ind]), prod(A.shape[ind:])), inverted, reshaped to shape[ind:] +
    shape[:ind]."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    left, right = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if prod(left) != prod(right):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) "
                           f"== prod(self.shape[:ind]), but got {prod(right)} != {prod(left)}")
    return inv(A.reshape(prod(left), prod(right))).reshape(right + left)


def tensorsolve(A, B, dims=None):
    r"""X with tensordot(A, X, X.dim()) = B; `dims` are dims of A moved to the end first."""
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        A = A.permute([d for d in range(A.dim()) if d not in dims] + dims)
    rest = tuple(A.shape[B.dim():])
    if prod(A.shape[:B.dim()]) != prod(rest) or tuple(A.shape[:B.dim()]) != tuple(B.shape):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other."
                           f"ndim:]) == prod(self.shape[:other.ndim]), but got "
                           f"{prod(rest)} != {prod(A.shape[:B.dim()])}")
    return solve(A.reshape(B.numel(), prod(rest)), B.reshape(-1)).reshape(rest)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    r"""torch.linalg.diagonal: torch.diagonal with the matrix dims last by default."""
    return tensorlib.diagonal(A, offset=offset, dim1=dim1, dim2=dim2)


def householder_product(A, tau):
    r"""The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H, v_i the i-th column of
    A below the diagonal with a unit i-th entry (geqrf's packed Q). Composed from
    differentiable ops, so gradients reach A and tau."""
    name = "torch.linalg.householder_product"
    if A.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if tau.dim() < 1 or tau.shape[-1] > n:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{name}: tau dtype {tau.dtype.scalar_name} does not match input "
                           f"dtype {A.dtype.scalar_name}")
    rows = tensorlib.arange(m, device=A.device).unsqueeze(-1)
    Q = tensorlib.eye(m, n, dtype=A.dtype, device=A.device).expand(tuple(A.shape))
    for i in reversed(range(tau.shape[-1])):
        column = A[..., :, i:i + 1]
        v = tensorlib.where(rows > i, column, (rows == i).to(A.dtype))
        t = tau[..., i].unsqueeze(-1).unsqueeze(-1)
        Q = Q - t * (v @ (v.mH @ Q))
    return Q
