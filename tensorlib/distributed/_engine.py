"""The communication thread: every MPI call of this process runs on it, in the order the
program issued them, so collectives on a communicator reach MPI in the same order on every
rank whether they were blocking or async (MPI requires that order; two threads issuing
collectives on one communicator may not). The caller waits on a threading.Event with the
group's timeout, which is how blocking collectives get a timeout at all; mpi4py releases the
GIL inside MPI, so backward keeps computing while a gradient bucket is being reduced."""
import atexit
import queue
import threading

__all__ = ["engine"]


class _Engine:
    def __init__(self):
        self._queue = queue.SimpleQueue()
        self._thread = None
        self._lock = threading.Lock()

    def submit(self, work, fn):
        """Run fn() on the communication thread; work records its result or error."""
        if self._thread is None:
            self._start()
        self._queue.put((work, fn))
        return work

    def _start(self):
        with self._lock:
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
            work._run(fn)

    def stop(self, timeout=5.0):
        """Let queued operations finish and end the thread (before MPI is finalised)."""
        thread = self._thread
        if thread is None:
            return
        self._queue.put(None)
        thread.join(timeout)
        self._thread = None


engine = _Engine()
