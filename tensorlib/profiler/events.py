"""What a profile recorded, in torch.autograd.profiler_util's shapes: FunctionEvent,
EventList (key_averages, table, export_chrome_trace) and FunctionEventAvg. Times are in
microseconds, as torch's. A kernel timed on its device is an event of its own (device_type
"opencl"/"cuda", no CPU time); the op that launched it counts its time as self device time,
and the op's ancestors as device time."""
import gzip
import json
import os
from collections import OrderedDict

_SORT_KEYS = ("cpu_time", "cuda_time", "device_time", "cpu_time_total", "cuda_time_total",
              "device_time_total", "self_cpu_time_total", "self_cuda_time_total",
              "self_device_time_total", "cpu_memory_usage", "self_cpu_memory_usage", "count")


class FunctionEvent:
    def __init__(self, raw, origin_ns):
        self.name = self.key = raw.name
        self.id = id(raw)
        self.thread = raw.tid
        self.input_shapes = raw.shapes
        self.stack = raw.stack or []
        self.is_user_annotation = raw.kind == "user_annotation"
        self.is_device_event = raw.kind == "kernel"
        self.device_type = raw.device_type
        self.time_range_start = (raw.start_ns - origin_ns) / 1000.0
        self.duration = (raw.end_ns - raw.start_ns) / 1000.0
        if self.is_device_event:
            self.cpu_time_total = self.self_cpu_time_total = 0.0
            self.device, self.correlation = raw.device, raw.correlation
            self.launch_time = (raw.launch_ns - origin_ns) / 1000.0
            self.launch_thread = raw.launch_tid
        else:
            self.cpu_time_total = self.duration
            self.self_cpu_time_total = self.cpu_time_total - raw.children_ns / 1000.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = raw.memory
        self.device_time_total = self.cuda_time_total = raw.device_ns / 1000.0
        self.self_device_time_total = self.self_cuda_time_total = raw.self_device_ns / 1000.0
        self.count = 1

    @property
    def cpu_time(self):
        return self.cpu_time_total

    @property
    def device_time(self):
        return self.device_time_total

    cuda_time = device_time

    def __repr__(self):
        return (f"<FunctionEvent name={self.name} cpu_time_total={self.cpu_time_total:.3f}us "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The totals of every event with one key (name, and input shapes when grouped so)."""

    def __init__(self, key, input_shapes):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.stack = []
        self.is_user_annotation = False
        self.is_device_event = False
        self.device_type = None
        for field in ("cpu_time_total", "self_cpu_time_total", "device_time_total",
                      "self_device_time_total", "cuda_time_total", "self_cuda_time_total",
                      "cpu_memory_usage", "self_cpu_memory_usage"):
            setattr(self, field, 0.0)

    def add(self, ev):
        if not self.count:
            self.device_type, self.is_device_event = ev.device_type, ev.is_device_event
        self.count += ev.count
        self.is_user_annotation = ev.is_user_annotation
        for field in ("cpu_time_total", "self_cpu_time_total", "device_time_total",
                      "self_device_time_total", "cuda_time_total", "self_cuda_time_total",
                      "cpu_memory_usage", "self_cpu_memory_usage"):
            setattr(self, field, getattr(self, field) + getattr(ev, field))
        if not self.stack:
            self.stack = ev.stack
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / max(self.count, 1)

    @property
    def device_time(self):
        return self.device_time_total / max(self.count, 1)

    cuda_time = device_time

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.3f}us>")


def _fmt_us(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _fmt_bytes(n):
    for unit, size in (("Gb", 1 << 30), ("Mb", 1 << 20), ("Kb", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} b"


class EventList(list):
    """A list of events; use_device names the device of the table's device columns."""

    def __init__(self, events=(), use_device=None):
        super().__init__(events)
        self.use_device = use_device

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        groups = OrderedDict()
        for ev in self:
            key = (ev.key,)
            if group_by_input_shape:
                key += (str(ev.input_shapes),)
            if group_by_stack_n:
                key += tuple(ev.stack[-group_by_stack_n:])
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(ev.key, ev.input_shapes
                                                     if group_by_input_shape else None)
            avg.add(ev)
        return EventList(groups.values(), self.use_device)

    def total_average(self):
        total = FunctionEventAvg("Total", None)
        for ev in self:
            total.add(ev)
        return total

    @property
    def self_cpu_time_total(self):
        return sum(ev.self_cpu_time_total for ev in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        rows = list(self)
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise ValueError(f"sort_by must be one of {list(_SORT_KEYS)}, got {sort_by!r}")
            rows.sort(key=lambda ev: getattr(ev, sort_by), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        self_total = sum(ev.self_cpu_time_total for ev in self) or 1.0
        # as torch: the device total counts the kernels, not the ops that launched them again
        device_total = sum(ev.self_device_time_total for ev in self if ev.is_device_event)
        device = any(ev.self_device_time_total > 0 for ev in self)
        name = (self.use_device or "device").upper()
        shapes = any(getattr(ev, "input_shapes", None) for ev in rows)
        memory = any(ev.cpu_memory_usage for ev in rows)
        name_w = min(max(len("Name"), *(len(ev.key) for ev in rows)) if rows else 4,
                     max_name_column_width)
        cols = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
        if device:
            cols += [f"Self {name}", f"Self {name} %", f"{name} total", f"{name} time avg"]
        if memory:
            cols += ["CPU Mem", "Self CPU Mem"]
        cols += ["# of Calls"]
        if shapes:
            cols += ["Input Shapes"]
        widths = [max(12, len(c)) for c in cols]
        line = "-" * name_w + "  " + "  ".join("-" * w for w in widths)
        out = []
        if header:
            out.append("=" * len(line))
            out.append(header)
        out += [line, "Name".ljust(name_w) + "  " +
                "  ".join(c.rjust(w) for c, w in zip(cols, widths)), line]
        for ev in rows:
            cells = [f"{100 * ev.self_cpu_time_total / self_total:.2f}%",
                     _fmt_us(ev.self_cpu_time_total),
                     f"{100 * ev.cpu_time_total / self_total:.2f}%",
                     _fmt_us(ev.cpu_time_total), _fmt_us(ev.cpu_time)]
            if device:
                cells += [_fmt_us(ev.self_device_time_total),
                          f"{100 * ev.self_device_time_total / (device_total or 1.0):.2f}%",
                          _fmt_us(ev.device_time_total), _fmt_us(ev.device_time)]
            if memory:
                cells += [_fmt_bytes(ev.cpu_memory_usage), _fmt_bytes(ev.self_cpu_memory_usage)]
            cells += [str(ev.count)]
            if shapes:
                cells += [str(ev.input_shapes)[:max_shapes_column_width]]
            out.append(ev.key[:name_w].ljust(name_w) + "  " +
                       "  ".join(c.rjust(w) for c, w in zip(cells, widths)))
        out.append(line)
        out.append(f"Self CPU time total: {_fmt_us(self_total)}")
        if device:
            out.append(f"Self {name} time total: {_fmt_us(device_total)}")
        return "\n".join(out) + "\n"

    def export_chrome_trace(self, path, memory_events=()):
        """The Trace Event Format's JSON object form, as Perfetto and chrome://tracing read:
        complete events (ph "X") with ts/dur in microseconds, pid and tid. Kernels timed on
        a device are on that device's own track (a pid named by a process_name metadata
        event, the queue or stream as its tid), with a flow arrow (ph "s" -> "f", cat
        "ac2g" as torch's) from the op that launched each one."""
        pid = os.getpid()
        trace, tracks = [], {}
        for ev in self:
            if ev.is_device_event:
                trace += _device_entries(ev, pid, tracks)
                continue
            entry = {"ph": "X", "cat": "user_annotation" if ev.is_user_annotation
                     else "cpu_op", "name": ev.name, "pid": pid, "tid": ev.thread,
                     "ts": ev.time_range_start, "dur": ev.cpu_time_total,
                     "args": {"Device": ev.device_type}}
            if ev.input_shapes:
                entry["args"]["Input Dims"] = ev.input_shapes
            trace.append(entry)
        for ts, nbytes, device_type in memory_events:
            trace.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]",
                          "pid": pid, "tid": 0, "ts": ts,
                          "args": {"Bytes": nbytes, "Device Type": device_type}})
        trace += _track_names(tracks, pid)
        trace.sort(key=lambda e: e["ts"])
        text = json.dumps({"traceEvents": trace, "displayTimeUnit": "ms",
                           "schemaVersion": 1})
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "wt") as f:
            f.write(text)


