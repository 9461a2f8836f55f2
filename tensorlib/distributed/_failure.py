"""A rank that raises ends the whole job: without this, the other ranks would wait in their
next collective until the timeout (or forever inside MPI). The hooks print the traceback
under a line naming the rank and the error, then abort the MPI job, which makes mpiexec (and the launcher)
stop every rank and exit non-zero."""
import sys
import threading
import time
import traceback

__all__ = ["install", "uninstall", "fail"]

_saved = None
# The report reaches the terminal through mpiexec's proxy, which reads this rank's stderr
# pipe; an abort straight after the write let the proxy be torn down with the report still
# unread (seen once in CI: the job ended with mpiexec's exit status only). A short pause gives
# it time to forward the report; the job still ends in well under a second.
_FORWARD_SECONDS = 0.25


def _report(rank, exc_type, exc, tb, where):
    # the message is in the first line, written at once: when every rank fails together,
    # another rank's abort can end this process before the traceback is out
    message = str(exc).splitlines()[0] if str(exc) else ""
    sys.stderr.write(f"tensorlib.distributed: rank {rank} raised {exc_type.__name__}"
                     f"{where}{': ' + message if message else ''}; aborting the job\n")
    sys.stderr.flush()
    traceback.print_exception(exc_type, exc, tb, file=sys.stderr)
    sys.stderr.flush()


def fail(rank, exc_type, exc, tb, abort, where=""):
    """Report an exception of this rank and abort the job."""
    sys.stdout.flush()
    _report(rank, exc_type, exc, tb, where)
    time.sleep(_FORWARD_SECONDS)
    abort(1)


def install(rank, abort):
    """Make an uncaught exception on any thread of this rank abort the job (abort(code))."""
    global _saved
    if _saved is None:
        _saved = (sys.excepthook, threading.excepthook)

    def excepthook(exc_type, exc, tb):
        fail(rank, exc_type, exc, tb, abort)

    def thread_excepthook(args):
        if args.exc_type is SystemExit:
            return
        name = args.thread.name if args.thread is not None else "?"
        fail(rank, args.exc_type, args.exc_value, args.exc_traceback, abort,
             f" in thread {name}")

    sys.excepthook = excepthook
    threading.excepthook = thread_excepthook


def uninstall():
    global _saved
    if _saved is not None:
        sys.excepthook, threading.excepthook = _saved
        _saved = None
