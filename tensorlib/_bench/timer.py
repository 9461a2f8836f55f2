"""Timing helpers: adaptive iteration counts so tiny ops and slow ops are both measurable.

One repeat runs the callable `number` times back to back; `number` is chosen so a repeat
lasts about `target` seconds (small ops need thousands of calls to rise above timer and
loop noise). We keep the min (the least-disturbed run on a noisy machine) and the median.
`Sampler` takes the repeats one at a time, so a driver can give each library a repeat in
turn (`turns.py`); `measure` takes them all at once."""
import statistics
import time

__all__ = ["Sampler", "Timing", "measure"]


class Timing:
    """Per-call seconds of one measurement: best (min) and median over repeats."""

    __slots__ = ("best", "median", "number", "repeats")

    def __init__(self, best, median, number, repeats):
        self.best, self.median, self.number, self.repeats = best, median, number, repeats


def _run(fn, number, sync):
    """Seconds for `number` calls, synchronizing the device before stopping the clock."""
    start = time.perf_counter()
    for _ in range(number):
        fn()
    if sync is not None:
        sync()
    return time.perf_counter() - start


class Sampler:
    """The repeats of one callable: `calibrate()` once, then `repeat()` until `done`.

    The first call (lazy init, page faults) is never used for calibration. A repeat much
    shorter than `target` means the calibration saw a slow spell (a busy neighbour, thread
    pool start-up), so the repeats so far are discarded and the batch grown. `budget` caps
    the seconds spent: a call slower than the target gets one call per repeat and fewer
    repeats (at least 2)."""

    def __init__(self, fn, *, sync=None, target=0.1, repeats=5, budget=3.0):
        self.fn, self.sync, self.target = fn, sync, target
        self.wanted, self.budget = repeats, budget
        self.number, self.times, self.regrows = 1, [], 0

    def calibrate(self):
        if self.sync is not None:
            self.sync()
        number = 1
        elapsed = _run(self.fn, number, self.sync)
        while elapsed < self.target / 5:      # grow until a batch is well above timer noise
            number *= 10 if elapsed < self.target / 50 else 2
            elapsed = _run(self.fn, number, self.sync)
        per_call = elapsed / number
        self.number = max(1, round(self.target / per_call))
        self.wanted = max(2, min(self.wanted, int(self.budget / (per_call * self.number))))

    @property
    def done(self):
        return len(self.times) >= self.wanted

    def repeat(self):
        elapsed = _run(self.fn, self.number, self.sync)
        if elapsed < self.target / 4 and self.regrows < 3:
            self.number = max(self.number + 1,
                              round(self.number * self.target / max(elapsed, 1e-9)))
            self.times, self.regrows = [], self.regrows + 1
            return
        self.times.append(elapsed / self.number)

    def timing(self):
        return Timing(min(self.times), statistics.median(self.times), self.number,
                      len(self.times))


def measure(fn, *, sync=None, target=0.1, repeats=5, budget=3.0, warmup=True):
    """Warm up (unless the caller just ran `fn`), calibrate the calls per repeat, then time
    the repeats back to back (see `Sampler`)."""
    if warmup:
        _run(fn, 1, sync)              # warm-up: caches, allocator, lazy kernel loading
    sampler = Sampler(fn, sync=sync, target=target, repeats=repeats, budget=budget)
    sampler.calibrate()
    while not sampler.done:
        sampler.repeat()
    return sampler.timing()
