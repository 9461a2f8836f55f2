"""Upsample and its fixed-mode variants (the math in nn.functional.interpolate)."""
from tensorlib.nn import functional as F
from tensorlib.nn.modules.module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    r"""Upsample (N, C, *spatial) data to `size` or by `scale_factor`.

    Args:
        size: output spatial size (int or tuple); scale_factor: multiplier (float or tuple);
            give one of the two
        mode: 'nearest' (default), 'nearest-exact', 'linear', 'bilinear', 'bicubic',
            'trilinear', 'area'
        align_corners: linear modes only: align the corner pixels' centres
        recompute_scale_factor: derive the scale from the output size instead

    Examples::

        >>> m = nn.Upsample(scale_factor=2, mode="bilinear")
        >>> m(tensorlib.arange(1., 5.).view(1, 1, 2, 2)).shape
        tensorlib.Size([1, 1, 4, 4])
    """

    __constants__ = ["size", "scale_factor", "mode", "align_corners", "name",
                     "recompute_scale_factor"]

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):  # noqa: A002
        return F.interpolate(input, self.size, self.scale_factor, self.mode,
                             self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def __setstate__(self, state):
        if "recompute_scale_factor" not in state:
            state["recompute_scale_factor"] = True
        super().__setstate__(state)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    r"""2-D nearest-neighbour upsampling (Upsample with mode='nearest')."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    r"""2-D bilinear upsampling with align_corners=True."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
