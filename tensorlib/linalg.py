"""tensorlib.linalg (torch.linalg): the norms, and the products that torch.linalg also names.
The functions live in tensorlib/ops/linalg.py."""
from tensorlib.ops.linalg import matmul, matrix_norm, norm, vector_norm  # noqa: F401


def vecdot(x, y, *, dim=-1):
    """sum(x * y, dim), broadcasting (real dtypes: no conjugation)."""
    return (x * y).sum(dim)


__all__ = ["norm", "vector_norm", "matrix_norm", "matmul", "vecdot"]
