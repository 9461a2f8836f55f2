"""Padding layers (torch.nn.modules.padding): each holds its padding and calls F.pad."""
from tensorlib.nn import functional as F
from tensorlib.nn.modules.module import Module

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]


def _pads(padding, n):
    """An int pads every side; a sequence is used as given (PyTorch's _ntuple)."""
    return tuple(padding) if isinstance(padding, (list, tuple)) else (padding,) * (2 * n)


class _PadNd(Module):
    """One padding mode over the last `_dims` dims; inputs have _dims + 1 or + 2 dims."""
    __constants__ = ["padding"]
    _mode = "constant"
    _dims = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _pads(padding, self._dims)

    def _check_input_dim(self, input):  # noqa: A002
        """Only the circular modules check the rank (ValueError), as in PyTorch."""

    def forward(self, input):  # noqa: A002
        self._check_input_dim(input)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):  # noqa: A002
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def _check_input_dim(self, input):  # noqa: A002
        if input.dim() not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got "
                             f"{input.dim()}D input)")


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


def _family(base, prefix):
    return [type(f"{prefix}{n}d", (base,), {"_dims": n, "__module__": __name__,
                                             "__doc__": f"{base.__doc__ or prefix} over the "
                                                        f"last {n} dim(s)."})
            for n in (1, 2, 3)]


_ConstantPadNd.__doc__ = "Pads with a constant value"
_ZeroPadNd.__doc__ = "Pads with zeros"
_CircularPadNd.__doc__ = "Pads by wrapping around (the start pads the end)"
_ReflectionPadNd.__doc__ = "Pads with the reflection of the input, the edge not repeated"
_ReplicationPadNd.__doc__ = "Pads by repeating the edge values"

ConstantPad1d, ConstantPad2d, ConstantPad3d = _family(_ConstantPadNd, "ConstantPad")
ZeroPad1d, ZeroPad2d, ZeroPad3d = _family(_ZeroPadNd, "ZeroPad")
CircularPad1d, CircularPad2d, CircularPad3d = _family(_CircularPadNd, "CircularPad")
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = _family(_ReflectionPadNd, "ReflectionPad")
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = _family(_ReplicationPadNd,
                                                               "ReplicationPad")
