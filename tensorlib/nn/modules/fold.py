"""Fold / Unfold: sliding local blocks <-> images (col2im / im2col)."""
from tensorlib.nn import functional as F
from tensorlib.nn.modules.module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    r"""Combine an array of sliding local blocks into a tensor, summing overlaps:
    (N, C * prod(kernel_size), L) -> (N, C, *output_size) (unbatched inputs too).

    L must be the number of block positions: prod over dims of
    floor((output_size[d] + 2 padding[d] - dilation[d] (kernel_size[d] - 1) - 1)
    / stride[d] + 1).
    """

    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):  # noqa: A002
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self):
        return ("output_size={output_size}, kernel_size={kernel_size}, dilation={dilation}, "
                "padding={padding}, stride={stride}".format(**self.__dict__))


class Unfold(Module):
    r"""Extract sliding local blocks: (N, C, H, W) -> (N, C * prod(kernel_size), L)."""

    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):  # noqa: A002
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return ("kernel_size={kernel_size}, dilation={dilation}, padding={padding}, "
                "stride={stride}".format(**self.__dict__))
