"""torch.nn.quantized.dynamic: the older name of tensorlib.ao.nn.quantized.dynamic."""
from tensorlib.ao.nn.quantized.dynamic import LSTM, Linear  # noqa: F401

__all__ = ["Linear", "LSTM"]
