"""tensorlib.utils: data loading, checkpointing, hooks, TensorBoard, determinism switches."""
from tensorlib.utils import deterministic  # noqa: F401 - torch.utils.deterministic
