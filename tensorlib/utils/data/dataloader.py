"""DataLoader: batches from a dataset, in the main process or in worker processes, as in
torch.utils.data.DataLoader.

With `num_workers > 0` the workers are started with multiprocessing's 'fork' method where the
platform has it (Linux; pass `multiprocessing_context="spawn"` for a dataset that is
picklable), each with its own task pipe and result pipe. The main process keeps
`prefetch_factor` tasks in flight per worker, hands them out round-robin and reassembles the
results in order, so with shuffle off any num_workers gives exactly the batches of
num_workers=0. Batches come back through shared memory (see multiprocessing/_shm.py).

While it waits for a batch the main process also watches the workers' process sentinels: a
worker that dies (killed, segfault) raises RuntimeError naming its pid at once; `timeout`
bounds the wait for each batch. An exception in a worker is raised again in the main process
with the worker's traceback and the index that failed. The workers are shut down when the
epoch ends (unless `persistent_workers`), when the iterator is closed or garbage (breaking
out of the loop), when the loader is deleted, or at interpreter exit; shared-memory blocks
not yet read are removed then.
"""
import atexit
import itertools
import multiprocessing
import multiprocessing.connection
import numbers
import os
import pickle
import signal
import time
import typing
import warnings
import weakref

from tensorlib.multiprocessing import _shm
from tensorlib.utils.data import _random
from tensorlib.utils.data._collate import default_collate, default_convert
from tensorlib.utils.data._worker import _Fetcher, worker_loop
from tensorlib.utils.data.dataset import IterableDataset
from tensorlib.utils.data.sampler import (BatchSampler, RandomSampler, Sampler,
                                          SequentialSampler)

__all__ = ["DataLoader"]

_SHUTDOWN_GRACE = 2.0          # seconds a worker gets to exit before it is terminated
_live_iterators = weakref.WeakSet()
_loader_ids = itertools.count()


class _InfiniteConstantSampler(Sampler):
    """The 'sampler' of an IterableDataset: None forever (the dataset decides the data)."""

    def __iter__(self):
        while True:
            yield None


def _default_context():
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _pin(data, backend):
    """The batch's CPU tensors copied into `backend`'s page-locked host memory."""
    def pin(t):
        return t if t._device.type != "cpu" or backend.is_pinned(t) else backend.pin_memory(t)
    return _map_tensors(data, pin)


def _pinner(device):
    """The backend that pins batches; None, with PyTorch's warning, when none can."""
    from tensorlib.ops.pinned import pinning_backend
    backend = pinning_backend(device or None)
    if backend is None:
        warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then "
                      "device pinned memory won't be used.", stacklevel=3)
    return backend


