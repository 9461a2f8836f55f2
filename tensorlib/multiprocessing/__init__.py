"""tensorlib.multiprocessing: the standard library's multiprocessing (every name of it), with
CPU tensors passed through shared memory (see _sharing.py), `spawn`, and PyTorch's
sharing-strategy switches."""
import multiprocessing as _mp
from multiprocessing import *  # noqa: F401,F403

import tensorlib as _tensorlib
from tensorlib.multiprocessing._sharing import init_reductions, is_shared, share_memory_
from tensorlib.multiprocessing.spawn import (ProcessContext, ProcessException,  # noqa: F401
                                             ProcessExitedException, ProcessRaisedException,
                                             spawn, start_processes)

__all__ = _mp.__all__ + ["spawn", "start_processes", "ProcessContext", "ProcessException",
                         "ProcessRaisedException", "ProcessExitedException",
                         "get_sharing_strategy", "set_sharing_strategy",
                         "get_all_sharing_strategies"]

_STRATEGIES = ("file_descriptor",)


def get_all_sharing_strategies():
    """Only file descriptors (memfd): no named files are left behind by a crash."""
    return set(_STRATEGIES)


def get_sharing_strategy():
    return "file_descriptor"


def set_sharing_strategy(new_strategy):
    if new_strategy not in _STRATEGIES:
        raise ValueError(f"sharing strategy {new_strategy!r} is not supported; tensorlib "
                         f"shares through {', '.join(_STRATEGIES)}")


_tensorlib.Tensor.share_memory_ = share_memory_
_tensorlib.Tensor.is_shared = is_shared
init_reductions()
