"""DataLoader: batching, workers, order, seeding, failures and cleanup.

Every blocking wait has a timeout (the loader's own `timeout` or the watchdog), datasets are
small, and nothing asserts timings."""
import gc
import os
import signal
import time

import numpy as np
import pytest

import tensorlib
from tensorlib.utils.data import (DataLoader, Dataset, IterableDataset, TensorDataset,
                                  get_worker_info)
from tensorlib.multiprocessing import _shm
from tensorlib.utils.data import dataloader as dl_module

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
T = 30          # seconds: an upper bound for any wait in these tests (never reached when passing)


def _shm_blocks():
    """This process's shared-memory blocks, after collecting garbage: an iterator an earlier
    test dropped mid-epoch frees its blocks when collected, which in random order could
    happen between a test's two looks."""
    gc.collect()
    if not os.path.isdir("/dev/shm"):
        return set()
    return {f for f in os.listdir("/dev/shm") if f.startswith(f"tl{os.getpid()}_")}


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _as_lists(batches):
    out = []
    for b in batches:
        if isinstance(b, (list, tuple)):
            out.append([x.tolist() if isinstance(x, tensorlib.Tensor) else x for x in b])
        else:
            out.append(b.tolist() if isinstance(b, tensorlib.Tensor) else b)
    return out


def _data(n=50):
    x = tensorlib.from_numpy(np.arange(n * 3, dtype=np.float32).reshape(n, 3))
    return TensorDataset(x, tensorlib.arange(n))


class Mixed(Dataset):
    def __len__(self):
        return 9

    def __getitem__(self, i):
        return {"i": i, "name": f"s{i}", "arr": np.full(2, i, dtype=np.float64),
                "t": tensorlib.full((2,), i)}


class Failing(Dataset):
    def __init__(self, bad):
        self.bad = bad

    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i == self.bad:
            raise ValueError(f"cannot read sample {i}")
        return i


class Killing(Dataset):
    def __len__(self):
        return 40

    def __getitem__(self, i):
        if i == 5 and get_worker_info() is not None:
            os.kill(os.getpid(), signal.SIGKILL)
        return i


