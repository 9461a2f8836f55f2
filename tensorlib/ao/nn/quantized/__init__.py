"""torch.ao.nn.quantized: the quantized modules (the dynamic ones in `dynamic`)."""
from tensorlib.ao.nn.quantized import dynamic

__all__ = ["dynamic"]
