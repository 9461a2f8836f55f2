"""tensorlib.profiler.profile, schedule, record_function and tensorboard_trace_handler, with
torch.profiler's names and semantics (see _recorder.py for how ops are seen)."""
import functools
import os
import socket
import time
import warnings
from enum import Enum

from tensorlib.profiler import _recorder
from tensorlib.profiler.events import EventList, FunctionEvent


class ProfilerActivity(Enum):
    """What a profile records. CPU: every dispatched op and record_function block (always
    recorded). The device activities add each kernel's time on the device: CUDA is the cuda
    backend (CUDA events); PrivateUse1, torch's slot for a backend outside its tree, is every
    other accelerator backend that can time its kernels: opencl (profiling queues) and
    plugins that give Backend.device_timers. XPU and MTIA are accepted; no backend has them."""
    CPU = 0
    CUDA = 2
    XPU = 3
    MTIA = 4
    PrivateUse1 = 5


def _timed_device_types(activities):
    """The available backends whose kernels the activities ask device time for."""
    import tensorlib
    kinds = [k for k in tensorlib.backends.available() if k != "cpu"]
    chosen = []
    if ProfilerActivity.CUDA in activities and "cuda" in kinds:
        chosen.append("cuda")
    if ProfilerActivity.PrivateUse1 in activities:
        chosen += [k for k in kinds if k != "cuda"]
    return chosen


class ProfilerAction(Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """step -> ProfilerAction: skip_first steps, then cycles of wait, warmup and active steps
    (the last active step saves), `repeat` cycles (0: forever); skip_first_wait drops the
    first cycle's wait. torch's arithmetic, step for step."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} "
            f"(need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 \
            else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def _always_record(_step):
    return ProfilerAction.RECORD


class profile:
    """`with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:`; every
    kernel dispatched while it records is an event, as is each record_function block."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None):
        self.activities = set(activities) if activities else {ProfilerActivity.CPU}
        for a in self.activities:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(f"activities must be ProfilerActivity values, got {a!r}")
        self.schedule = schedule or _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes, self.profile_memory, self.with_stack = \
            record_shapes, profile_memory, with_stack
        self.acc_events = acc_events
        self.step_num = 0
        self.current_action = ProfilerAction.NONE
        self._session = None
        self._device_types = _timed_device_types(self.activities)
        self._events = EventList(use_device=self._use_device())
        self._memory_events = []
        self._origin_ns = time.perf_counter_ns()

    def _use_device(self):
        """The device name of the table's device columns (torch's use_device)."""
        kinds = self._device_types
        return None if not kinds else kinds[0] if len(kinds) == 1 else "device"

    # ---- recording -----------------------------------------------------------------------
    def _start_recording(self):
        if self._session is None:
            self._session = _recorder._Session(self.record_shapes, self.profile_memory,
                                               self.with_stack, self._device_types)
            self._session.start()

    def _stop_recording(self):
        session, self._session = self._session, None
        if session is None:
            return
        session.stop()
        events = [FunctionEvent(raw, self._origin_ns) for raw in session.events]
        events.sort(key=lambda ev: ev.time_range_start)
        if not self.acc_events:
            self._events = EventList(use_device=self._use_device())
            self._memory_events = []
        self._events.extend(events)
        self._memory_events += [((ts - self._origin_ns) / 1000.0, n, d)
                                for ts, n, d in session.memory_events]

    def _apply(self, action):
        """Move from the current action to `action`, saving a finished trace."""
        prev = self.current_action
        recording = (ProfilerAction.WARMUP, ProfilerAction.RECORD,
                     ProfilerAction.RECORD_AND_SAVE)
        if prev == ProfilerAction.RECORD_AND_SAVE or (prev in recording and action not in
                                                      recording):
            self._stop_recording()
            if prev in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE) and \
                    self.on_trace_ready is not None:
                self.on_trace_ready(self)
        if action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            if self._session is not None and prev == ProfilerAction.WARMUP:
                self._session.clear()                 # warmup steps are not kept
            self._start_recording()
        elif action == ProfilerAction.WARMUP:
            self._start_recording()
        self.current_action = action

    def start(self):
        self._origin_ns = time.perf_counter_ns()
        self._apply(self.schedule(self.step_num))

    def stop(self):
        if self.current_action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self._stop_recording()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        else:
            self._stop_recording()
        self.current_action = ProfilerAction.NONE

    def step(self):
        """Mark the end of a training step: the schedule decides what the next one records."""
        self.step_num += 1
        self._apply(self.schedule(self.step_num))

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    # ---- results -------------------------------------------------------------------------
    def events(self):
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        return self._events.key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        self._events.export_chrome_trace(path, self._memory_events)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Flame-graph stacks ("frame;frame;op value" lines); needs with_stack=True."""
        with open(path, "w") as f:
            for ev in self._events:
                if ev.stack:
                    f.write(";".join(reversed(ev.stack)) + f";{ev.name} "
                            f"{int(getattr(ev, metric))}\n")


class record_function:
    """Label a block (or, as a decorator, a function) in the profile; nothing is recorded,
    and almost nothing spent, while no profiler records."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._event = None

    def __enter__(self):
        if _recorder.current is not None:
            self._event = _recorder.begin(self.name, "user_annotation")
        return self

    def __exit__(self, *exc):
        if self._event is not None:
            _recorder.end(self._event)
            self._event = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapped


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """on_trace_ready that writes each trace as {worker}.{ms}.pt.trace.json[.gz] in dir_name
    (what TensorBoard's profiler plugin reads)."""
    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json"
        prof.export_chrome_trace(os.path.join(dir_name, name + (".gz" if use_gzip else "")))
    return handler
