"""torch.ao.nn: the quantized module namespaces."""
from tensorlib.ao.nn import quantized

__all__ = ["quantized"]
