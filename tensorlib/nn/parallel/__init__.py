"""tensorlib.nn.parallel: DataParallel and DistributedDataParallel (torch.nn.parallel)."""
from tensorlib.nn.parallel.data_parallel import DataParallel, data_parallel
from tensorlib.nn.parallel.distributed import DistributedDataParallel
from tensorlib.nn.parallel import scatter_gather  # noqa: F401 - torch.nn.parallel.scatter_gather

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
