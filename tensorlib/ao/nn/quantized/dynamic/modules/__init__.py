"""The dynamically quantized modules."""
from tensorlib.ao.nn.quantized.dynamic.modules.linear import Linear

__all__ = ["Linear"]
