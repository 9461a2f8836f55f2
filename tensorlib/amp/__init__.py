"""tensorlib.amp: automatic mixed precision (autocast regions and loss scaling)."""
from tensorlib.amp.autocast_mode import (autocast, is_autocast_enabled, get_autocast_dtype,
                                         set_autocast_enabled, set_autocast_dtype,
                                         is_autocast_cache_enabled, set_autocast_cache_enabled,
                                         clear_autocast_cache, custom_bwd, custom_fwd,
                                         is_autocast_available)
from tensorlib.amp.grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "is_autocast_enabled", "get_autocast_dtype",
           "set_autocast_enabled", "set_autocast_dtype", "is_autocast_cache_enabled",
           "set_autocast_cache_enabled", "clear_autocast_cache", "custom_bwd", "custom_fwd",
           "is_autocast_available"]
