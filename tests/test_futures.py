"""torch.futures: completion, callbacks, the two kinds of failure and collect_all, checked
against PyTorch's own Future where it is installed."""
import pickle
import threading
import time

import pytest

import tensorlib
from tensorlib.futures import Future, collect_all, wait_all

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("lib", ["tensorlib", "torch"])
def test_then_returns_the_base_class_and_users_build_the_generic_one(lib):
    mod = tensorlib if lib == "tensorlib" else torch
    fut = mod.futures.Future()
    child = fut.then(lambda f: f.value() + 1)
    assert isinstance(fut, mod.Future) and type(child) is mod.Future
    assert mod.futures.Future[int] is not None    # subscriptable as a generic
    assert not child.done()
    fut.set_result(1)
    assert child.done() and child.wait() == 2 and fut.value() == 1
    assert type(mod.futures.collect_all([fut])) is mod.Future


@pytest.mark.parametrize("lib", ["tensorlib", "torch"])
def test_set_exception_is_raised_again_by_wait_and_value(lib):
    mod = tensorlib if lib == "tensorlib" else torch
    fut = mod.futures.Future()
    fut.set_exception(ValueError("bad input"))
    for read in (fut.wait, fut.value):
        with pytest.raises(ValueError, match="bad input"):
            read()
    with pytest.raises(AssertionError, match="not an Exception"):
        mod.futures.Future().set_exception("text")


@pytest.mark.parametrize("lib", ["tensorlib", "torch"])
def test_completing_twice_is_refused(lib):
    mod = tensorlib if lib == "tensorlib" else torch
    fut = mod.futures.Future()
    fut.set_result(3)
    with pytest.raises(RuntimeError, match="only be marked completed once"):
        fut.set_result(4)
    assert fut.wait() == 3


@pytest.mark.parametrize("lib", ["tensorlib", "torch"])
def test_a_failing_then_callback_fails_the_child_with_a_runtime_error(lib):
    mod = tensorlib if lib == "tensorlib" else torch
    fut = mod.futures.Future()
    child = fut.then(lambda f: 1 / 0)
    fut.set_result(0)
    with pytest.raises(RuntimeError, match="running the callback: ZeroDivisionError"):
        child.wait()
    # a set_exception error reaches a chained callback through value()
    failed = mod.futures.Future()
    failed.set_exception(KeyError("k"))
    with pytest.raises(RuntimeError, match="KeyError"):
        failed.then(lambda f: f.value()).wait()


@pytest.mark.parametrize("lib", ["tensorlib", "torch"])
def test_callbacks_run_in_order_and_inline_once_done(lib):
    mod = tensorlib if lib == "tensorlib" else torch
    order = []
    fut = mod.futures.Future()
    fut.add_done_callback(lambda f: order.append(1))
    fut.add_done_callback(lambda f: order.append(2))
    assert order == []
    fut.set_result(None)
    fut.add_done_callback(lambda f: order.append(3))
    assert order == [1, 2, 3]


@pytest.mark.parametrize("lib", ["tensorlib", "torch"])
def test_collect_all_and_wait_all(lib):
    mod = tensorlib if lib == "tensorlib" else torch
    a, b = mod.futures.Future(), mod.futures.Future()
    both = mod.futures.collect_all([a, b])
    a.set_result(1)
    assert not both.done()
    b.set_result(mod.ones(2))
    assert both.done() and [f.value() for f in both.wait()][0] == 1
    assert mod.futures.wait_all([a, b])[1].tolist() == [1.0, 1.0]
    assert mod.futures.collect_all([]).wait() == []
    # set_exception errors: raised once all are done, the first in list order
    x, y, z = (mod.futures.Future() for _ in range(3))
    errors = mod.futures.collect_all([x, y, z])
    y.set_exception(ValueError("second"))
    x.set_exception(KeyError("first"))
    assert not errors.done()
    z.set_result(0)
    with pytest.raises(KeyError, match="first"):
        errors.wait()
    # a callback's failure fails the collection at once
    parent = mod.futures.Future()
    failing = parent.then(lambda f: 1 / 0)
    early = mod.futures.collect_all([mod.futures.Future(), failing])
    parent.set_result(0)
    assert early.done()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        early.wait()
    with pytest.raises(ValueError, match="second"):
        mod.futures.wait_all([y])


def test_wait_blocks_until_another_thread_sets_the_result():
    fut = Future()
    setter = threading.Thread(target=lambda: (time.sleep(0.05), fut.set_result("late")))
    setter.start()
    assert fut.wait() == "late"
    setter.join()


def test_value_before_completion_and_pickling_raise():
    fut = Future()
    with pytest.raises(RuntimeError, match="not completed"):
        fut.value()
    with pytest.raises(RuntimeError, match="Can not pickle"):
        pickle.dumps(fut)
    with pytest.raises(TypeError, match="torch.Future"):
        collect_all([1])
    assert wait_all([]) == []


@pytest.mark.parametrize("lib", ["tensorlib", "torch"])
def test_devices_need_indices(lib):
    mod = tensorlib if lib == "tensorlib" else torch
    with pytest.raises(ValueError, match="Expected devices to have indices, got cpu"):
        mod.futures.Future(devices=["cpu"])
    mod.futures.Future(devices=["cpu:0"])


def test_jit_future_is_the_futures_one():
    assert tensorlib.jit.Future is Future and tensorlib.Future is not Future
