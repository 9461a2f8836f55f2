"""torch.distributed.nn: differentiable collectives (`functional`), also importable from here
as in torch. RemoteModule needs torch.distributed.rpc, which tensorlib does not provide."""
from tensorlib.distributed.nn.functional import (  # noqa: F401
    all_gather, all_reduce, all_to_all, all_to_all_single, broadcast, gather, reduce,
    reduce_scatter, scatter)
from tensorlib.distributed.nn import functional  # noqa: F401

__all__ = ["functional", "all_gather", "all_reduce", "all_to_all", "all_to_all_single",
           "broadcast", "gather", "reduce", "reduce_scatter", "scatter"]
