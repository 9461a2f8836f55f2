"""tensorlib.linalg (torch.linalg): norms and products (tensorlib/ops/linalg.py), and the
decompositions and solvers (tensorlib/ops/decompositions.py: LAPACK on the host, see
docs/linalg.md)."""
from tensorlib.ops.decompositions import (LinAlgError, cholesky_ex, eig, eigh,  # noqa: F401
                                          eigvals, eigvalsh, inv, inv_ex, lstsq, matrix_power,
                                          matrix_rank, multi_dot, pinv, slogdet, solve,
                                          solve_triangular, svdvals, vander)
from tensorlib.ops.decompositions import det  # noqa: F401
from tensorlib.ops.decompositions import linalg_cholesky as cholesky  # noqa: F401
from tensorlib.ops.decompositions import linalg_cross as cross  # noqa: F401
from tensorlib.ops.decompositions import linalg_qr as qr  # noqa: F401
from tensorlib.ops.decompositions import linalg_svd as svd  # noqa: F401
from tensorlib.ops.factorizations import (cond, diagonal, householder_product,  # noqa: F401
                                          lu, lu_factor, lu_factor_ex, lu_solve, matrix_exp,
                                          solve_ex, tensorinv, tensorsolve)
from tensorlib.ops.ldl import ldl_factor, ldl_factor_ex, ldl_solve  # noqa: F401
from tensorlib.ops.linalg import matmul, matrix_norm, norm, vector_norm  # noqa: F401


def vecdot(x, y, *, dim=-1):
    """sum(x * y, dim), broadcasting (real dtypes: no conjugation). Two vectors go through
    vdot in PyTorch, which does not broadcast."""
    if x.dim() == 1 and y.dim() == 1 and x.shape[0] != y.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{x.shape[0]}] and src "
                           f"[{y.shape[0]}] to have the same number of elements, but got "
                           f"{x.shape[0]} and {y.shape[0]} elements respectively")
    return (x * y).sum(dim)


__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig",
           "eigh", "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor",
           "ldl_factor_ex", "ldl_solve", "lstsq",
           "lu", "lu_factor",
           "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
           "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex",
           "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot",
           "vector_norm"]

from tensorlib.ops import _out  # noqa: E402 - out= on the functions that take it in PyTorch
_out.install(globals(), _out.LINALG_RULE, "linalg.")

# torch.linalg.LinAlgError is torch._C._LinAlgError: code catches it by either name
from tensorlib import _C  # noqa: E402
_C._LinAlgError = LinAlgError