def _map_tensors(data, fn):
    from tensorlib._tensor import Tensor
    if isinstance(data, Tensor):
        return fn(data)
    if isinstance(data, dict):
        try:
            return type(data)({k: _map_tensors(v, fn) for k, v in data.items()})
        except TypeError:
            return {k: _map_tensors(v, fn) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_map_tensors(v, fn) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(_map_tensors(v, fn) for v in data)
    return data


_T_co = typing.TypeVar("_T_co", covariant=True)     # Generic as PyTorch's: DataLoader[T]


class DataLoader(typing.Generic[_T_co]):
    """Iterate over `dataset` in batches.

    batch_size (None: no batching, samples pass through default_convert), shuffle, sampler,
    batch_sampler, collate_fn, drop_last, num_workers (worker processes), worker_init_fn
    (called with the worker id in each worker), generator (seeds shuffling and the workers'
    base seed: a tensorlib.Generator, numpy Generator or random.Random), prefetch_factor
    (batches in flight per worker, default 2), persistent_workers (keep the workers between
    epochs), timeout (seconds to wait for a batch from the workers; 0: no limit), pin_memory
    (page-locked host memory where a backend provides it, a no-op otherwise),
    multiprocessing_context (a context or start method name; default 'fork' where
    available).
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if not isinstance(num_workers, numbers.Integral) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 "
                             "to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 1:
            raise ValueError("prefetch_factor option should be a positive integer")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = int(num_workers)
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self.generator = generator
        self._is_iterable = isinstance(dataset, IterableDataset)

        if self._is_iterable:
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._iterator = None

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None or self._iterator._shut:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __len__(self):
        if self._is_iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)

    def __del__(self):
        it = getattr(self, "_iterator", None)
        if it is not None:
            it._shutdown_workers()


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._is_iterable = loader._is_iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._batch_size = loader.batch_size
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._pinner = _pinner(loader.pin_memory_device) if loader.pin_memory else None
        self._timeout = loader.timeout
        self._base_seed = _random.draw_seed(loader.generator)
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._length = None
        try:
            self._length = len(loader)
        except TypeError:
            pass

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_sampler)

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if self._is_iterable and self._length is not None and \
                self._num_yielded > self._length:
            warnings.warn(f"Length of IterableDataset {self._dataset} was reported to be "
                          f"{self._length} (when accessing len(dataloader)), but "
                          f"{self._num_yielded} samples have been fetched.", stacklevel=2)
        if self._pinner is not None:
            data = _pin(data, self._pinner)
        return data

    def _reset(self, loader, first_iter=False):
        """A new epoch over the loader's sampler. first_iter is PyTorch's flag for the reset
        its constructors make; here the constructors start their epoch themselves."""
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def _shutdown_workers(self):
        pass

    _shut = False


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = _Fetcher(self._dataset, self._is_iterable, self._auto_collation,
                                 self._collate_fn, self._drop_last, self._batch_size)
        self._fetcher.reset()

    def _next_data(self):
        index = self._next_index()
        return self._fetcher.fetch(index)


def _signal_name(code):
    try:
        return signal.Signals(-code).name
    except (ValueError, AttributeError):
        return f"signal {-code}"


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._shut = True                  # until the workers are up
        n = self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor
        self._persistent = loader.persistent_workers
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = _default_context()
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        forked = ctx.get_start_method() == "fork"
        self._prefix = f"/tl{os.getpid()}_{next(_loader_ids)}"
        use_shm = _shm.shm_available()
        self._workers, self._task_conns, self._result_conns = [], [], []
        pipes = [(ctx.Pipe(duplex=False), ctx.Pipe(duplex=False)) for _ in range(n)]
        try:
            for wid, ((task_r, task_w), (res_r, res_w)) in enumerate(pipes):
                others = []
                if forked:
                    for j, ((tr, tw), (rr, rw)) in enumerate(pipes):
                        others += [tw.fileno(), rr.fileno()]
                        if j != wid:
                            others += [tr.fileno(), rw.fileno()]
                w = ctx.Process(
                    target=worker_loop, daemon=True,
                    args=(self._dataset, task_r, res_w, self._is_iterable,
                          self._auto_collation, self._collate_fn, self._drop_last,
                          self._batch_size, self._base_seed, loader.worker_init_fn, wid, n,
                          self._prefix, os.getpid(), use_shm, others))
                w.start()
                self._workers.append(w)
                self._task_conns.append(task_w)
                self._result_conns.append(res_r)
        except BaseException:
            self._shut = False
            self._shutdown_workers()
            raise
        finally:
            for (task_r, _), (_, res_w) in pipes:  # the workers' ends
                task_r.close()
                res_w.close()
        self._shut = False
        self._epoch = 0
        _live_iterators.add(self)
        self._start_epoch()

    # ---- epochs and tasks -------------------------------------------------------------------
    def _start_epoch(self):
        self._epoch += 1
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_worker = {}           # task id -> worker id, for tasks not yet consumed
        self._results = {}               # task id -> (kind, payload) that came early
        self._active = [True] * self._num_workers
        self._cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch * self._num_workers):
            self._try_put_index()

    def _reset(self, loader, first_iter=False):
        """A new epoch on persistent workers: results of the old one still in flight are
        dropped as they arrive."""
        super()._reset(loader, first_iter)
        for payload in self._results.values():
            if payload[0] == "batch":
                _shm.discard(payload[1])
        self._start_epoch()

    def _try_put_index(self):
        if len(self._task_worker) >= self._prefetch * self._num_workers:
            return
        if not any(self._active):
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            wid = next(self._cycle)
            if self._active[wid]:
                break
        task = pickle.dumps((self._epoch, self._send_idx, index),
                            protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self._task_conns[wid].send_bytes(task)
        except (BrokenPipeError, OSError):
            self._check_workers(force=True)
            raise
        self._task_worker[self._send_idx] = wid
        self._send_idx += 1

    # ---- receiving --------------------------------------------------------------------------
    def _next_data(self):
        if self._shut:
            raise StopIteration
        while True:
            if self._rcvd_idx >= self._send_idx:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            idx = self._rcvd_idx
            result = self._results.pop(idx, None)
            if result is None:
                result = self._wait_for(idx)
            self._rcvd_idx += 1
            wid = self._task_worker.pop(idx)
            kind, payload = result
            if kind == "exhausted":
                self._active[wid] = False
                self._try_put_index()
                continue
            self._try_put_index()
            if kind == "error":
                payload.reraise()
            return _shm.decode(payload)

    def _wait_for(self, idx):
        """Block until the result of task `idx` arrives, keeping early ones; raise when a
        worker dies or `timeout` passes."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        conns = {c: wid for wid, c in enumerate(self._result_conns)}
        sentinels = [w.sentinel for w in self._workers]
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = multiprocessing.connection.wait(list(conns) + sentinels, remaining)
            if not ready:
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            got = None
            for conn in ready:
                if conn not in conns:
                    continue
                message = self._recv(conn)
                if message is None:
                    continue
                epoch, task, kind, payload = message
                if epoch != self._epoch:
                    if kind == "batch":
                        _shm.discard(payload)
                    continue
                if task == idx:
                    got = (kind, payload)
                else:
                    self._results[task] = (kind, payload)
            if got is not None:
                return got
            self._check_workers()

    def _recv(self, conn):
        try:
            return pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            self._check_workers(force=True)
            return None

    def _check_workers(self, force=False):
        """Raise if a worker has died: workers never exit on their own while the iterator is
        live, so a dead one was killed or crashed. With `force` (its pipe closed), wait a
        moment for the exit status that follows."""
        for wid, w in enumerate(self._workers):
            if w.exitcode is None and force:
                w.join(0.5)
            if w.exitcode is None:
                continue
            code = w.exitcode
            how = f"killed by {_signal_name(code)}" if code < 0 else f"exit code {code}"
            pid = w.pid
            self._shutdown_workers()
            raise RuntimeError(f"DataLoader worker {wid} (pid {pid}) exited unexpectedly "
                               f"({how}). If it was killed for memory, lower num_workers or "
                               f"the batch size.")

    # ---- shutdown ---------------------------------------------------------------------------
    def close(self):
        """Stop the workers and free what they sent (also on garbage collection)."""
        self._shutdown_workers()

    def _shutdown_workers(self):
        if self._shut or not hasattr(self, "_workers"):
            return
        self._shut = True
        _live_iterators.discard(self)
        for conn in self._task_conns:
            try:
                conn.send_bytes(pickle.dumps(None))
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + _SHUTDOWN_GRACE
        for w in self._workers:
            w.join(max(0.0, deadline - time.monotonic()))
        for w in self._workers:
            if w.exitcode is None:
                w.terminate()
                w.join(1.0)
            if w.exitcode is None:
                w.kill()
                w.join()
        for conn in self._result_conns:
            while True:
                try:
                    if conn.closed or not conn.poll(0):
                        break
                    message = pickle.loads(conn.recv_bytes())
                except (EOFError, OSError, pickle.UnpicklingError):
                    break
                if message[2] == "batch":
                    _shm.discard(message[3])
        for kind, payload in getattr(self, "_results", {}).values():
            if kind == "batch":
                _shm.discard(payload)
        self._results = {}
        for conn in self._task_conns + self._result_conns:
            conn.close()
        for w in self._workers:
            try:
                w.close()
            except ValueError:
                pass
        _shm.unlink_prefix(self._prefix + "_")

    def __del__(self):
        self._shutdown_workers()


@atexit.register
def _shutdown_all():
    """Workers and their shared memory go before multiprocessing's own exit handler kills
    daemonic children (registered earlier, so it runs after this one)."""
    for it in list(_live_iterators):
        it._shutdown_workers()
