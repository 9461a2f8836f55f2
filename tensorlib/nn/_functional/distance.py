r"""nn.functional: distances and similarities (pairwise_distance, cosine_similarity, pdist),
written in tensorlib ops (vector_norm, sum, ...)."""
import tensorlib
from tensorlib._C.broadcast import broadcast_shapes
from tensorlib.ops._autocast import autocast_op

__all__ = ["pairwise_distance", "cosine_similarity", "pdist"]


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    r"""||x1 - x2 + eps||_p over the last dim (of the broadcast inputs).

    Shape: x1 (N, D) or (D,), x2 broadcastable to it; output (N,) or () (keepdim: a size-1
    last dim).
    """
    out_dim = max(x1.dim(), x2.dim())
    if out_dim == 0:
        raise RuntimeError("pairwise_distance: expected at least 1-D inputs, got 0-D inputs")
    diff = x1 - x2 + eps
    return tensorlib.linalg.vector_norm(diff, p, out_dim - 1, keepdim=keepdim)


@autocast_op("cosine_similarity")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    r"""sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps)) along dim, after broadcasting.

    As PyTorch, each input is divided by its (clamped) norm first, which keeps the result in
    [-1, 1]; the clamp is not differentiated (the gradient flows through the norm).
    """
    shape = broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    nd = len(shape)
    if not (-max(nd, 1) <= dim < max(nd, 1)):
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(nd, 1)}, {max(nd, 1) - 1}], but got {dim})")
    if not x1.dtype.is_floating_point:
        x1 = x1.to(tensorlib.get_default_dtype())
    if not x2.dtype.is_floating_point:
        x2 = x2.to(tensorlib.get_default_dtype())
    x1, x2 = x1.expand(shape), x2.expand(shape)

    def _norm(x):
        n = tensorlib.linalg.vector_norm(x, 2, dim, keepdim=True)
        return n + (n.clamp_min(eps) - n).detach()

    return ((x1 / _norm(x1)) * (x2 / _norm(x2))).sum(dim)


@autocast_op("pdist")
def pdist(input, p=2):  # noqa: A002
    r"""The p-norm distances between every pair of rows i < j of an (N, M) input, in row-major
    order of the upper triangle: output (N * (N - 1) / 2,)."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    rows = [i for i in range(n) for _ in range(i + 1, n)]
    cols = [j for i in range(n) for j in range(i + 1, n)]
    if not rows:
        return tensorlib.zeros(0, dtype=input.dtype, device=input.device)
    ri = tensorlib.tensor(rows, dtype=tensorlib.int64, device=input.device)
    ci = tensorlib.tensor(cols, dtype=tensorlib.int64, device=input.device)
    diff = input.index_select(0, ri) - input.index_select(0, ci)
    return tensorlib.linalg.vector_norm(diff, p, 1)
