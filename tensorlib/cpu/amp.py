"""Deprecated: `tensorlib.cpu.amp.autocast(...)` is `tensorlib.amp.autocast("cpu", ...)`."""
import warnings

import tensorlib
from tensorlib.amp import autocast_mode as _mode
from tensorlib.amp.grad_scaler import GradScaler as _GradScaler


class autocast(_mode.autocast):
    def __init__(self, enabled=True, dtype=tensorlib.bfloat16, cache_enabled=True):
        warnings.warn("`tensorlib.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`tensorlib.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`tensorlib.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`tensorlib.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)