class Slow(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 2 and get_worker_info() is not None:
            time.sleep(T)
        return i


class Shards(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


class SeedProbe(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = get_worker_info()
        return np.array([info.id, info.seed, np.random.randint(0, 2 ** 30)], dtype=np.int64)


class Big(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return tensorlib.full((64, 64), float(i))


# ---- batching without workers ---------------------------------------------------------------
def test_batches_and_len():
    dl = DataLoader(_data(10), batch_size=4)
    batches = list(dl)
    assert len(dl) == 3 and len(batches) == 3
    assert batches[0][0].shape == (4, 3) and batches[2][1].tolist() == [8, 9]
    assert len(DataLoader(_data(10), batch_size=4, drop_last=True)) == 2
    assert list(DataLoader(list(range(5)), batch_size=None)) == [0, 1, 2, 3, 4]   # as torch
    assert _as_lists(DataLoader(Mixed(), batch_size=4))[0] is not None
    b = next(iter(DataLoader(Mixed(), batch_size=3)))
    assert b["i"].tolist() == [0, 1, 2] and b["name"] == ["s0", "s1", "s2"]
    assert b["arr"].dtype == tensorlib.float64 and b["t"].shape == (3, 2)


def test_argument_checks():
    ds = _data(4)
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(ds, sampler=[0, 1], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="prefetch_factor"):
        DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="timeout"):
        DataLoader(ds, timeout=-1)
    with pytest.raises(ValueError, match="IterableDataset"):
        DataLoader(Shards(4), shuffle=True)


def test_sampler_batch_sampler_collate_fn():
    ds = _data(10)
    got = [b[1].tolist() for b in DataLoader(ds, batch_size=2, sampler=[9, 8, 7, 6])]
    assert got == [[9, 8], [7, 6]]
    got = [b[1].tolist() for b in DataLoader(ds, batch_sampler=[[1, 3], [5]])]
    assert got == [[1, 3], [5]]
    got = list(DataLoader(ds, batch_size=5, collate_fn=len))
    assert got == [5, 5]


def test_shuffle_is_reproducible_with_a_generator():
    def order(seed, workers=0):
        dl = DataLoader(_data(30), batch_size=4, shuffle=True, num_workers=workers,
                        generator=np.random.default_rng(seed), timeout=T)
        return [b[1].tolist() for b in dl]
    a = order(0)
    assert sorted(sum(a, [])) == list(range(30))
    assert a == order(0) and a != order(1)
    assert order(0, workers=2) == a


@pytest.mark.skipif(not hasattr(tensorlib, "Generator"), reason="no tensorlib.Generator")
def test_shuffle_with_tensorlib_generator():
    def order():
        g = tensorlib.Generator().manual_seed(7)
        return [b[1].tolist() for b in DataLoader(_data(20), batch_size=3, shuffle=True,
                                                   generator=g)]
    assert order() == order()


def test_pin_memory_is_a_noop_without_pinned_memory():
    b = next(iter(DataLoader(_data(4), batch_size=2, pin_memory=True)))
    assert b[0].shape == (2, 3) and b[0].device.type == "cpu"


# ---- workers ----------------------------------------------------------------------------------
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_workers_give_the_batches_of_the_main_process_in_order(workers):
    ref = _as_lists(DataLoader(_data(37), batch_size=5))
    got = _as_lists(DataLoader(_data(37), batch_size=5, num_workers=workers, timeout=T))
    assert got == ref
    ref = _as_lists(DataLoader(Mixed(), batch_size=2, drop_last=True))
    dl = DataLoader(Mixed(), batch_size=2, drop_last=True, num_workers=workers, timeout=T)
    got = list(dl)
    assert [b["name"] for b in got] == [b["name"] for b in ref]
    assert all(g["t"].tolist() == r["t"] .tolist() and g["arr"].tolist() == r["arr"].tolist()
               for g, r in zip(got, ref))


def test_no_batching_with_workers_and_prefetch_factor():
    got = list(DataLoader(list(range(7)), batch_size=None, num_workers=2, prefetch_factor=1,
                          timeout=T))
    assert got == list(range(7))


def test_batches_travel_through_shared_memory_and_are_writable():
    before = _shm_blocks()
    dl = DataLoader(Big(), batch_size=2, num_workers=2, timeout=T)
    batches = list(dl)
    assert [b[0, 0, 0].item() for b in batches] == [0.0, 2.0, 4.0, 6.0]
    batches[0][0, 0, 0] = 42.0                        # writable, owned by the main process
    assert batches[0][0, 0, 0].item() == 42.0
    assert _shm_blocks() == before
    # the transport really maps a block (and unlinks its name at once)
    message = _shm.encode({"x": tensorlib.ones(4)}, "/tl%d_test_0_1" % os.getpid())
    assert message[1] is not None and message[2] is None
    assert _shm.decode(message)["x"].tolist() == [1.0] * 4
    assert _shm_blocks() == before


def test_iterable_dataset_split_across_workers():
    dl = DataLoader(Shards(12), batch_size=2, num_workers=2, timeout=T)
    got = [b.tolist() for b in dl]
    assert sorted(sum(got, [])) == list(range(12))
    assert got[0] == [0, 2] and got[1] == [1, 3]       # worker 0, worker 1, ...
    assert len(dl) == 6 == len(got)
    # each worker's last partial batch comes separately, as in PyTorch (which also warns
    # that len() was exceeded)
    with pytest.warns(UserWarning, match="Length of IterableDataset"):
        got = [b.tolist() for b in DataLoader(Shards(6), batch_size=2, num_workers=2,
                                              timeout=T)]
    assert got == [[0, 2], [1, 3], [4], [5]]
    assert sorted(b for b in DataLoader(Shards(5), batch_size=None, num_workers=2,
                                               timeout=T)) == list(range(5))


def test_worker_seeds_and_init_fn():
    calls = []
    dl = DataLoader(SeedProbe(), batch_size=None, num_workers=2, timeout=T,
                    generator=np.random.default_rng(0),
                    worker_init_fn=lambda wid: np.random.seed(1000 + wid))
    rows = [b.tolist() for b in dl]
    ids = [r[0] for r in rows]
    seeds = {r[0]: r[1] for r in rows}
    assert set(ids) == {0, 1} and seeds[1] == seeds[0] + 1
    again = [b.tolist() for b in DataLoader(SeedProbe(), batch_size=None, num_workers=2,
                                            timeout=T, generator=np.random.default_rng(0),
                                            worker_init_fn=lambda wid: np.random.seed(1000 + wid))]
    assert again == rows                                # reproducible from the generator
    assert rows[0][2] == np.random.RandomState(1000).randint(0, 2 ** 30)  # init_fn ran last
    assert calls == []


def test_persistent_workers_survive_epochs():
    dl = DataLoader(_data(12), batch_size=4, num_workers=2, persistent_workers=True, timeout=T)
    first = _as_lists(dl)
    it = dl._iterator
    pids = [w.pid for w in it._workers]
    assert _as_lists(dl) == first and dl._iterator is it
    next(iter(dl))                                      # a broken-off epoch...
    assert _as_lists(dl) == first                      # ...does not leak into the next
    assert all(_alive(p) for p in pids)
    del dl, it
    import gc
    gc.collect()
    assert not any(_alive(p) for p in pids)



def test_shutdown_workers_by_pytorchs_name():
    """`loader._iterator._shutdown_workers()` (PyTorch's private name, which timm's tests
    call in a `finally`) stops persistent workers at once; calling it again does nothing."""
    dl = DataLoader(_data(8), batch_size=4, num_workers=2, persistent_workers=True, timeout=T)
    _as_lists(dl)
    pids = [w.pid for w in dl._iterator._workers]
    dl._iterator._shutdown_workers()
    dl._iterator._shutdown_workers()
    assert not any(_alive(p) for p in pids)


# ---- failures ---------------------------------------------------------------------------------
def test_worker_exception_is_reraised_with_traceback_and_index():
    dl = DataLoader(Failing(bad=6), batch_size=4, num_workers=2, timeout=T)
    with pytest.raises(ValueError) as info:
        list(dl)
    msg = str(info.value)
    assert "Caught ValueError in DataLoader worker process 1" in msg
    assert "while fetching index 6" in msg and "batch indices [4, 5, 6, 7]" in msg
    assert "Original Traceback" in msg and "cannot read sample 6" in msg
    assert "test_dataloader.py" in msg                  # the worker's own frames


def test_worker_exception_keyerror_and_main_process():
    class Keyed(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            raise KeyError("missing")
    with pytest.raises(KeyError, match="while fetching index 0"):
        next(iter(DataLoader(Keyed(), num_workers=1, timeout=T)))
    with pytest.raises(ValueError, match="cannot read sample 0"):
        next(iter(DataLoader(Failing(bad=0))))


def test_killed_worker_raises_naming_its_pid():
    before = _shm_blocks()
    dl = DataLoader(Killing(), batch_size=2, num_workers=2, timeout=T)
    it = iter(dl)
    pids = [w.pid for w in it._workers]
    with pytest.raises(RuntimeError, match=r"DataLoader worker \d \(pid (\d+)\) exited "
                                           r"unexpectedly \(killed by SIGKILL\)") as info:
        for _ in it:
            pass
    assert any(str(p) in str(info.value) for p in pids)
    assert not any(_alive(p) for p in pids)
    assert _shm_blocks() == before


def test_worker_killed_from_outside():
    dl = DataLoader(_data(200), batch_size=2, num_workers=2, timeout=T)
    it = iter(dl)
    next(it)
    victim = it._workers[1].pid
    os.kill(victim, signal.SIGKILL)
    with pytest.raises(RuntimeError, match=f"pid {victim}"):
        for _ in it:
            pass


def test_timeout_raises():
    dl = DataLoader(Slow(), batch_size=1, num_workers=1, timeout=0.5)
    it = iter(dl)
    assert next(it).tolist() == [0]
    pids = [w.pid for w in it._workers]
    with pytest.raises(RuntimeError, match="timed out after 0.5 seconds"):
        for _ in it:
            pass
    assert not any(_alive(p) for p in pids)


def test_break_and_del_shut_workers_down_without_leaks():
    before = _shm_blocks()
    live = set(dl_module._live_iterators)
    dl = DataLoader(Big(), batch_size=1, num_workers=2, timeout=T)
    it = iter(dl)
    pids = [w.pid for w in it._workers]
    next(it)
    deadline = time.monotonic() + T                      # let the prefetched blocks exist
    while len(_shm_blocks() - before) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    del it
    assert not any(_alive(p) for p in pids)
    assert _shm_blocks() == before
    for _ in DataLoader(Big(), batch_size=1, num_workers=2, timeout=T):
        break
    assert _shm_blocks() == before
    assert set(dl_module._live_iterators) == live


def test_orphaned_workers_exit_when_the_main_process_dies(tmp_path):
    # a child process plays the main process: it starts a loader and is killed
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            it = iter(DataLoader(Slow(), batch_size=1, num_workers=1))
            os.write(w, str(it._workers[0].pid).encode())
            time.sleep(T)
        finally:
            os._exit(0)
    os.close(w)
    worker = int(os.read(r, 64).decode())
    os.close(r)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    deadline = time.monotonic() + T
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
        try:
            os.waitpid(worker, os.WNOHANG)
        except ChildProcessError:
            pass
    assert not _alive(worker) or _zombie(worker)


def _zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def test_iterator_classes_have_pytorchs_names():
    """Libraries subclass or isinstance-check PyTorch's iterator classes by name (PyG's
    loader/base.py imports _BaseDataLoaderIter and _MultiProcessingDataLoaderIter) and call
    _reset(loader, first_iter)."""
    data = TensorDataset(tensorlib.arange(6))
    single = iter(DataLoader(data, batch_size=2))
    assert type(single) is dl_module._SingleProcessDataLoaderIter
    assert isinstance(single, dl_module._BaseDataLoaderIter)
    assert issubclass(dl_module._MultiProcessingDataLoaderIter, dl_module._BaseDataLoaderIter)
    next(single)
    single._reset(None, False)
    assert [b[0].tolist() for b in single] == [[0, 1], [2, 3], [4, 5]]
