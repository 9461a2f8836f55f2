"""Run one big numpy ufunc call on several cores.

numpy's ufunc inner loops release the GIL but run on one thread; cutting the output into
one slab per thread and running the slabs on a persistent thread pool uses every core.
Each element is still computed by the same numpy loop, so results are bit-identical.
"""
import contextvars
import os
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import fastreduce

# Below this many output elements the pool hand-off (~20 us) costs more than it saves.
# Measured on 2 cores: exp/log/sin... gain from 2**18 elements. Memory-bound cheap ufuncs
# (add: ~0.1 ns/element) gain nothing at 2**20 (98 vs 106 us) because the second thread
# sleeps between ops and waking it costs as much as it saves; it would have to spin, and
# spinning threads slowed the GEMM that follows an elementwise op 1.4-7x.
PARALLEL_MIN = 1 << 18
PARALLEL_MIN_CHEAP = 1 << 21
_CHEAP = frozenset([
    np.add, np.subtract, np.multiply, np.divide, np.negative, np.positive, np.absolute,
    np.square, np.sign, np.maximum, np.minimum, np.fmax, np.fmin, np.copysign,
    np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
    np.logical_and, np.logical_or, np.logical_xor, np.logical_not,
    np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert,
])
# Slab boundaries are multiples of this many elements (flat case) so every slab keeps the
# same alignment as the whole array, and numpy takes the same SIMD path for all of them.
_ALIGN = 1024
# Slabs per thread: threads take slabs from a shared queue, so if another process holds
# a core the remaining threads pick up its share instead of waiting for it.
SLABS_PER_THREAD = 4

_pool = None
_pool_workers = 0
_pool_lock = threading.Lock()
_in_worker = threading.local()


def _get_pool(workers):
    """The shared pool, rebuilt if the thread count changed."""
    global _pool, _pool_workers
    with _pool_lock:
        if _pool is None or _pool_workers != workers:
            # The old pool is not shut down (another thread may still be submitting to
            # it); its idle workers exit once it is garbage collected.
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tensorlib-cpu",
                                       initializer=_mark_worker)
            _pool_workers = workers
        return _pool


def _mark_worker():
    _in_worker.active = True


def _slabs(out, inputs, n):
    """Up to n [(out_slab, input_slabs)] cut the same way, or None if it cannot be cut."""
    shape = out.shape
    arrays = [a for a in inputs if isinstance(a, np.ndarray) and a.ndim]
    for a in inputs:
        if not (isinstance(a, np.ndarray) or np.isscalar(a)):
            return None     # e.g. a nested list: numpy would broadcast it whole
    for a in arrays:
        if a.shape != shape:
            return None     # let the ufunc broadcast itself
        # A partial overlap (out = a[1:] for input a[:-1]) needs numpy's own copy logic;
        # an exact alias (in-place op) is fine since each slab only touches its elements.
        if np.may_share_memory(a, out) and (
                a.__array_interface__["data"][0] != out.__array_interface__["data"][0]
                or a.strides != out.strides or a.dtype.itemsize != out.dtype.itemsize):
            return None
    if out.flags.c_contiguous and all(a.flags.c_contiguous for a in arrays):
        size = out.size
        step = -(-size // n)
        step = -(-step // _ALIGN) * _ALIGN
        cuts = [slice(i, min(i + step, size)) for i in range(0, size, step)]
        flat = {id(a): a.reshape(-1) for a in arrays + [out]}
        pick = lambda a, s: flat[id(a)][s] if id(a) in flat else a
    else:
        # Cut the dim that is outermost in out's memory so each slab keeps the whole
        # array's inner-loop structure (numpy iterates slabs the same way as the whole).
        dims = [d for d in range(out.ndim) if shape[d] >= 2]
        if not dims:
            return None
        d = max(dims, key=lambda k: (abs(out.strides[k]), -k))
        size = shape[d]
        step = -(-size // n)
        cuts = []
        for i in range(0, size, step):
            idx = [slice(None)] * out.ndim
            idx[d] = slice(i, min(i + step, size))
            cuts.append(tuple(idx))
        pick = lambda a, s: a[s] if isinstance(a, np.ndarray) and a.ndim else a
    if len(cuts) < 2:
        return None
    return [(pick(out, s), [pick(a, s) for a in inputs]) for s in cuts]


def _run(ufunc, out, inputs):
    ufunc(*inputs, out=out)


def _drain(ufunc, queue):
    """Compute slabs until the shared queue is empty (deque.popleft is thread-safe)."""
    while True:
        try:
            out, inputs = queue.popleft()
        except IndexError:
            return
        _run(ufunc, out, inputs)


def parallel_ufunc(ufunc, out, *inputs):
    """ufunc(*inputs, out=out), split over fastreduce.get_num_threads() threads when large.

    Inputs must already have out's shape (stride-0 broadcast views are fine) or be
    scalars / 0-d arrays.  Small calls, calls from a pool worker (no nested waiting, so no
    deadlock) and layouts that cannot be cut safely run directly on the calling thread.
    """
    n = fastreduce.get_num_threads()
    if (n < 2 or not isinstance(out, np.ndarray)
            or out.size < (PARALLEL_MIN_CHEAP if ufunc in _CHEAP else PARALLEL_MIN)
            or getattr(_in_worker, "active", False)):
        ufunc(*inputs, out=out)
        return
    slabs = _slabs(out, inputs, n * SLABS_PER_THREAD)
    if slabs is None:
        ufunc(*inputs, out=out)
        return
    queue = deque(slabs)
    pool = _get_pool(n - 1)         # the calling thread is the n-th worker
    # Workers run in a copy of the caller's context so np.errstate applies to them too.
    futures = [pool.submit(contextvars.copy_context().run, _drain, ufunc, queue)
               for _ in range(min(n - 1, len(slabs) - 1))]
    try:
        _drain(ufunc, queue)
    except BaseException:
        queue.clear()               # stop the workers early, then re-raise
        raise
    finally:
        for f in futures:
            f.result()


def _after_fork_in_child():
    """A forked child inherits the pool object but not its threads (and libgomp's OpenMP
    team does not survive fork either): start single-threaded, with a fresh pool later."""
    global _pool, _pool_workers, _pool_lock
    _pool, _pool_workers, _pool_lock = None, 0, threading.Lock()
    fastreduce.set_num_threads(1)


os.register_at_fork(after_in_child=_after_fork_in_child)
