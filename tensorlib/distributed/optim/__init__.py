"""torch.distributed.optim: optimizers for data-parallel training (ZeroRedundancyOptimizer:
optimizer state sharded over the ranks). The RPC-based DistributedOptimizer and the
functional optimizers are not provided."""
from tensorlib.distributed.optim.zero_redundancy import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
