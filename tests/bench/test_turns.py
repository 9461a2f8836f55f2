"""The bench's driver taking worker processes in turns (`_bench/turns.py`) and the worker's
line protocol: rows in order, failures as error rows (timings are never asserted)."""
import io
import json
import time
import types

from tensorlib._bench import turns, worker
from tensorlib._bench.cli import _child_env
from tensorlib._bench.progress import Progress


def _run(jobs):
    return turns.run_in_turns(jobs, True, _child_env(), Progress(1, stream=io.StringIO()))


def test_each_job_gets_its_rows_in_its_own_order():
    jobs = {("tensorlib", "cpu"): ["add_1K", "exp_1K", "small_add"],
            ("numpy", "cpu"): ["add_1K", "exp_1K"]}
    rows = _run(jobs)
    assert [(r["library"], r["workload"]) for r in rows] == [
        ("tensorlib", "add_1K"), ("tensorlib", "exp_1K"), ("tensorlib", "small_add"),
        ("numpy", "add_1K"), ("numpy", "exp_1K")]
    for r in rows:
        assert "error" not in r, r["error"]
        assert r["repeats"] >= 2 and 0 < r["best"] <= r["median"] == r["seconds"]


def test_a_library_that_cannot_load_gives_error_rows_and_the_others_run():
    rows = _run({("tensorlib", "cpu"): ["add_1K"],
                 ("no_such_library_xyz", "cpu"): ["add_1K", "exp_1K"]})
    assert "error" not in rows[0]
    assert [r["workload"] for r in rows[1:]] == ["add_1K", "exp_1K"]
    assert all("ModuleNotFoundError" in r["error"] for r in rows[1:])


def test_the_worker_protocol_answers_each_command():
    commands = io.StringIO("".join(json.dumps(c) + "\n" for c in (
        {"prepare": "add_1K"}, {"repeat": "add_1K"}, {"repeat": "add_1K"},
        {"repeat": "add_1K"}, {"repeat": "add_1K"}, {"finish": "add_1K"})))
    answers = io.StringIO()
    worker.serve("tensorlib", "cpu", True, commands, answers)
    lines = [json.loads(x) for x in answers.getvalue().splitlines()]
    assert lines[0] == {"ready": True} and lines[1] == {"row": None}
    assert all(set(x) == {"done"} for x in lines[2:6])
    row = lines[6]["row"]
    assert row["workload"] == "add_1K" and row["library"] == "tensorlib"
    assert row["seconds"] > 0 and row["repeats"] >= 1 and "error" not in row


def test_a_turn_waits_for_the_last_workers_threads_to_go_idle(monkeypatch):
    """_settle polls a process's CPU time until a poll finds it quiet, at most LONGEST. The
    processes are simulated (their CPU time scripted): a real busy loop beside other load
    can be descheduled for a whole poll and look quiet."""
    naps = []
    monkeypatch.setattr(turns, "time", types.SimpleNamespace(sleep=naps.append))
    spent = {"idle": 0.0, "busy": 0.0}

    def cpu_seconds(pid):
        if pid == "busy":
            spent["busy"] += turns.POLL          # a full core over each poll
        return spent[pid]
    monkeypatch.setattr(turns, "_cpu_seconds", cpu_seconds)
    turns._settle("idle")
    assert len(naps) == 1                              # quiet at the first look
    naps.clear()
    turns._settle("busy")                              # never quiet: waits the longest
    assert len(naps) == round(turns.LONGEST / turns.POLL)
    monkeypatch.setattr(turns, "_cpu_seconds", lambda pid: None)
    naps.clear()
    turns._settle("unknown")                           # /proc cannot say: one poll
    assert len(naps) == 1


def test_cpu_seconds_reads_a_processes_threads():
    import os
    before = turns._cpu_seconds(os.getpid())
    end = time.process_time() + 0.05
    while time.process_time() < end:                   # this process's own CPU time
        pass
    after = turns._cpu_seconds(os.getpid())
    assert before is not None and after - before >= 0.04
