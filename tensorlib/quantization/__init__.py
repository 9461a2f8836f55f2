"""torch.quantization: the older name of tensorlib.ao.quantization (the same objects)."""
from tensorlib.ao.quantization import *  # noqa: F401,F403
from tensorlib.ao.quantization import __all__  # noqa: F401
