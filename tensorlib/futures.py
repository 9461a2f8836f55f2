"""torch.futures: a value that arrives later, and callbacks chained on it.

Libraries hand these around for asynchronous forward passes (Captum's perturbation methods
accept a model returning one); RPC is not needed for that. ``tensorlib.Future`` is the base
PyTorch exposes as ``torch.Future``: what ``then`` and ``collect_all`` return. ``Future`` here
is the generic subclass users construct (``torch.futures.Future[Tensor]``).

Two kinds of failure are kept apart, as in PyTorch: an exception given to ``set_exception`` is
the future's result, raised again by ``wait``/``value``; an exception raised by a ``then``
callback marks the child future failed with a RuntimeError that names it, and a
``collect_all`` over such a child fails at once, without waiting for the other futures."""
import logging
import threading
import traceback
from typing import Generic, TypeVar

from tensorlib._C.device import device as _device

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")

_log = logging.getLogger(__name__)


class _BaseFuture:
    """torch.Future: completion, a value or an error, and callbacks run on completion."""

    def __init__(self, devices):
        parsed = [d if isinstance(d, _device) else _device(d) for d in devices]
        for dev in parsed:
            if dev.index is None:
                raise ValueError(f"Expected devices to have indices, got {dev}")
        self._devices = parsed
        self._condition = threading.Condition()
        self._completed = False
        self._result = None
        self._raised = None         # the exception wait()/value() raise, of either kind
        self._callback_error = False  # failed in a callback (collect_all fails at once)
        self._callbacks = []

    def done(self):
        return self._completed

    def wait(self):
        with self._condition:
            self._condition.wait_for(lambda: self._completed)
        return self.value()

    def value(self):
        if not self._completed:
            raise RuntimeError("Future.value() called on a Future that is not completed yet; "
                               "call wait() first")
        if self._raised is not None:
            raise self._raised
        return self._result

    def set_result(self, result):
        self._complete(result, None, False)

    def then(self, callback):
        child = _BaseFuture(self._devices)

        def run(parent):
            try:
                value = callback(parent)
            except Exception as exc:  # noqa: BLE001 - any callback error fails the child
                child._complete(None, _callback_failure(exc), True)
            else:
                child.set_result(value)
        self._add_callback(run)
        return child

    def add_done_callback(self, callback):
        def run(parent):
            try:
                callback(parent)
            except Exception as exc:  # noqa: BLE001 - PyTorch logs and goes on
                _log.error("%s", _callback_failure(exc))
        self._add_callback(run)

    def __reduce__(self):
        raise RuntimeError("Can not pickle torch.futures.Future")

    def _add_callback(self, run):
        with self._condition:
            if not self._completed:
                self._callbacks.append(run)
                return
        run(self)

    def _complete(self, result, raised, from_callback):
        with self._condition:
            if self._completed:
                raise RuntimeError("Attempting to mark a completed Future as complete again. "
                                   "Note that a Future can only be marked completed once.")
            self._result, self._raised = result, raised
            self._callback_error = from_callback
            self._completed = True
            callbacks, self._callbacks = self._callbacks, []
            self._condition.notify_all()
        for run in callbacks:
            run(self)


_BaseFuture.__name__ = _BaseFuture.__qualname__ = "Future"
_BaseFuture.__module__ = "torch"


class Future(_BaseFuture, Generic[T]):
    """The future users create: ``Future(devices=None)``, subscriptable as a generic."""

    def __init__(self, *, devices=None):
        super().__init__([] if devices is None else devices)

    def set_exception(self, result):
        if not isinstance(result, Exception):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result, False)


def _callback_failure(exc):
    """The RuntimeError PyTorch gives a failed callback: the error, then where it was raised."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = "".join(f"  {f.filename}({f.lineno}): {f.name}\n" for f in reversed(frames))
    error = RuntimeError(f"Got the following error when running the callback: "
                         f"{type(exc).__name__}: {exc}\n\nAt:\n{where}")
    error.__cause__ = exc
    return error


def collect_all(futures):
    """A future completed when every one of ``futures`` is; its value is the list itself.

    Its ``wait``/``value`` raise the first ``set_exception`` error in list order; a future
    failed by a callback fails it as soon as that one completes."""
    futures = list(futures)
    for fut in futures:
        if not isinstance(fut, _BaseFuture):
            raise TypeError(f"collect_all(): expected a list of torch.Future, got an element "
                            f"of type {type(fut).__name__}")
    combined = _BaseFuture([])
    remaining = [len(futures)]
    lock = threading.RLock()

    def on_done(fut):
        with lock:
            if combined._completed:
                return
            if fut._callback_error:
                combined._complete(None, fut._raised, True)
                return
            remaining[0] -= 1
            if remaining[0]:
                return
            raised = next((f._raised for f in futures if f._raised is not None), None)
            combined._complete(futures, raised, False)

    if not futures:
        combined.set_result([])
    for fut in futures:
        fut._add_callback(on_done)
    return combined


def wait_all(futures):
    """The values of ``futures`` once all are complete; raises the first error instead."""
    return [fut.wait() for fut in collect_all(futures).wait()]
