"""tensorlib.utils.tensorboard: TensorBoard logs through the `tensorboard` package's own
event-file writer (pip install tensorlib[tensorboard])."""
try:
    import tensorboard  # noqa: F401
except ImportError as e:
    raise ImportError("tensorlib.utils.tensorboard needs the tensorboard package: "
                      "pip install tensorboard (or tensorlib[tensorboard])") from e

from tensorlib.utils.tensorboard.writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "SummaryWriter"]
