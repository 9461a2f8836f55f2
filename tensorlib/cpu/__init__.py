"""tensorlib.cpu: the deprecated `tensorlib.cpu.amp` spellings."""
from tensorlib.cpu import amp  # noqa: F401
