"""Device time for the profiler: while a profile with a device activity records, the launch
methods of each timed device's adapter (`dk.launch1d`/`dk.launch`, through which every
generated kernel, fused kernel and user kernel starts: tensorlib/codegen/primitives.py) are
replaced by instance attributes that launch through the backend's timer and note which op
was open; stopping deletes them, so the class's plain methods are back and a launch with no
profile costs what it did. The timers' readings become "kernel" events, and each kernel's
duration is added to the op that launched it (its self device time) and to that op's
ancestors (their device time), as torch's tables count it.

A backend that can time its kernels gives `Backend.device_timers()`: one timer per device in
use (device 0 when none is yet), each with

    timer.adapter       the device adapter whose launch1d/launch are wrapped
    timer.device        "opencl:0", the trace's name for the device
    timer.track         the queue or stream the kernels run on (an int: a trace thread id)
    timer.start()       get ready (OpenCL: a profiling queue; CUDA: a reference event)
    timer.launch(plain, kernel, *args) -> token   launch through `plain`, marked
    timer.stop()        wait for the device, undo start()
    timer.span_ns(token) -> (start, end) on time.perf_counter_ns's clock, after stop()
    timer.kernel_name(kernel) -> str

The OpenCL timer is tensorlib_opencl/profiling.py; the CUDA one (CUDA events) is
tensorlib_cuda/profiling.py."""
import itertools
import threading
import time

import tensorlib

_correlation = itertools.count(1)


class _Launch:
    __slots__ = ("timer", "kernel", "token", "parent", "launch_ns", "tid", "correlation")


class DeviceCapture:
    """The device side of one recording session, over the timers of `device_types`."""

    def __init__(self, device_types, parent_of):
        self.device_types = device_types
        self.parent_of = parent_of            # () -> the open RawEvent of this thread, or None
        self.timers, self.launches = [], []

    def start(self):
        for kind in self.device_types:
            backend = tensorlib.backends.get(kind)
            timers = backend.device_timers() if backend.device_timers else []
            for timer in timers:
                timer.start()
                self._wrap(timer)
                self.timers.append(timer)

    def _wrap(self, timer):
        dk = timer.adapter
        plain1d, plain = dk.launch1d, dk.launch
        launches, parent_of = self.launches, self.parent_of

        def record(token, kernel):
            launch = _Launch()
            launch.timer, launch.kernel, launch.token = timer, kernel, token
            launch.parent, launch.tid = parent_of(), threading.get_ident()
            launch.launch_ns = time.perf_counter_ns()
            launch.correlation = next(_correlation)
            launches.append(launch)

        def launch1d(kernel, n, *args):
            record(timer.launch(plain1d, kernel, n, *args), kernel)

        def launch(kernel, global_size, local_size, *args):
            record(timer.launch(plain, kernel, global_size, local_size, *args), kernel)

        dk.launch1d, dk.launch = launch1d, launch

    def stop(self, make_event):
        """Unwrap and wait; then [kernel RawEvent] from make_event(name, device_type), with
        the durations added to the ops that launched them."""
        for timer in self.timers:
            del timer.adapter.launch1d, timer.adapter.launch
            timer.stop()
        events = []
        for launch in self.launches:
            timer = launch.timer
            ev = make_event(timer.kernel_name(launch.kernel), timer.device.split(":")[0])
            ev.start_ns, ev.end_ns = timer.span_ns(launch.token)
            ev.tid, ev.parent = timer.track, launch.parent
            ev.device, ev.correlation = timer.device, launch.correlation
            ev.launch_ns, ev.launch_tid = launch.launch_ns, launch.tid
            duration = ev.end_ns - ev.start_ns
            ev.device_ns = ev.self_device_ns = duration
            owner = launch.parent
            if owner is not None:
                owner.self_device_ns += duration
            while owner is not None:
                owner.device_ns += duration
                owner = owner.parent
            events.append(ev)
        self.timers, self.launches = [], []
        return events
