"""QConfig: which observer makes the activation's and the weight's parameters."""
from collections import namedtuple

from tensorlib.ao.quantization.observer import (ObserverBase,
                                                default_dynamic_quant_observer,
                                                default_observer,
                                                default_per_channel_weight_observer,
                                                default_weight_observer)


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """A pair of observer factories (classes or with_args partials), not instances."""

    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, ObserverBase) or isinstance(weight, ObserverBase):
            raise ValueError("QConfig received observer instance, please pass observer class "
                             "instead. Use MyObserver.with_args(x=1) to override arguments to "
                             "constructor if needed")
        return super().__new__(cls, activation, weight)


default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                  weight=default_weight_observer)
per_channel_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                      weight=default_per_channel_weight_observer)
# the static configurations: quantize_dynamic takes their weight observers (per tensor, or
# per output channel) and quantizes activations per call
default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
default_per_channel_qconfig = QConfig(activation=default_observer,
                                      weight=default_per_channel_weight_observer)
