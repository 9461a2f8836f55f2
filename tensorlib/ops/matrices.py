"""Matrices built from tensors, with torch's names: vander (decreasing powers, unlike
linalg.vander), block_diag, diagflat, and renorm (each slice's norm capped). Composites of
existing ops: every backend, differentiable through their parts."""
import functools

from tensorlib._C.tensor_impl import TensorImpl
from tensorlib._C.views import wrap_dim

__all__ = ["vander", "block_diag", "diagflat", "renorm"]


def _tl():
    import tensorlib
    return tensorlib


def vander(x, N=None, increasing=False):
    """Columns x^(N-1), ..., x^1, x^0 of a 1-D x (increasing: x^0 first); N defaults to
    len(x). Integers and bool give int64, as torch."""
    tl = _tl()
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if x.dtype is tl.bool or not x.dtype.category >= 2:
        x = x.to(tl.int64)
    ones = tl.ones((x.shape[0], min(n, 1)), dtype=x.dtype, device=x.device)
    if n <= 1:
        out = ones
    else:
        powers = tl.cumprod(x.unsqueeze(-1).expand(x.shape[0], n - 1), -1)
        out = tl.cat([ones, powers], -1)
    return out if increasing else out.flip(-1)


def block_diag(*tensors):
    """The block-diagonal matrix of the inputs (0-D: 1x1, 1-D: one row, 2-D as they are),
    of their promoted dtype; zero elsewhere."""
    tl = _tl()
    blocks = []
    for i, t in enumerate(tensors):
        if not isinstance(t, TensorImpl):
            raise TypeError(f"block_diag(): argument 'tensors' must be tuple of Tensors, not "
                            f"{type(t).__name__}")
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.dim()} dimensions")
        blocks.append(t.reshape(1, -1) if t.dim() < 2 else t)
    if not blocks:
        return tl.empty((1, 0))
    dtype = functools.reduce(tl.promote_types, (b.dtype for b in blocks))
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        right = width - left - b.shape[1]
        rows.append(tl.nn.functional.pad(b.to(dtype), (left, right)))
        left += b.shape[1]
    return tl.cat(rows, 0)


def diagflat(input, offset=0):  # noqa: A002
    """The 2-D matrix with the flattened input on its offset-th diagonal."""
    return _tl().diag(input.reshape(-1), offset)


def renorm(input, p, dim, maxnorm):  # noqa: A002
    """Each slice along dim whose p-norm (over the other dims) exceeds maxnorm, scaled to
    norm maxnorm (by maxnorm / (norm + 1e-7), torch's factor); the rest unchanged."""
    tl = _tl()
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} "
                           f"dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    dim = wrap_dim(dim, input.dim())
    others = tuple(d for d in range(input.dim()) if d != dim)
    norms = tl.linalg.vector_norm(input, p, others, keepdim=True)
    factor = tl.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return input * factor.to(input.dtype)


def _renorm_(self, p, dim, maxnorm):
    from tensorlib.ops._inplace import inplace_composite
    return inplace_composite(renorm)(self, p, dim, maxnorm)


TENSOR_METHODS = {"diagflat": diagflat, "renorm": renorm, "renorm_": _renorm_}
