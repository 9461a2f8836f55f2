"""torch.linalg.ldl_factor(_ex) and ldl_solve: the Bunch-Kaufman LDL^T (LDL^H) factorisation
of symmetric (Hermitian) matrices, LAPACK's sytrf/hetrf and sytrs/hetrs on the host (scipy,
per matrix), as PyTorch's. The factor is the lower triangle with D's 1x1 and 2x2 blocks on
and below the diagonal; pivots are LAPACK's 1-based ipiv (negative for a 2x2 block). As in
PyTorch neither has a derivative: backward through them raises."""
from collections import namedtuple
from math import prod

import numpy as np

import tensorlib
from tensorlib.ops.decompositions import LinAlgError, _back, _host

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve"]

ldl_factor_result = namedtuple("linalg_ldl_factor", ["LD", "pivots"])
ldl_factor_ex_result = namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])


def _no_derivative(name, result, *inputs):
    """result joined to the graph of inputs by a node whose backward raises (PyTorch's
    not-implemented derivative), so the error comes at backward, not at the call."""
    if not tensorlib.is_grad_enabled() or not any(x.requires_grad for x in inputs):
        return result
    from tensorlib.ops._factorization_grads import NotImplementedDerivative
    return NotImplementedDerivative.apply(name, result, *inputs)


def _check_factor_input(name, A):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype.scalar_name}")
    if A.dtype in (tensorlib.float16, tensorlib.bfloat16):
        raise NotImplementedError(f"\"ldl_factor_kernel_cpu\" not implemented for "
                                  f"'{A.dtype.scalar_name}'")


def _routine(kind, a, hermitian):
    from scipy.linalg import lapack
    prefix = "he" if hermitian and np.iscomplexobj(a) else "sy"
    return lapack.get_lapack_funcs(prefix + kind, (a,))


def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    r"""(LD, pivots, info) of the symmetric (hermitian=True: Hermitian) matrices A, read from
    their lower triangles; info is 0, or k when D[k-1, k-1] is exactly zero (singular)."""
    name = "torch.linalg.ldl_factor_ex"
    _check_factor_input(name, A)
    a = _host(A)
    n = a.shape[-1]
    flat = a.reshape((prod(a.shape[:-2]), n, n))
    ld = np.zeros_like(flat)
    pivots = np.tile(np.arange(1, n + 1, dtype=np.int32), (flat.shape[0], 1))
    info = np.zeros(flat.shape[0], np.int32)
    if flat.size:
        sytrf = _routine("trf", a, hermitian)
        for i, matrix in enumerate(flat):
            factor, pivots[i], info[i] = sytrf(matrix, lower=1)
            ld[i] = np.tril(factor)
    if check_errors and info.any():
        k = int(info[info > 0][0])
        raise LinAlgError(f"{name}: The factorization could not be completed because the "
                          f"input is singular: D[{k - 1},{k - 1}] is zero.")
    batch = a.shape[:-2]
    LD = _no_derivative("linalg_ldl_factor_ex", _back(ld.reshape(a.shape), A), A)
    return ldl_factor_ex_result(LD, _back(pivots.reshape(batch + (n,)), A, tensorlib.int32),
                                _back(info.reshape(batch), A, tensorlib.int32))


def ldl_factor(A, *, hermitian=False):
    r"""(LD, pivots) of A (see ldl_factor_ex); a singular A raises LinAlgError."""
    LD, pivots, _ = ldl_factor_ex(A, hermitian=hermitian, check_errors=True)
    return ldl_factor_result(LD, pivots)


def ldl_solve(LD, pivots, B, *, hermitian=False):
    r"""X with A X = B for A given by ldl_factor's (LD, pivots), batched with broadcasting."""
    name = "torch.linalg.ldl_solve"
    if LD.dim() < 2 or LD.shape[-1] != LD.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{LD.shape[-2] if LD.dim() > 1 else 1} by {LD.shape[-1]} matrices")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by "
                           f"{n} but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    if B.dtype != LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{B.dtype.scalar_name} and A of type {LD.dtype.scalar_name} "
                           f"instead.")
    if pivots.dtype.is_floating_point or pivots.dtype.is_complex:
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got "
                           f"{pivots.dtype.scalar_name}")
    batch = tuple(np.broadcast_shapes(tuple(LD.shape[:-2]), tuple(pivots.shape[:-1]),
                                      tuple(B.shape[:-2])))
    count = prod(batch)
    ld = np.broadcast_to(_host(LD), batch + (n, n)).reshape((count, n, n))
    piv = np.broadcast_to(_host(pivots).astype(np.int32), batch + (n,)).reshape((count, n))
    b = _host(B)
    k = b.shape[-1]
    b = np.broadcast_to(b, batch + (n, k)).reshape((count, n, k))
    x = np.zeros(b.shape, dtype=b.dtype)
    if x.size:
        sytrs = _routine("trs", ld, hermitian)
        for i in range(x.shape[0]):
            x[i], _ = sytrs(ld[i], piv[i], b[i], lower=1)
    out = _back(x.reshape(batch + (n, k)), B)
    return _no_derivative("linalg_ldl_solve", out, LD, B)
