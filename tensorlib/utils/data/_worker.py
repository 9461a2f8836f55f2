"""The worker process side of the DataLoader, and get_worker_info().

A worker receives tasks `(epoch, task id, indices)` on its own pipe, fetches and collates the
samples, and sends back `(epoch, task id, kind, payload)` on its own result pipe, where the
batch travels through shared memory (see tensorlib/multiprocessing/_shm.py). A failure is
sent as an _ExceptionWrapper holding the formatted traceback and the index that failed. The worker exits on `None`, when
the main process asks it to, or when its parent has gone (it checks every half second), so a
killed main process leaves no orphans.
"""
import os
import pickle
import signal
import sys
import traceback

from tensorlib.multiprocessing import _shm

__all__ = ["WorkerInfo", "get_worker_info"]

POLL_INTERVAL = 0.5
_worker_info = None


class WorkerInfo:
    """What a worker process knows about itself: id (0..num_workers-1), num_workers, seed
    (base seed + id, already used to seed tensorlib, random and numpy) and its copy of the
    dataset."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs)
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__keys if k != "dataset")
        return f"{self.__class__.__name__}({items})"


def get_worker_info():
    """In a DataLoader worker process, its WorkerInfo; in the main process, None. An
    IterableDataset's `__iter__` uses it to pick its shard."""
    return _worker_info


class _IterableExhausted:
    """Sent by a worker whose copy of an IterableDataset has run out."""


class _KeyErrorMessage(str):
    def __repr__(self):
        return self


class _ExceptionWrapper:
    """An exception raised in a worker, with its formatted traceback, for the main process."""

    def __init__(self, exc, where):
        self.exc_type = type(exc)
        self.message = (f"Caught {type(exc).__name__} {where}.\nOriginal "
                        + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))

    def reraise(self):
        msg = self.message
        if issubclass(self.exc_type, KeyError):
            msg = _KeyErrorMessage(msg)          # KeyError would print the repr, on one line
        try:
            exc = self.exc_type(msg)
        except Exception:
            exc = RuntimeError(msg)
        try:
            raise exc
        finally:
            exc = None          # no frame -> exception -> traceback -> frame cycle


def _one_thread():
    """Kernels run on one thread in a worker (as in PyTorch): the workers already use the
    cores, and the CPU backend's OpenMP and thread pool do not survive fork (a forked child
    that uses them hangs)."""
    import tensorlib
    set_num_threads = getattr(tensorlib, "set_num_threads", None)
    if set_num_threads is not None:
        set_num_threads(1)
        return
    fastreduce = sys.modules.get("tensorlib_cpu.fastreduce")
    if fastreduce is not None:
        fastreduce.set_num_threads(1)


def _seed_worker(seed):
    from tensorlib.multiprocessing._seeding import seed_host_generators
    seed_host_generators(seed)
    import tensorlib
    manual_seed = getattr(tensorlib, "manual_seed", None)
    if manual_seed is not None:
        manual_seed(seed)


class _Fetcher:
    """Fetches one task's samples (map-style: by index; iterable: the next ones), recording
    the index being read so an error can name it."""

    def __init__(self, dataset, is_iterable, auto_collation, collate_fn, drop_last,
                 batch_size):
        self.dataset = dataset
        self.is_iterable = is_iterable
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.batch_size = batch_size
        self.current = None
        self.iterator = None
        self.exhausted = False

    def reset(self):
        self.iterator = iter(self.dataset) if self.is_iterable else None
        self.exhausted = False

    def fetch(self, indices):
        self.current = None
        if self.is_iterable:
            if self.iterator is None:
                self.reset()
            if self.exhausted:
                raise StopIteration
            if not self.auto_collation:
                return self.collate_fn(next(self.iterator))
            data = []
            for _ in range(self.batch_size):
                try:
                    data.append(next(self.iterator))
                except StopIteration:
                    self.exhausted = True
                    break
            if not data or (self.drop_last and len(data) < self.batch_size):
                raise StopIteration
            return self.collate_fn(data)
        if not self.auto_collation:
            self.current = indices
            return self.collate_fn(self.dataset[indices])
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems is not None:
            self.current = indices
            data = getitems(indices)
        else:
            data = []
            for i in indices:
                self.current = i
                data.append(self.dataset[i])
        self.current = None
        return self.collate_fn(data)

    def where(self, worker_id, task, indices):
        where = f"in DataLoader worker process {worker_id}"
        if self.is_iterable:
            return f"{where} while fetching batch {task}"
        if self.current is not None and self.current is not indices:
            return f"{where} while fetching index {self.current!r} (batch indices {indices!r})"
        if self.current is not None:
            return f"{where} while fetching index {indices!r}"
        return f"{where} while collating batch indices {indices!r}"


