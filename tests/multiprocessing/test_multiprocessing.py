"""tensorlib.multiprocessing: share_memory_/is_shared, tensors crossing Queues without
copies (writes seen both ways), spawn/fork contexts, spawn() and its error reporting."""
import pytest

import tensorlib
import tensorlib.multiprocessing as mp
from tests.multiprocessing import _workers


def test_share_memory_moves_every_view():
    x = tensorlib.arange(10.0)
    view = x[2:5]
    view.numpy()                           # a cached numpy view of the old buffer
    assert not x.is_shared()
    assert x.share_memory_() is x
    assert x.is_shared() and view.is_shared()
    x[3] = 100.0
    assert view.tolist() == [2.0, 100.0, 4.0]
    assert x.share_memory_() is x          # already shared: a no-op


def test_module_share_memory():
    m = tensorlib.nn.Linear(3, 2)
    before = m.weight.tolist()
    assert m.share_memory() is m
    assert m.weight.is_shared() and m.bias.is_shared()
    assert isinstance(m.weight, tensorlib.nn.Parameter) and m.weight.tolist() == before


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_queue_passes_shared_tensor(method):
    ctx = mp.get_context(method)
    queue, done = ctx.Queue(), ctx.Queue()
    base = tensorlib.zeros(4, 5)
    sent = base[1:, ::2]                   # a strided view with a storage offset
    p = ctx.Process(target=_workers.add_in_place, args=(queue, done))
    p.start()
    queue.put(sent)
    shape, shared, total = done.get(timeout=60)
    p.join(60)
    assert p.exitcode == 0
    assert shape == (3, 3) and shared and total == 9.0
    assert sent.tolist() == [[1.0] * 3] * 3          # the child's write is seen here
    assert base[0].tolist() == [0.0] * 5 and base[1, 1].item() == 0.0


def test_tensor_from_a_child():
    ctx = mp.get_context("spawn")
    queue, received = ctx.Queue(), ctx.Event()
    p = ctx.Process(target=_workers.send_back, args=(queue, received))
    p.start()
    got = queue.get(timeout=60)
    received.set()
    p.join(60)
    assert got.tolist() == [[1, 2], [4, 5]] and got.dtype is tensorlib.int64
    assert got.is_shared()


def test_spawn_runs_every_rank_on_shared_memory():
    shared = tensorlib.zeros(2, dtype=tensorlib.int64).share_memory_()
    assert mp.spawn(_workers.fill_rank, args=(shared,), nprocs=2) is None
    assert shared.tolist() == [10, 11]


def test_spawn_reports_the_child_exception():
    with pytest.raises(mp.ProcessRaisedException, match="ValueError: rank one fails"):
        mp.spawn(_workers.fail_on_one, nprocs=2, start_method="fork")


def test_non_leaf_requiring_grad_is_refused():
    import pickle
    from multiprocessing.reduction import ForkingPickler
    y = tensorlib.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf"):
        ForkingPickler.dumps(y, pickle.HIGHEST_PROTOCOL)


def test_sharing_strategy_names():
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    with pytest.raises(ValueError):
        mp.set_sharing_strategy("file_system_on_the_moon")
    assert mp.Queue is not None and mp.Process is not None and mp.cpu_count() >= 1


@pytest.fixture
def file_system_strategy():
    if "file_system" not in mp.get_all_sharing_strategies():
        pytest.skip("no POSIX shared memory here")
    mp.set_sharing_strategy("file_system")
    yield
    mp.set_sharing_strategy("file_descriptor")


def _named_files():
    import os
    return {name for name in os.listdir("/dev/shm") if name.startswith(f"tl_fs_{os.getpid()}_")}


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_file_system_strategy_passes_tensors_by_name(file_system_strategy, method):
    import gc
    before = _named_files()
    ctx = mp.get_context(method)
    queue, done = ctx.Queue(), ctx.Queue()
    base = tensorlib.zeros(4, 5)
    sent = base[1:, ::2]
    p = ctx.Process(target=_workers.add_in_place, args=(queue, done))
    p.start()
    queue.put(sent)
    shape, shared, total = done.get(timeout=60)
    p.join(60)
    assert p.exitcode == 0 and shape == (3, 3) and shared and total == 9.0
    assert sent.tolist() == [[1.0] * 3] * 3          # the child's write is seen here
    assert mp.get_sharing_strategy() == "file_system"
    assert len(_named_files() - before) == 1          # the storage's named file
    del base, sent
    gc.collect()
    assert _named_files() == before                   # its name goes with the storage


def test_strategy_applies_to_storages_shared_later(file_system_strategy):
    before = _named_files()
    x = tensorlib.ones(3).share_memory_()
    assert x.is_shared() and len(_named_files() - before) == 1
    x[0] = 5.0
    assert x.tolist() == [5.0, 1.0, 1.0]
