"""How many of this process's cores other processes are using, for the kernels' thread count.

NOTE [ oversubscription ]
Every kernel of the backend runs as an OpenMP region over `set_num_threads` threads and ends
at a barrier. When another process keeps one of the cores busy, one of our threads waits for
the scheduler at every region (a time slice, milliseconds), while the others spin or sleep at
the barrier: on 2 cores beside one busy process an MLP training step took 35-57 ms on 2
threads against 6 ms on one (PyTorch's own took 176 ms there). So the kernels run on the
cores others leave free: every SAMPLE_SECONDS the CPU time all processes spent on our cores
(/proc/stat, over the CPUs in our affinity mask) less our own (process CPU time, our spinning
threads included) says how many cores others used; `free_cores()` rounds what is left to the
nearest whole core (at least one). `set_num_threads` stays the upper bound and what
`get_num_threads` reports. TENSORLIB_ADAPTIVE_THREADS=0 turns this off (then every region
uses the configured count, as PyTorch does)."""
import os
import time

ENV = "TENSORLIB_ADAPTIVE_THREADS"
SAMPLE_SECONDS = 0.1        # /proc/stat counts in 10 ms ticks: 10% of a core per sample
_TICK = 1.0 / (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)


def _cpus():
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def _busy_seconds(cpus):
    """CPU seconds spent not idle on `cpus` since boot (user, nice, system, irq, softirq,
    steal: a vCPU whose time the host gave away is not ours either)."""
    wanted = {f"cpu{i}" for i in cpus}
    total = 0
    with open("/proc/stat") as f:
        for line in f:
            if not line.startswith("cpu"):
                break
            fields = line.split()
            if fields[0] in wanted:
                user, nice, system, _idle, _iowait, irq, softirq, steal = \
                    (int(v) for v in fields[1:9])
                total += user + nice + system + irq + softirq + steal
    return total * _TICK


class LoadSampler:
    """free_cores(): the cores of our affinity mask others left free over the last sample."""

    def __init__(self):
        self.cpus = _cpus()
        self.enabled = os.environ.get(ENV, "1") != "0" and os.path.exists("/proc/stat")
        self._last = None
        self._free = None           # every core until a first interval is measured

    def _now(self):
        """(monotonic, busy seconds on our cores, our CPU seconds), or None (then off)."""
        try:
            return (time.monotonic(), _busy_seconds(self.cpus), time.process_time())
        except (OSError, ValueError):       # /proc/stat unreadable or unexpected: stop trying
            self.enabled = False
            return None

    def start_interval(self):
        """The next interval starts now: what ran on our cores until now is left out, and
        the last estimate stands until that interval is measured."""
        if self.enabled:
            self._last = self._now()

    def free_cores(self):
        if not self.enabled:
            return len(self.cpus)
        now = self._now()
        if now is None:
            return len(self.cpus)
        if self._last is not None:
            wall, busy, ours = (a - b for a, b in zip(now, self._last))
            if wall > 0:
                others = max(0.0, busy - ours) / wall
                self._free = max(1, min(len(self.cpus), int(len(self.cpus) - others + 0.5)))
        self._last = now
        return len(self.cpus) if self._free is None else self._free
