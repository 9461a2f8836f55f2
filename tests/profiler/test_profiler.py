"""The profiler: tables and Chrome traces hold the recorded functions and the dispatched
ops; schedules follow torch's; nothing is left installed after a profile."""
import gzip
import json
import os

import pytest

import tensorlib
from tensorlib._C import dispatch
from tensorlib.profiler import (ProfilerAction, ProfilerActivity, profile, record_function,
                                schedule, tensorboard_trace_handler)


# the kernel of a Linear's product: "addmm_bias" where the backend writes the bias on its GEMM
# threads (the CPU), "addmm" where it fuses it otherwise, "mm" for a plain 2-D product, else
# "matmul"
PRODUCT = {"matmul", "mm", "addmm", "addmm_bias"}


def _work(device="cpu"):
    model = tensorlib.nn.Linear(8, 4).to(device)
    x = tensorlib.randn(3, 8, device=device)
    with record_function("forward_pass"):
        y = model(x).relu().sum()
    y.backward()


def test_table_holds_record_functions_and_ops(device):
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        _work(device)
    averages = prof.key_averages()
    names = {e.key for e in averages}
    assert {"forward_pass", "sum"} <= names and names & PRODUCT
    text = averages.table(sort_by="cpu_time_total", row_limit=5)
    assert "forward_pass" in text and "Self CPU time total" in text
    assert len(text.strip().splitlines()) == 5 + 5      # header lines + 5 rows
    fwd = next(e for e in averages if e.key == "forward_pass")
    inner = sum(e.cpu_time_total for e in prof.events() if e.name in PRODUCT)
    assert fwd.cpu_time_total >= fwd.self_cpu_time_total > 0
    assert fwd.count == 1 and inner > 0
    for key in ("self_cpu_time_total", "cuda_time_total", "cpu_memory_usage", "count"):
        averages.table(sort_by=key, row_limit=3)
    with pytest.raises(ValueError, match="sort_by"):
        averages.table(sort_by="nonsense")


def test_group_by_input_shape():
    a, b = tensorlib.randn(2, 2), tensorlib.randn(3, 3)
    with profile(record_shapes=True) as prof:
        a + a
        b + b
        b + b
    adds = [e for e in prof.key_averages(group_by_input_shape=True) if e.key == "add"]
    assert sorted((e.count, str(e.input_shapes)) for e in adds) == \
        [(1, "[[2, 2], [2, 2], [2, 2]]"), (2, "[[3, 3], [3, 3], [3, 3]]")]
    assert [e.count for e in prof.key_averages() if e.key == "add"] == [2 + 1]


def test_chrome_trace_schema(tmp_path):
    with profile(record_shapes=True, profile_memory=True) as prof:
        _work()
    for path in (tmp_path / "t.json", tmp_path / "t.json.gz"):
        prof.export_chrome_trace(str(path))
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt") as f:
            trace = json.load(f)
        events = trace["traceEvents"]
        complete = [e for e in events if e["ph"] == "X"]
        assert "forward_pass" in {e["name"] for e in complete}
        assert PRODUCT & {e["name"] for e in complete}
        for e in complete:
            assert isinstance(e["ts"], float) and e["dur"] >= 0
            assert e["pid"] == os.getpid() and isinstance(e["tid"], int)
        assert all(e["ph"] in ("X", "i") for e in events)
        fwd = next(e for e in complete if e["name"] == "forward_pass")
        mm = next(e for e in complete if e["name"] in PRODUCT)
        assert fwd["ts"] <= mm["ts"] and mm["ts"] + mm["dur"] <= fwd["ts"] + fwd["dur"] + 1e-3


def test_schedule_matches_torch():
    torch = pytest.importorskip("torch")
    for kwargs in (dict(wait=1, warmup=1, active=2, repeat=2, skip_first=1),
                   dict(wait=2, warmup=1, active=1, skip_first_wait=1),
                   dict(wait=0, warmup=2, active=3)):
        ours = schedule(**kwargs)
        theirs = torch.profiler.schedule(**kwargs)
        assert [ours(i).name for i in range(14)] == [theirs(i).name for i in range(14)]


