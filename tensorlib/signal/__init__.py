"""`torch.signal`: the window functions (`signal.windows`)."""
from tensorlib.signal import windows  # noqa: F401

__all__ = ["windows"]
