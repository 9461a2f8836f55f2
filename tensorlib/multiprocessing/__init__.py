"""tensorlib.multiprocessing: the standard library's multiprocessing (every name of it), with
CPU tensors passed through shared memory (see _sharing.py), `spawn`, and PyTorch's
sharing-strategy switches."""
import multiprocessing as _mp
from multiprocessing import *  # noqa: F401,F403

import tensorlib as _tensorlib
from tensorlib.multiprocessing import _sharing
from tensorlib.multiprocessing._sharing import init_reductions, is_shared, share_memory_
from tensorlib.multiprocessing.spawn import (ProcessContext, ProcessException,  # noqa: F401
                                             ProcessExitedException, ProcessRaisedException,
                                             spawn, start_processes)

__all__ = _mp.__all__ + ["spawn", "start_processes", "ProcessContext", "ProcessException",
                         "ProcessRaisedException", "ProcessExitedException",
                         "get_sharing_strategy", "set_sharing_strategy",
                         "get_all_sharing_strategies"]


def get_all_sharing_strategies():
    """file_descriptor (memfd: nothing named is left behind by a crash) and, with POSIX
    shared memory, file_system (see NOTE [ The file_system strategy ] in _sharing.py)."""
    return _sharing.strategies()


def get_sharing_strategy():
    return _sharing.get_strategy()


def set_sharing_strategy(new_strategy):
    """The strategy for storages shared from now on (those shared before keep theirs)."""
    if new_strategy not in _sharing.strategies():
        raise ValueError(f"sharing strategy {new_strategy!r} is not supported; tensorlib "
                         f"shares through {', '.join(sorted(_sharing.strategies()))}")
    _sharing.set_strategy(new_strategy)


_tensorlib.Tensor.share_memory_ = share_memory_
_tensorlib.Tensor.is_shared = is_shared
init_reductions()
