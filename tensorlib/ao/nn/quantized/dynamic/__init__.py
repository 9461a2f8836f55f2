"""torch.ao.nn.quantized.dynamic: modules whose weights are quantized ahead of time and whose
activations are quantized on each call (quantize_dynamic's replacements)."""
from tensorlib.ao.nn.quantized.dynamic.modules import LSTM, Linear

__all__ = ["Linear", "LSTM"]
