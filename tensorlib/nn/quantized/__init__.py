"""torch.nn.quantized: the older name of tensorlib.ao.nn.quantized."""
from tensorlib.ao.nn.quantized import dynamic  # noqa: F401

__all__ = ["dynamic"]