def _send(conn, message):
    conn.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def worker_loop(dataset, task_conn, result_conn, is_iterable, auto_collation, collate_fn,
                drop_last, batch_size, base_seed, worker_init_fn, worker_id, num_workers,
                shm_prefix, parent_pid, use_shm, other_fds):
    """The body of a worker process (see the module docstring)."""
    global _worker_info
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the main process's business
    except (ValueError, OSError):                        # pragma: no cover
        pass
    for fd in other_fds:                                 # the other workers' pipe ends
        try:
            os.close(fd)
        except OSError:
            pass
    seed = base_seed + worker_id
    init_error = None
    try:
        _one_thread()
        _seed_worker(seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        if worker_init_fn is not None:
            worker_init_fn(worker_id)
    except Exception as e:      # reported for the first task
        init_error = _ExceptionWrapper(
            e, f"in DataLoader worker process {worker_id} (worker_init_fn)")
    fetcher = _Fetcher(dataset, is_iterable, auto_collation, collate_fn, drop_last, batch_size)
    epoch = None
    seq = 0
    try:
        while True:
            if not task_conn.poll(POLL_INTERVAL):
                if os.getppid() != parent_pid:
                    break                      # the main process has gone
                continue
            try:
                task = pickle.loads(task_conn.recv_bytes())
            except (EOFError, OSError):
                break
            if task is None:
                break
            task_epoch, task_id, indices = task
            if task_epoch != epoch:
                epoch = task_epoch
                fetcher.reset()
            if init_error is not None:
                _send(result_conn, (task_epoch, task_id, "error", init_error))
                continue
            try:
                batch = fetcher.fetch(indices)
            except StopIteration:
                if is_iterable:
                    _send(result_conn, (task_epoch, task_id, "exhausted", None))
                    continue
                batch_error = _ExceptionWrapper(StopIteration(), fetcher.where(
                    worker_id, task_id, indices))
                _send(result_conn, (task_epoch, task_id, "error", batch_error))
                continue
            except Exception as e:
                _send(result_conn, (task_epoch, task_id, "error",
                                    _ExceptionWrapper(e, fetcher.where(worker_id, task_id,
                                                                       indices))))
                continue
            seq += 1
            name = f"{shm_prefix}_{worker_id}_{seq}" if use_shm else None
            try:
                message = _shm.encode(batch, name)
            except Exception as e:
                _send(result_conn, (task_epoch, task_id, "error", _ExceptionWrapper(
                    e, f"in DataLoader worker process {worker_id} while sending batch "
                       f"{task_id} to the main process")))
                continue
            del batch
            try:
                _send(result_conn, (task_epoch, task_id, "batch", message))
            except BaseException:
                if message[1] is not None:
                    _shm.unlink(message[1])
                raise
    except (KeyboardInterrupt, BrokenPipeError, EOFError):
        pass
    finally:
        try:
            result_conn.close()
        except OSError:
            pass
        # blocks this worker sent that nobody will read (the main process is gone or shutting
        # down; it unlinks the names of the ones it reads as it reads them)
        _shm.unlink_prefix(f"{shm_prefix}_{worker_id}_")
    sys.exit(0)
