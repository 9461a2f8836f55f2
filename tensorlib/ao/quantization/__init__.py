"""torch.ao.quantization: quantized tensors (`_qtensor`, `_qtypes`), observers, QConfig and
quantize_dynamic (`quantize`). Static quantization's prepare/convert raise NotImplementedError."""
from tensorlib.ao.quantization._qtensor import (QuantizedTensor, dequantize,  # noqa: F401
                                                quantize_per_channel, quantize_per_tensor)
from tensorlib.ao.quantization.observer import (MinMaxObserver, ObserverBase,  # noqa: F401
                                                PerChannelMinMaxObserver, PlaceholderObserver,
                                                default_dynamic_quant_observer,
                                                default_observer,
                                                default_per_channel_weight_observer,
                                                default_weight_observer)
from tensorlib.ao.quantization.qconfig import (QConfig, default_dynamic_qconfig,  # noqa: F401
                                               default_per_channel_qconfig, default_qconfig,
                                               per_channel_dynamic_qconfig)
from tensorlib.ao.quantization.quantize import (DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS,  # noqa: F401
                                                convert, prepare, prepare_qat, quantize,
                                                quantize_dynamic)
from tensorlib.ao.quantization.stubs import DeQuantStub, QuantStub, QuantWrapper  # noqa: F401

__all__ = ["quantize_dynamic", "quantize_per_tensor", "quantize_per_channel", "dequantize",
           "QConfig", "default_dynamic_qconfig", "per_channel_dynamic_qconfig",
           "default_qconfig", "default_per_channel_qconfig",
           "MinMaxObserver", "PerChannelMinMaxObserver", "PlaceholderObserver", "prepare",
           "convert", "quantize", "prepare_qat", "QuantStub", "DeQuantStub", "QuantWrapper"]
