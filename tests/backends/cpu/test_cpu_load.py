"""The CPU backend's kernels run on the cores other processes leave free (NOTE
[ oversubscription ] in tensorlib_cpu/cpu_load.py): the sampler's arithmetic, the configured
count as the bound, deterministic algorithms pinning it, reductions rounding the same on any
thread count, and a real busy process taking the cores."""
import subprocess
import sys
import time

import numpy as np
import pytest

import tensorlib
from tensorlib_cpu import cpu_load, fastreduce


class _Clock:
    """Stands in for (monotonic, /proc/stat busy seconds, process CPU time)."""

    def __init__(self, monkeypatch, others_per_second, ours_per_second):
        self.t = 100.0
        self.others, self.ours = others_per_second, ours_per_second
        monkeypatch.setattr(cpu_load.time, "monotonic", lambda: self.t)
        monkeypatch.setattr(cpu_load.time, "process_time", lambda: self.t * self.ours)
        monkeypatch.setattr(cpu_load, "_busy_seconds",
                            lambda cpus: self.t * (self.others + self.ours))


@pytest.mark.parametrize("others,ours,cpus,free", [
    (0.0, 2.0, [0, 1], 2),          # only us: every core
    (1.0, 1.0, [0, 1], 1),          # one busy process beside us on 2 cores
    (0.3, 1.5, [0, 1], 2),          # light background: rounds to all
    (0.6, 1.0, [0, 1], 1),
    (3.0, 1.0, [0, 1, 2, 3], 1),    # at least one
    (1.2, 2.0, list(range(8)), 7),
])
def test_free_cores_are_the_cores_others_left(monkeypatch, others, ours, cpus, free):
    clock = _Clock(monkeypatch, others, ours)
    sampler = cpu_load.LoadSampler()
    sampler.cpus, sampler.enabled = cpus, True
    assert sampler.free_cores() == len(cpus)          # no interval measured yet
    clock.t += 0.5
    assert sampler.free_cores() == free


def test_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv(cpu_load.ENV, "0")
    sampler = cpu_load.LoadSampler()
    assert not sampler.enabled and sampler.free_cores() == len(sampler.cpus)


class _Fixed:
    def __init__(self, free):
        self.free, self.enabled = free, True

    def free_cores(self):
        return self.free


@pytest.fixture
def sampler(monkeypatch):
    """fastreduce's sampler replaced by one reporting a fixed count; adaptivity on."""
    assert not tensorlib.are_deterministic_algorithms_enabled()
    fastreduce.pin_threads(False)        # as use_deterministic_algorithms(False) left it
    fixed = _Fixed(1)
    monkeypatch.setattr(fastreduce, "_sampler", fixed)
    before = fastreduce.use_adaptive_threads(True)
    yield fixed
    fastreduce.use_adaptive_threads(before)


def test_threads_now_is_bounded_by_the_configured_count(sampler):
    configured = tensorlib.get_num_threads()
    try:
        tensorlib.set_num_threads(2)
        sampler.free = 1
        fastreduce.use_adaptive_threads(True)
        assert fastreduce.threads_now() == 1 and tensorlib.get_num_threads() == 2
        sampler.free = 8
        fastreduce.use_adaptive_threads(True)
        assert fastreduce.threads_now() == 2
        tensorlib.use_deterministic_algorithms(True)
        sampler.free = 1
        fastreduce.use_adaptive_threads(True)
        assert fastreduce.threads_now() == 2           # pinned to the configured count
    finally:
        tensorlib.use_deterministic_algorithms(False)
        tensorlib.set_num_threads(configured)


def test_reductions_round_the_same_on_any_thread_count(sampler):
    configured = tensorlib.get_num_threads()
    x = tensorlib.tensor(np.random.default_rng(0).standard_normal(1 << 20).astype(np.float32))
    rows = tensorlib.tensor(np.random.default_rng(1).standard_normal((3, 1 << 18))
                            .astype(np.float32))
    try:
        tensorlib.set_num_threads(4)
        results = []
        for free in (4, 2, 1):
            sampler.free = free
            fastreduce.use_adaptive_threads(True)
            results.append((x.sum().item(), rows.sum(1).tolist()))
        assert results[0] == results[1] == results[2]
    finally:
        tensorlib.set_num_threads(configured)


@pytest.mark.skipif(len(cpu_load._cpus()) < 2, reason="needs 2 or more cores")
def test_busy_processes_on_every_core_leave_one_thread(monkeypatch):
    monkeypatch.setattr(fastreduce, "_sampler", cpu_load.LoadSampler())
    before = fastreduce.use_adaptive_threads(True)
    configured = tensorlib.get_num_threads()
    cores = len(cpu_load._cpus())
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cores)]
    try:
        tensorlib.set_num_threads(cores)
        fastreduce.use_adaptive_threads(True)
        fastreduce.threads_now()                  # the first sample
        time.sleep(1.0)
        assert fastreduce.threads_now() == 1
    finally:
        for p in busy:
            p.kill()
            p.wait()
        fastreduce.use_adaptive_threads(before)
        tensorlib.set_num_threads(configured)


class _Counters:
    """(monotonic, busy, ours) advanced a spell at a time: `run(seconds, others, ours)`."""

    def __init__(self, monkeypatch):
        self.t, self.busy, self.ours = 100.0, 0.0, 0.0
        monkeypatch.setattr(cpu_load.time, "monotonic", lambda: self.t)
        monkeypatch.setattr(cpu_load.time, "process_time", lambda: self.ours)
        monkeypatch.setattr(cpu_load, "_busy_seconds", lambda cpus: self.busy)

    def run(self, seconds, others, ours):
        self.t += seconds
        self.busy += seconds * (others + ours)
        self.ours += seconds * ours


def test_an_interval_started_later_leaves_out_the_load_before_it(monkeypatch):
    clock = _Counters(monkeypatch)
    sampler = cpu_load.LoadSampler()
    sampler.cpus, sampler.enabled = [0, 1], True
    sampler.free_cores()
    clock.run(0.1, others=0.0, ours=2.0)
    assert sampler.free_cores() == 2                  # only us
    clock.run(0.3, others=2.0, ours=0.0)              # we wait while another process runs
    sampler.start_interval()                          # our turn: the other is idle now
    assert sampler.free_cores() == 2                  # the last estimate stands
    clock.run(0.1, others=0.0, ours=2.0)
    assert sampler.free_cores() == 2
    clock.run(0.3, others=2.0, ours=0.0)              # without a new start the wait is load
    assert sampler.free_cores() == 1
