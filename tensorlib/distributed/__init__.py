"""tensorlib.distributed: torch.distributed's API on MPI (mpi4py).

Process groups, tensor collectives on tensors of any device (staged through host memory),
object collectives, and a torchrun-compatible launcher (`python -m tensorlib.distributed.run`,
`tensorlib-run`). "mpi" is the engine; "gloo" and "nccl" are aliases of it. A world of one
process needs no MPI. See docs/distributed.md."""
from tensorlib.distributed._errors import DistBackendError, DistError, DistStoreError
from tensorlib.distributed._reduce_op import ReduceOp
from tensorlib.distributed._work import Work
from tensorlib.distributed._process_group import (  # noqa: F401
    Backend, GroupMember, ProcessGroup, default_pg_timeout, destroy_process_group,
    get_backend, get_global_rank, get_group_rank, get_process_group_ranks, get_rank,
    get_world_size, group, init_process_group, is_available, is_gloo_available,
    is_initialized, is_mpi_available, is_nccl_available, is_torchelastic_launched, new_group)
from tensorlib.distributed._collectives import (  # noqa: F401
    all_gather, all_gather_into_tensor, all_reduce, all_to_all, all_to_all_single, barrier,
    broadcast, gather, irecv, isend, recv, reduce, reduce_scatter, reduce_scatter_tensor,
    scatter, send)
from tensorlib.distributed._objects import (  # noqa: F401
    all_gather_object, broadcast_object_list, gather_object)
from tensorlib.distributed.store import HashStore, PrefixStore, Store, TCPStore  # noqa: F401

# the first gradient bucket of DistributedDataParallel is small so that its all-reduce
# starts early in backward (PyTorch's value)
_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024

__all__ = [
    "DistError", "DistBackendError", "DistStoreError", "ReduceOp", "Work", "Backend",
    "GroupMember", "ProcessGroup", "group", "default_pg_timeout", "is_available",
    "is_mpi_available", "is_gloo_available", "is_nccl_available", "is_torchelastic_launched",
    "init_process_group", "is_initialized", "destroy_process_group", "get_rank",
    "get_world_size", "get_backend", "new_group", "get_process_group_ranks",
    "get_global_rank", "get_group_rank", "barrier", "all_reduce", "broadcast", "reduce",
    "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor",
    "gather", "scatter", "all_to_all", "all_to_all_single", "send", "recv", "isend", "irecv",
    "all_gather_object", "broadcast_object_list", "gather_object",
    "Store", "HashStore", "TCPStore", "PrefixStore",
]
