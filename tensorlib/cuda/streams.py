"""CUDA streams and events (torch.cuda.Stream / Event). The objects wrap the backend's
driver streams and events; creating one needs a GPU and says why when there is none."""
from tensorlib.cuda import _state

__all__ = ["Stream", "Event", "current_stream", "default_stream", "set_stream", "stream",
           "StreamContext"]


class Stream:
    """An ordered queue of device work. Kernels go to the current stream (`stream(s)`)."""

    def __init__(self, device=None, priority=0, *, _raw=None):
        b = _state.backend()
        self.device_index = _state.index(device)
        self._raw = _raw if _raw is not None else b.new_stream(self.device_index, priority)

    @property
    def device(self):
        from tensorlib._C.device import device
        return device("cuda", self.device_index)

    @property
    def cuda_stream(self):
        """The driver's CUstream handle as an int (0 for the legacy default stream)."""
        return self._raw.handle

    def query(self):
        """True when all work queued on the stream is done."""
        return self._raw.is_done()

    def synchronize(self):
        self._raw.synchronize()

    def wait_event(self, event):
        """Later work on this stream waits for `event` (the host does not wait)."""
        self._raw.wait_for_event(event._raw)

    def wait_stream(self, stream):
        """Later work on this stream waits for the work queued on `stream` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream \
            and self.device_index == other.device_index

    def __hash__(self):
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self):
        return f"<tensorlib.cuda.Stream device=cuda:{self.device_index} " \
               f"cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A marker in a stream's work: `record`, `wait`, `query`, `synchronize`, and (with
    enable_timing=True) `elapsed_time` in milliseconds."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing
        self._raw = _state.backend().new_event(enable_timing, blocking, interprocess)
        self._recorded = False

    def record(self, stream=None):
        stream = current_stream() if stream is None else stream
        self._raw.record(stream._raw)
        self._recorded = True

    def wait(self, stream=None):
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self):
        return (not self._recorded) or self._raw.query()

    def synchronize(self):
        if self._recorded:
            self._raw.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds from this event to `end_event` (both recorded, with timing)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded):
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return end_event._raw.time_since(self._raw)

    def __repr__(self):
        return f"<tensorlib.cuda.Event timing={self.enable_timing} recorded={self._recorded}>"


def current_stream(device=None):
    b = _state.backend()
    i = _state.index(device)
    return Stream(i, _raw=b.current_stream(i))


def default_stream(device=None):
    b = _state.backend()
    i = _state.index(device)
    return Stream(i, _raw=b.default_stream(i))


def set_stream(stream):
    if stream is not None:
        _state.backend().set_stream(stream.device_index, stream._raw)


class StreamContext:
    """`with tensorlib.cuda.stream(s):` -- work inside goes to `s`; None does nothing."""

    def __init__(self, stream):
        self.stream = stream
        self._previous = None

    def __enter__(self):
        if self.stream is not None:
            self._previous = current_stream(self.stream.device_index)
            set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self._previous is not None:
            set_stream(self._previous)
            self._previous = None
        return False


def stream(stream):
    return StreamContext(stream)
