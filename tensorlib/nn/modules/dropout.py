"""Dropout layers: active in training mode, the identity in eval mode; the math is in
nn.functional (dropout.py there)."""
from tensorlib.nn import functional as F
from tensorlib.nn.modules.module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    r"""During training, zeroes each element with probability p (drawn from tensorlib's
    generator) and scales the others by 1 / (1 - p); the identity in eval mode.

    Args:
        p: probability of an element to be zeroed. Default: 0.5
        inplace: do the operation in place. Default: False
    """

    def forward(self, input):  # noqa: A002
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    r"""Zeroes whole channels of (N, C, L) or (C, L) inputs with probability p."""

    def forward(self, input):  # noqa: A002
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    r"""Zeroes whole channels of (N, C, H, W) or (C, H, W) inputs with probability p."""

    def forward(self, input):  # noqa: A002
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    r"""Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) inputs with probability p."""

    def forward(self, input):  # noqa: A002
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    r"""Dropout that keeps the self-normalizing property of SELU networks (zero mean, unit
    variance)."""

    def forward(self, input):  # noqa: A002
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    r"""AlphaDropout of whole channels."""

    def forward(self, input):  # noqa: A002
        return F.feature_alpha_dropout(input, self.p, self.training)
