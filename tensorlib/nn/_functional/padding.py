"""nn.functional.pad: the op lives in tensorlib.ops.joining (constant_pad_nd's family)."""
from tensorlib.ops.joining import pad

__all__ = ["pad"]
