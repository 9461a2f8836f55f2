"""tensorlib.utils: data loading, checkpointing, hooks, TensorBoard, determinism switches,
pytrees (_pytree)."""
from tensorlib.utils import deterministic  # noqa: F401 - torch.utils.deterministic
from tensorlib.utils import _pytree, checkpoint  # noqa: F401 - torch.utils.checkpoint, ._pytree
