"""Work: the handle an async_op=True collective returns (torch.distributed.Work's names).

The communication thread (_engine) runs the MPI call and marks the work done; `wait()` on the
caller's thread then finishes it: copies staged results back into device tensors. A point to
point operation is done when its MPI request completes, which `wait()` polls so that it can
honour the timeout (an MPI wait cannot be interrupted)."""
import threading
import time

from tensorlib.distributed._errors import DistBackendError

__all__ = ["Work"]


class Work:
    def __init__(self, description, rank, timeout, finish=None, outputs=()):
        self._description = description
        self._rank = rank
        self._timeout = timeout
        self._finish = finish
        self._outputs = list(outputs)
        self._ran = threading.Event()
        self._error = None
        self._request = None        # an MPI request still in flight (send/recv)
        self._status = None         # an MPI.Status for receives
        self._source = None
        self._is_p2p = False         # fn() returns an MPI request to complete
        self._finished = False

    # called on the communication thread
    def _run(self, fn):
        try:
            result = fn()
            if self._is_p2p:
                self._request = result
        except BaseException as exc:          # handed to the waiting thread
            self._error = exc
        self._ran.set()

    def _request_done(self):
        if self._request is None:
            return True
        done = self._request.Test(self._status)
        if done:
            self._request = None
        return done

    def is_completed(self):
        return self._ran.is_set() and (self._error is not None or self._request_done())

    def is_success(self):
        return self.is_completed() and self._error is None

    def exception(self):
        return self._error

    def wait(self, timeout=None):
        """Block until done (at most `timeout`, a timedelta, else the group's timeout);
        raise the operation's error, or DistBackendError naming the rank on a timeout."""
        limit = self._timeout if timeout is None else timeout.total_seconds()
        deadline = time.monotonic() + limit
        if not self._ran.wait(limit):
            self._timed_out(limit)
        if isinstance(self._error, TimeoutError):        # the wait for the other ranks
            self._timed_out(limit)
        if self._error is not None:
            raise self._error
        pause = 1e-5
        while not self._request_done():
            if time.monotonic() > deadline:
                self._timed_out(limit)
            time.sleep(pause)
            pause = min(pause * 2, 1e-3)
        if not self._finished:
            self._finished = True
            if self._finish is not None:
                self._finish()
        return True

    def result(self):
        """The output tensors of the operation (after wait())."""
        self.wait()
        return self._outputs

    def _source_rank(self):
        """The global rank an irecv received from (after wait())."""
        self.wait()
        return self._source

    def _timed_out(self, limit):
        raise DistBackendError(f"rank {self._rank}: {self._description} timed out after "
                               f"{limit:g} s (the process group's timeout): another rank "
                               f"did not join it")

    def __repr__(self):
        state = "completed" if self.is_completed() else "pending"
        return f"<Work {self._description} ({state})>"


def completed(description, rank, outputs=()):
    """A Work that is already done (world size 1, non-members, empty operations)."""
    work = Work(description, rank, 0.0, outputs=outputs)
    work._ran.set()
    return work
