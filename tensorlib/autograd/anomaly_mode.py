"""detect_anomaly / set_detect_anomaly: nodes remember the forward stack that made them, and
a backward that produces NaN names the node and shows that stack."""
_enabled = False


def is_enabled():
    return _enabled


class set_detect_anomaly:
    """set_detect_anomaly(mode): switches at once; as a context manager, restores on exit."""

    def __init__(self, mode, check_nan=True):
        global _enabled
        self.previous = _enabled
        _enabled = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        global _enabled
        _enabled = self.previous
        return False


class detect_anomaly(set_detect_anomaly):
    def __init__(self, check_nan=True):
        super().__init__(True, check_nan)
