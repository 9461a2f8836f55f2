"""The dynamically quantized modules."""
from tensorlib.ao.nn.quantized.dynamic.modules.linear import Linear
from tensorlib.ao.nn.quantized.dynamic.modules.rnn import LSTM

__all__ = ["Linear", "LSTM"]
