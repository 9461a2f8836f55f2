"""PairwiseDistance and CosineSimilarity (the math is in nn.functional)."""
from tensorlib.nn import functional as F
from tensorlib.nn.modules.module import Module

__all__ = ["PairwiseDistance", "CosineSimilarity"]


class PairwiseDistance(Module):
    r"""||x1 - x2 + eps||_p over the last dim.

    Args:
        p: the norm degree (may be negative, or inf). Default: 2
        eps: added to the difference to avoid division by zero. Default: 1e-6
        keepdim: keep the reduced dim as size 1. Default: False
    """

    __constants__ = ["norm", "eps", "keepdim"]

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    r"""x1 . x2 / (max(||x1||, eps) * max(||x2||, eps)) along dim.

    Args:
        dim: the dimension compared. Default: 1
        eps: lower bound of the norms. Default: 1e-8
    """

    __constants__ = ["dim", "eps"]

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
