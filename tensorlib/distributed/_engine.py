"""The communication thread: MPI calls of this process run in the order the program issued
them, so collectives on a communicator reach MPI in the same order on every rank whether
they were blocking or async (MPI requires that order; two threads issuing collectives on
one communicator at once may not). Async operations run on the thread, and the caller waits
on a threading.Event with the group's timeout; mpi4py releases the GIL inside MPI, so
backward keeps computing while a gradient bucket is being reduced. A blocking operation
issued while nothing is queued runs on the caller's thread instead (two thread switches
fewer), holding the same lock, so the order is kept."""
import atexit
import queue
import threading

__all__ = ["engine"]


class _Engine:
    def __init__(self):
        self._queue = queue.SimpleQueue()
        self._thread = None
        self._start_lock = threading.Lock()
        self._mpi = threading.Lock()          # held by whoever is making an MPI call
        self._count = threading.Lock()
        self._pending = 0                     # submitted, not yet finished

    def submit(self, work, fn):
        """Run fn() on the communication thread; work records its result or error."""
        if self._thread is None:
            self._start()
        with self._count:
            self._pending += 1
        self._queue.put((work, fn))
        return work

    def run_here_if_idle(self, work, fn):
        """Run fn() on this thread when nothing is queued before it; False otherwise."""
        with self._count:
            if self._pending or not self._mpi.acquire(blocking=False):
                return False
        try:
            work._run(fn)
        finally:
            self._mpi.release()
        return True

    def _start(self):
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="tensorlib-mpi",
                                                daemon=True)
                self._thread.start()
                atexit.register(self.stop)

    def _loop(self):
        while True:
            item = self._queue.get()
            if item is None:
                return
            work, fn = item
            with self._mpi:
                work._run(fn)
            with self._count:
                self._pending -= 1

    def stop(self, timeout=5.0):
        """Let queued operations finish and end the thread (before MPI is finalised)."""
        thread = self._thread
        if thread is None:
            return
        self._queue.put(None)
        thread.join(timeout)
        self._thread = None


engine = _Engine()
