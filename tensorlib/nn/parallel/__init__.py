"""tensorlib.nn.parallel: DataParallel and DistributedDataParallel (torch.nn.parallel)."""
from tensorlib.nn.parallel.data_parallel import DataParallel, data_parallel
from tensorlib.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
