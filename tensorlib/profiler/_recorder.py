"""How the profiler sees every dispatched op at no cost while it is off: while a profile
records, each loaded backend's dispatch table (the dict every op, Cython fast paths included,
looks its kernel up in) holds timing wrappers of its kernels, and the canonical devices'
allocators are wrapped when memory is profiled; stopping puts the originals back. With no
profiler recording, none of this exists on the kernel path. The Python ops (`@differentiable`
ones and autocast's listed ones) are events too ("tensorlib::linear", ...), through the ops'
hook that autocast also uses (one flag read per op when neither is on).

Events are appended to the recording Profile's list; a per-thread stack of open events gives
each its parent, from which self time follows. With a device activity, `_device.py` adds the
kernels' device time (and removes its wrappers on stop, as this module does)."""
import functools
import threading
import time
import traceback

import tensorlib
from tensorlib._C import device as _device
from tensorlib._C import dispatch as _dispatch
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.ops import _autocast as _op_hook
from tensorlib.profiler._device import DeviceCapture

current = None                       # the recording _Session, or None
_local = threading.local()


class RawEvent:
    __slots__ = ("name", "start_ns", "end_ns", "tid", "shapes", "stack", "kind", "children_ns",
                 "memory", "parent", "device_type", "device_ns", "self_device_ns", "device",
                 "correlation", "launch_ns", "launch_tid")

    def __init__(self, name, kind, shapes, stack, device_type):
        self.name, self.kind, self.shapes, self.stack = name, kind, shapes, stack
        self.tid = threading.get_ident()
        self.children_ns = 0
        self.memory = 0
        self.device_type = device_type
        self.parent = None
        self.start_ns = self.end_ns = 0
        self.device_ns = self.self_device_ns = 0      # kernels' time on the device
        self.device = self.correlation = None         # set on kernel events only


def _stack():
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def _user_frames():
    frames = traceback.extract_stack()[:-3]
    return [f"{f.filename}({f.lineno}): {f.name}" for f in frames
            if "/tensorlib/" not in f.filename.replace("\\", "/")][-8:]


def _shapes(args):
    return [list(a._sizes) if isinstance(a, TensorImpl) else [] for a in args]


def begin(name, kind, args=(), device_type="cpu"):
    session = current
    ev = RawEvent(name, kind, _shapes(args) if session.record_shapes else [],
                  _user_frames() if session.with_stack else None, device_type)
    stack = _stack()
    ev.parent = stack[-1] if stack else None
    stack.append(ev)
    ev.start_ns = time.perf_counter_ns()
    return ev


def end(ev):
    ev.end_ns = time.perf_counter_ns()
    stack = _stack()
    if stack and stack[-1] is ev:
        stack.pop()
    if ev.parent is not None:
        ev.parent.children_ns += ev.end_ns - ev.start_ns
    session = current
    if session is not None:
        session.events.append(ev)


def _open_event():
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


class _OpEvents:
    """What the ops' hook (tensorlib/ops/_autocast.py) calls for op-level events."""

    @staticmethod
    def begin(name, kind, args):
        if current is None:
            return None
        device_type = next((a._device.type for a in args if isinstance(a, TensorImpl)),
                           "cpu")
        return begin(name, kind, args, device_type)

    @staticmethod
    def end(ev):
        end(ev)


def _timed(name, kernel, device_type):
    """The kernel timed; it keeps what the kernel says about itself (cross_entropy's
    `checks_targets`: without it a profiled call ran the op's own target checks, six ops
    that an unprofiled call does not run)."""
    def run(*args, **kwargs):
        if current is None:
            return kernel(*args, **kwargs)
        ev = begin(name, "cpu_op", args, device_type)
        try:
            return kernel(*args, **kwargs)
        finally:
            end(ev)
    return functools.update_wrapper(run, kernel)


def _counted(allocate, device_type):
    def alloc(nbytes, index=None):
        handle = allocate(nbytes, index)
        stack = _stack()
        if current is not None:
            current.memory_events.append((time.perf_counter_ns(), nbytes, device_type))
            if stack:
                stack[-1].memory += nbytes
        return handle
    alloc.__wrapped__ = allocate
    return alloc


class _Session:
    """One recording: installs the wrappers on start, removes them on stop."""

    def __init__(self, record_shapes, profile_memory, with_stack, device_types=()):
        self.record_shapes, self.profile_memory, self.with_stack = \
            record_shapes, profile_memory, with_stack
        self.events, self.memory_events = [], []
        self._tables, self._devices = {}, []
        self._device_capture = DeviceCapture(device_types, _open_event)

    def start(self):
        global current
        if current is not None:
            raise RuntimeError("Profiler is already enabled on this thread")
        for kind in tensorlib.backends.available():
            table = tensorlib.backends.LOADER.kernel_table(kind)
            self._tables[kind] = dict(table)
            table.update({op: _timed(op, k, kind) for op, k in table.items()})
            if self.profile_memory:
                dev = _device.canonical(kind)
                self._devices.append((dev, dev._allocate))
                dev._allocate = _counted(dev._allocate, kind)
        self._device_capture.start()
        current = self
        _op_hook.set_recorder(_OpEvents)

    def clear(self):
        """Forget what was recorded so far (the warmup steps of a schedule)."""
        self.events.clear()
        self.memory_events.clear()
        self._device_capture.launches.clear()

    def stop(self):
        global current
        current = None
        _op_hook.set_recorder(None)
        for kind, original in self._tables.items():
            _dispatch.table(kind).update(original)
        for dev, allocate in self._devices:
            dev._allocate = allocate
        self._tables, self._devices = {}, []
        self.events += self._device_capture.stop(
            lambda name, device_type: RawEvent(name, "kernel", [], None, device_type))