def test_schedule_records_active_steps_and_calls_handler(tmp_path):
    traces = []
    x = tensorlib.randn(2)
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                 on_trace_ready=lambda p: traces.append(
                     [e.name for e in p.events() if e.name.startswith("step")])) as prof:
        for i in range(6):
            with record_function(f"step{i}"):
                x + x
            prof.step()
    assert traces == [["step2", "step3"]]
    handler_dir = tmp_path / "tb"
    with profile(on_trace_ready=tensorboard_trace_handler(str(handler_dir))):
        x + x
    (written,) = os.listdir(handler_dir)
    assert written.endswith(".pt.trace.json")
    assert json.load(open(handler_dir / written))["traceEvents"]
    assert ProfilerAction.RECORD_AND_SAVE.name == "RECORD_AND_SAVE"


def test_record_function_decorator_and_nothing_left_installed():
    before = dict(dispatch.table("cpu"))

    @record_function("my_fn")
    def f(t):
        return t * 2
    x = tensorlib.randn(2)
    f(x)                                     # no profiler: runs as is
    with tensorlib.autograd.profiler.profile(with_stack=True) as prof:
        f(x)
    assert [e.name for e in prof.events()] == ["mul", "my_fn"] or \
        {e.name for e in prof.events()} == {"mul", "my_fn"}
    assert any("test_profiler.py" in frame for frame in
               next(e for e in prof.events() if e.name == "mul").stack)
    assert dispatch.table("cpu") == before
    with pytest.raises(RuntimeError, match="already enabled"):
        with profile():
            with profile():
                pass
    assert dispatch.table("cpu") == before


def test_python_ops_are_events_around_their_kernels():
    model = tensorlib.nn.Linear(4, 2)
    with profile() as prof:
        model(tensorlib.randn(3, 4))
    events = prof.events()
    linear = next(e for e in events if e.name == "tensorlib::linear")
    kernel = next(e for e in events if e.name in PRODUCT)
    assert linear.time_range_start <= kernel.time_range_start
    assert linear.cpu_time_total >= kernel.cpu_time_total
    assert not tensorlib.ops._autocast.active          # the hook is off again


def test_record_function_ranges_as_ops_and_the_printed_table():
    """torch.ops.profiler._record_function_enter/_exit (what fx graphs call to keep a range)
    open and close a range; print(prof) of autograd.profiler.profile is its table."""
    x = tensorlib.ones(4)
    with tensorlib.autograd.profiler.profile() as prof:
        handle = tensorlib.ops.profiler._record_function_enter("outer")
        x.relu()
        tensorlib.ops.profiler._record_function_exit(handle)
    table = str(prof)
    assert "outer" in table and "relu" in table
    outer = [ev for ev in prof.function_events if ev.name == "outer"]
    assert len(outer) == 1
    with pytest.raises(TypeError, match="_record_function_exit: expected the handle"):
        tensorlib.ops.profiler._record_function_exit(3)


def test_a_profiled_cross_entropy_runs_the_same_kernels_as_an_unprofiled_one():
    """The timing wrappers keep what a kernel says about itself: the fused cross_entropy
    kernel checks its targets (`checks_targets`), so the op runs no checking ops of its own,
    profiled or not."""
    x = tensorlib.randn(16, 5, requires_grad=True)
    y = tensorlib.randint(0, 5, (16,))
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        tensorlib.nn.functional.cross_entropy(x, y).backward()
    names = {e.key for e in prof.key_averages()}
    assert "cross_entropy" in names and "cross_entropy_backward" in names
    assert not names & {"eq", "lt", "ge", "where", "bitwise_or"}, names
    with pytest.raises(IndexError, match="out of bounds"):
        with profile(activities=[ProfilerActivity.CPU]):
            tensorlib.nn.functional.cross_entropy(x, tensorlib.tensor([7] * 16))
