"""tensorlib.multiprocessing.spawn: start nprocs processes running fn(i, *args), and turn
a child's exception into one in the parent (torch.multiprocessing.spawn)."""
import multiprocessing
import multiprocessing.connection
import signal
import sys
import traceback

__all__ = ["spawn", "start_processes", "ProcessContext", "ProcessException",
           "ProcessRaisedException", "ProcessExitedException"]


class ProcessException(Exception):
    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A child raised: the message carries its traceback."""


class ProcessExitedException(ProcessException):
    """A child died without an exception (a signal or a non-zero exit code)."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _wrap(fn, i, args, error_queue):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_queues):
        self.processes, self.error_queues = processes, error_queues
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """Wait for one child to end; True once all ended well. A failed child stops the
        others and raises ProcessRaisedException / ProcessExitedException."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            self.processes[index].join()
            if self.processes[index].exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join()
        process = self.processes[failed]
        if not self.error_queues[failed].empty():
            msg = (f"\n\n-- Process {failed} terminated with the following error:\n"
                   f"{self.error_queues[failed].get()}")
            raise ProcessRaisedException(msg, failed, process.pid)
        code = process.exitcode
        if code < 0:
            name = signal.Signals(-code).name
            raise ProcessExitedException(f"process {failed} terminated with signal {name}",
                                         failed, process.pid, code, name)
        raise ProcessExitedException(f"process {failed} terminated with exit code {code}",
                                     failed, process.pid, code)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    ctx = multiprocessing.get_context(start_method)
    processes, error_queues = [], []
    for i in range(nprocs):
        error_queue = ctx.SimpleQueue()
        process = ctx.Process(target=_wrap, args=(fn, i, args, error_queue), daemon=daemon)
        process.start()
        processes.append(process)
        error_queues.append(error_queue)
    context = ProcessContext(processes, error_queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run fn(i, *args) for i in range(nprocs), each in its own process."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
