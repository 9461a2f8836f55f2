"""torch.ao: quantization (`quantization`) and the quantized modules (`nn`)."""
from tensorlib.ao import quantization  # noqa: I001 - first: ao.nn reads its types
from tensorlib.ao import nn

__all__ = ["nn", "quantization"]
