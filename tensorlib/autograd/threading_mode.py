"""torch.autograd's engine queries and switches that are not grad mode: multithreaded
backward (a per-thread flag, as PyTorch's), view replay and Kineto. tensorlib's engine runs
every backward on the calling thread, which is what PyTorch does with multithreading off,
so the flag records the request and is what is_multithreading_enabled reports."""
import functools
import threading

_local = threading.local()


def is_multithreading_enabled():
    """Whether multithreaded backward is requested on this thread (default True)."""
    return getattr(_local, "multithreading", True)


class set_multithreading_enabled:
    """set_multithreading_enabled(mode): switches at once as a call; as a context manager or
    decorator, restores the previous mode on exit."""

    def __init__(self, mode):
        self.prev = is_multithreading_enabled()
        _local.multithreading = bool(mode)
        self.mode = mode

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _local.multithreading = self.prev
        return False

    def __call__(self, fn):
        _local.multithreading = self.prev       # as a decorator, switch only inside calls

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return type(self)(self.mode)


def is_view_replay_enabled():
    """False: tensorlib's autograd never replays a view's chain of view ops to rebuild it (its
    views are rebuilt from their sizes, strides and offset), PyTorch's default too."""
    return False


def kineto_available():
    """False: tensorlib's profiler (tensorlib.profiler) is its own, not Kineto."""
    return False
