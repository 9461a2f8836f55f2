"""Device time in the profiler: with a device activity, every kernel launched while a profile
records is an event timed by the backend (OpenCL profiling queues here; CUDA events on a
GPU), its time counts to the op that launched it, tables get torch's device columns, and
the Chrome trace puts kernels on their own track; after the profile nothing of it is left on
the launch path."""
import json
import os

import pytest

import tensorlib
from tensorlib.profiler import ProfilerActivity, profile, record_function

OPENCL = tensorlib.backends.why_unavailable("opencl")
CUDA = tensorlib.backends.why_unavailable("cuda")
needs_opencl = pytest.mark.skipif(OPENCL is not None, reason=f"opencl unavailable: {OPENCL}")

# the Trace Event Format's fields per phase (X complete, i instant, s/f flow, M metadata)
_FIELDS = {"X": {"name", "ph", "ts", "dur", "pid", "tid"}, "i": {"name", "ph", "ts", "pid", "s"},
           "s": {"name", "ph", "ts", "pid", "tid", "id", "cat"},
           "f": {"name", "ph", "ts", "pid", "tid", "id", "cat", "bp"},
           "M": {"name", "ph", "pid", "args"}}
_METADATA = {"process_name", "process_sort_index", "thread_name", "thread_sort_index"}


def _check_trace_format(trace):
    assert isinstance(trace["traceEvents"], list)
    for e in trace["traceEvents"]:
        assert _FIELDS[e["ph"]] <= set(e), e
        assert isinstance(e["pid"], int) and isinstance(e.get("tid", 0), int), e
        if e["ph"] == "M":
            assert e["name"] in _METADATA, e
        else:
            assert isinstance(e["ts"], (int, float)), e
        if e["ph"] == "X":
            assert e["dur"] >= 0, e


def _device_state(index=0):
    return tensorlib.backends.get("opencl").state(index)


def _work(device):
    model = tensorlib.nn.Linear(8, 4).to(device)
    x = tensorlib.randn(3, 8, device=device)
    model(x).relu().sum().backward()          # builds every kernel once, before profiling
    return model, x


@needs_opencl
def test_each_opencl_kernel_is_a_device_event_counted_to_its_op():
    a, b = tensorlib.randn(4, device="opencl"), tensorlib.randn(4, device="opencl")
    a + b
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        with record_function("outer"):
            c = a + b
    kernels = [e for e in prof.events() if e.is_device_event]
    assert len(kernels) == 1                                 # a + b is one kernel launch
    (kernel,) = kernels
    assert kernel.device == "opencl:0" and kernel.device_type == "opencl"
    assert kernel.name.startswith("ew_b_add_float32")
    assert kernel.cpu_time_total == 0 and kernel.self_device_time_total > 0
    add = next(e for e in prof.events() if e.name == "add")
    outer = next(e for e in prof.events() if e.name == "outer")
    assert add.time_range_start <= kernel.launch_time <= add.time_range_start + add.duration
    assert add.self_device_time_total == add.device_time_total == kernel.duration
    assert outer.self_device_time_total == 0                 # it launched nothing itself
    assert outer.device_time_total == outer.cuda_time_total == kernel.duration
    assert tensorlib.equal(c.cpu(), a.cpu() + b.cpu())


@needs_opencl
def test_table_has_device_columns_and_total():
    model, x = _work("opencl")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        model(x).relu().sum().backward()
    averages = prof.key_averages()
    text = averages.table(sort_by="self_device_time_total", row_limit=8)
    header = text.splitlines()[1]
    for column in ("Self OPENCL", "Self OPENCL %", "OPENCL total", "OPENCL time avg"):
        assert column in header
    kernels = [e for e in averages if e.is_device_event]
    device_total = sum(e.self_device_time_total for e in kernels)
    assert device_total > 0 and {e.key for e in kernels} >= {"gemm_float32"}
    assert "Self OPENCL time total" in text.splitlines()[-1]
    ops = [e for e in averages if not e.is_device_event]
    assert sum(e.self_device_time_total for e in ops) == pytest.approx(device_total)
    for key in ("cuda_time_total", "device_time_total", "self_cuda_time_total"):
        first = averages.table(sort_by=key, row_limit=1).splitlines()[3]
        top = max(getattr(e, key) for e in averages)       # an op ties with its kernel
        assert any(first.startswith(e.key) for e in averages if getattr(e, key) == top)


