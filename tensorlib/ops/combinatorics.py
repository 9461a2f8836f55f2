"""Index and combination builders (tril_indices, triu_indices, cartesian_prod, combinations)
and pairwise distances (cdist), in tensorlib ops."""
import itertools

import tensorlib._C.dtypes as dt

__all__ = ["tril_indices", "triu_indices", "cartesian_prod", "combinations", "cdist",
           "unravel_index"]


def _triangle(row, col, offset, lower, dtype, device):
    import tensorlib
    if row < 0 or col < 0:
        raise RuntimeError(f"row must be non-negative, got{row}" if row < 0 else
                           f"col must be non-negative, got{col}")
    r = tensorlib.arange(row, dtype=dt.int64, device=device).unsqueeze(1).expand(row, col)
    c = tensorlib.arange(col, dtype=dt.int64, device=device).unsqueeze(0).expand(row, col)
    keep = (c - r <= offset) if lower else (c - r >= offset)
    return tensorlib.stack([r[keep], c[keep]]).to(dtype)


def tril_indices(row, col, offset=0, *, dtype=dt.int64, device=None, layout=None,
                 pin_memory=False):
    """The (2, N) row/column indices of the lower triangle, row by row."""
    return _triangle(row, col, offset, True, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=dt.int64, device=None, layout=None,
                 pin_memory=False):
    """The (2, N) row/column indices of the upper triangle, row by row."""
    return _triangle(row, col, offset, False, dtype, device)


def cartesian_prod(*tensors):
    """Every tuple of one element from each 1-D tensor, in row-major order, as rows."""
    import tensorlib
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = tensorlib.meshgrid(*tensors, indexing="ij")
    return tensorlib.stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):  # noqa: A002
    """The r-length combinations of a 1-D tensor's elements (itertools' order), as rows;
    differentiable (a gather)."""
    import tensorlib
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return tensorlib.empty(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    if not rows:
        return tensorlib.empty(0, r, dtype=input.dtype, device=input.device)
    index = tensorlib.tensor(rows, dtype=dt.int64, device=input.device)
    return input[index]


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """||x1[..., i, :] - x2[..., j, :]||_p for every pair, batched; p = 2 uses the
    ||a||^2 + ||b||^2 - 2 a.b expansion (one GEMM) when PyTorch would (more than 25 rows or
    asked for), else the direct difference."""
    import tensorlib
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D"
                           if x1.dim() < 2 else
                           f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    use_mm = compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode == "use_mm_for_euclid_dist_if_necessary"
        and (x1.shape[-2] > 25 or x2.shape[-2] > 25))
    if p == 2 and use_mm:
        sq1 = (x1 * x1).sum(-1, keepdim=True)
        sq2 = (x2 * x2).sum(-1, keepdim=True)
        d2 = sq1 - 2 * (x1 @ x2.mT) + sq2.mT
        return d2.clamp(min=0).sqrt()
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return tensorlib.linalg.vector_norm(diff, p, dim=-1)


def unravel_index(indices, shape):
    """The coordinates in `shape` of flat indices, one int64 tensor per dimension (negative
    indices wrap as PyTorch's floor division and remainder make them)."""
    from tensorlib.ops.creation import tensor
    if indices._dtype.category >= 2 or indices._dtype is dt.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices._dtype}")
    if isinstance(shape, int):
        shape = (shape,)
    elif not isinstance(shape, (tuple, list)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    for size in shape:
        if not isinstance(size, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                            f"{type(size)}")
    if any(size < 0 for size in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    strides = list(itertools.accumulate(reversed((*shape[1:], 1)), lambda a, b: a * b))[::-1]
    device = indices.device
    flat = indices.unsqueeze(-1).floor_divide(tensor(strides, dtype=dt.int64, device=device))
    return (flat % tensor(list(shape), dtype=dt.int64, device=device)).unbind(-1)