def _device_entries(ev, pid, tracks):
    """A kernel's complete event on its device's track, and the flow from its launch."""
    track = tracks.get(ev.device)
    if track is None:
        number = len(tracks) + (len(tracks) >= pid)       # small ints, never the host pid
        track = tracks[ev.device] = (number, set())
    track[1].add(ev.thread)
    ts = ev.time_range_start
    return [{"ph": "X", "cat": "kernel", "name": ev.name, "pid": track[0], "tid": ev.thread,
             "ts": ts, "dur": ev.duration,
             "args": {"device": ev.device, "queue": ev.thread, "correlation": ev.correlation}},
            {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": ev.correlation, "pid": pid,
             "tid": ev.launch_thread, "ts": ev.launch_time},
            {"ph": "f", "bp": "e", "cat": "ac2g", "name": "ac2g", "id": ev.correlation,
             "pid": track[0], "tid": ev.thread, "ts": ts}]


def _track_names(tracks, pid):
    """Metadata events naming the host process and each device track (sorted after it)."""
    if not tracks:
        return []
    names = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": 0,
              "args": {"name": f"python {pid}"}}]
    for order, (device, (number, queues)) in enumerate(tracks.items(), 1):
        names += [{"ph": "M", "name": "process_name", "pid": number, "tid": 0, "ts": 0,
                   "args": {"name": device}},
                  {"ph": "M", "name": "process_sort_index", "pid": number, "tid": 0, "ts": 0,
                   "args": {"sort_index": order}}]
        names += [{"ph": "M", "name": "thread_name", "pid": number, "tid": q, "ts": 0,
                   "args": {"name": f"queue {q}"}} for q in sorted(queues)]
    return names