@needs_opencl
def test_chrome_trace_puts_kernels_on_a_device_track(tmp_path):
    model, x = _work("opencl")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        model(x).sum()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    _check_trace_format(trace)
    events = trace["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    host = [e for e in events if e["ph"] == "X" and e["cat"] != "kernel"]
    assert kernels and {e["pid"] for e in host} == {os.getpid()}
    (track,) = {e["pid"] for e in kernels}
    assert track != os.getpid()
    names = {(e["pid"], e["name"]): e["args"] for e in events if e["ph"] == "M"}
    assert names[(track, "process_name")] == {"name": "opencl:0"}
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert set(starts) == set(ends) == {e["args"]["correlation"] for e in kernels}
    for k in kernels:                       # each flow: from the launching op to the kernel
        s, f = starts[k["args"]["correlation"]], ends[k["args"]["correlation"]]
        assert s["pid"] == os.getpid() and (f["pid"], f["tid"], f["ts"]) == \
            (k["pid"], k["tid"], k["ts"])
        assert any(h["tid"] == s["tid"] and h["ts"] <= s["ts"] <= h["ts"] + h["dur"]
                   for h in host)


@needs_opencl
def test_nothing_is_left_on_the_launch_path_after_a_profile():
    a = tensorlib.randn(1000, device="opencl")
    state = _device_state()
    plain_queue = state.dev.queue
    with profile(activities=[ProfilerActivity.PrivateUse1]):
        assert "launch1d" in vars(state.kernels) and state.dev.queue is not plain_queue
        b = a * 2 + 1
        big = tensorlib.empty(1 << 22, device="opencl").fill_(3.0)   # a fresh pool block
    for attr in ("launch1d", "launch"):
        assert attr not in vars(state.kernels)
    assert "allocate" not in vars(state.allocator)
    assert state.dev.queue is plain_queue and state.kernels.queue is plain_queue
    assert not plain_queue.properties & state.dev.cl.command_queue_properties.PROFILING_ENABLE
    assert tensorlib.allclose(b.cpu(), a.cpu() * 2 + 1) and big[-1].item() == 3.0


@needs_opencl
def test_schedule_keeps_only_the_active_steps_kernels():
    from tensorlib.profiler import schedule
    a = tensorlib.randn(4, device="opencl")
    a + a
    with profile(activities=[ProfilerActivity.PrivateUse1],
                 schedule=schedule(wait=1, warmup=1, active=2, repeat=1)) as prof:
        for _ in range(5):
            a + a
            prof.step()
    assert [e.is_device_event for e in prof.events()].count(True) == 2


@needs_opencl
def test_cpu_only_profile_has_no_device_events_and_legacy_use_device():
    a = tensorlib.randn(4, device="opencl")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        a + a
    assert not any(e.is_device_event for e in prof.events())
    assert "OPENCL" not in prof.key_averages().table()
    with tensorlib.autograd.profiler.profile(use_device="opencl") as legacy:
        a + a
    assert [e.is_device_event for e in legacy.events()].count(True) == 1
    assert "Self OPENCL" in legacy.table()


@pytest.mark.skipif(CUDA is not None, reason=f"needs a GPU (cuda unavailable: {CUDA})")
def test_cuda_kernels_are_timed_by_cuda_events():
    a = tensorlib.randn(1 << 16, device="cuda")
    a + a
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        a + a
    (kernel,) = [e for e in prof.events() if e.is_device_event]
    assert kernel.device == "cuda:0" and kernel.self_device_time_total > 0
    assert "Self CUDA" in prof.key_averages().table()
