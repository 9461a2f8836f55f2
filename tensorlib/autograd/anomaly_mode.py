"""detect_anomaly / set_detect_anomaly: nodes remember the forward stack that made them, and
(with check_nan) a backward that produces NaN names the node and shows that stack."""
from tensorlib._C.autograd import set_anomaly_mode

_enabled = False
_check_nan = True


def _sync():
    """The engine reads the mode from C (it is checked for every node)."""
    set_anomaly_mode(_enabled, _check_nan)


def is_enabled():
    return _enabled


def is_check_nan_enabled():
    return _enabled and _check_nan


class set_detect_anomaly:
    """set_detect_anomaly(mode, check_nan=True): switches at once; as a context manager,
    restores the previous setting on exit."""

    def __init__(self, mode, check_nan=True):
        global _enabled, _check_nan
        self.previous = (_enabled, _check_nan)
        _enabled = bool(mode)
        _check_nan = bool(check_nan)
        _sync()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        global _enabled, _check_nan
        _enabled, _check_nan = self.previous
        _sync()
        return False


class detect_anomaly:
    """Context manager (or decorator) turning anomaly detection on inside it; unlike
    set_detect_anomaly it switches on entry, not on construction."""

    def __init__(self, check_nan=True):
        self.check_nan = bool(check_nan)
        self._previous = []

    def __enter__(self):
        global _enabled, _check_nan
        self._previous.append((_enabled, _check_nan))
        _enabled, _check_nan = True, self.check_nan
        _sync()
        return self

    def __exit__(self, *exc):
        global _enabled, _check_nan
        _enabled, _check_nan = self._previous.pop()
        _sync()
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper
