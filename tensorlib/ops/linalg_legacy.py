"""PyTorch's older top-level linear-algebra names, kept for the programs that still call
them: chain_matmul, matrix_exp, triangular_solve, frobenius_norm, nuclear_norm (each the
linalg function it became, with PyTorch's deprecation warning), and matrix_rank, which PyTorch
removed and answers with a RuntimeError naming linalg.matrix_rank."""
import warnings
from collections import namedtuple

__all__ = ["chain_matmul", "frobenius_norm", "matrix_exp", "matrix_rank", "nuclear_norm",
           "triangular_solve"]

triangular_solve_result = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


def chain_matmul(*matrices, out=None):
    from tensorlib import linalg
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
                  "more tensors rather than multiple parameters.", UserWarning, stacklevel=2)
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        result = matrices[0].clone()
        if result.dim() != 2:
            raise RuntimeError(f"chain_matmul(): Tensor 0 must be 2D, got "
                               f"{result.dim()}D tensor")
    else:
        result = linalg.multi_dot(list(matrices))
    return result if out is None else out.resize_(result.shape).copy_(result)


def matrix_exp(input):  # noqa: A002 - PyTorch's name
    from tensorlib import linalg
    return linalg.matrix_exp(input)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """X with op(A) X = b, A triangular; returns (X, a copy of A) as PyTorch does."""
    from tensorlib import linalg
    warnings.warn("torch.triangular_solve is deprecated in favor of "
                  "torch.linalg.solve_triangular and will be removed in a future PyTorch "
                  "release.", UserWarning, stacklevel=2)
    if b.dim() < 2 or A.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: The input tensor {'b' if b.dim() < 2 else 'A'}"
                           f" must have at least 2 dimensions.")
    coefficient = A.mT if transpose else A
    solution = linalg.solve_triangular(coefficient, b, upper=upper != transpose,
                                       unitriangular=unitriangular)
    result = triangular_solve_result(solution, A.clone())
    if out is not None:
        for target, value in zip(out, result):
            target.resize_(value.shape).copy_(value)
        return triangular_solve_result(*out)
    return result


def frobenius_norm(input, dim, keepdim=False, *, out=None):  # noqa: A002
    from tensorlib import linalg
    warnings.warn("at::frobenius_norm is deprecated and it is just left for JIT compatibility. "
                  "Please use `linalg.vector_norm(A, 2., dim, keepdim)` instead", UserWarning,
                  stacklevel=2)
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions "
                           f"instead.")
    result = linalg.vector_norm(input, 2.0, dim, keepdim)
    return result if out is None else out.resize_(result.shape).copy_(result)


def nuclear_norm(input, dim=(-2, -1), keepdim=False, *, out=None):  # noqa: A002
    from tensorlib import linalg
    warnings.warn("at::nuclear_norm is deprecated and it is just left for JIT compatibility. "
                  "Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead",
                  UserWarning, stacklevel=2)
    if isinstance(dim, bool):            # torch.nuclear_norm(input, keepdim)
        dim, keepdim = (-2, -1), dim
    result = linalg.matrix_norm(input, "nuc", tuple(dim), keepdim)
    return result if out is None else out.resize_(result.shape).copy_(result)


def matrix_rank(*args, **kwargs):
    raise RuntimeError("This function was deprecated since version 1.9 and is now removed.\n"
                       "Please use the `torch.linalg.matrix_rank` function instead. The "
                       "parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to "
                       "'hermitian'.")


TENSOR_METHODS = {"matrix_exp": matrix_exp, "triangular_solve": triangular_solve}
