"""Timing helpers: adaptive iteration counts so tiny ops and slow ops are both measurable.

One repeat runs the callable `number` times back to back; `number` is chosen so a repeat
lasts about `target` seconds (small ops need thousands of calls to rise above timer and
loop noise). We keep the min (the least-disturbed run on a noisy machine) and the median."""
import statistics
import time

__all__ = ["Timing", "measure"]


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


def measure(fn, *, sync=None, target=0.1, repeats=5, budget=3.0, warmup=True):
    """Warm up (unless the caller just ran `fn`), calibrate the calls per repeat, then time
    `repeats` repeats.

    The first call (lazy init, page faults) is never used for calibration. A repeat much
    shorter than `target` means the calibration saw a slow spell (a busy neighbour, thread
    pool start-up), so it is discarded and the batch grown. `budget` caps the seconds spent:
    a call slower than the target gets one call per repeat and fewer repeats (at least 2)."""
    if sync is not None:
        sync()
    if warmup:
        _run(fn, 1, sync)              # warm-up: caches, allocator, lazy kernel loading
    number = 1
    elapsed = _run(fn, number, sync)
    while elapsed < target / 5:        # grow until a batch is well above timer noise
        number *= 10 if elapsed < target / 50 else 2
        elapsed = _run(fn, number, sync)
    per_call = elapsed / number
    number = max(1, round(target / per_call))
    repeats = max(2, min(repeats, int(budget / (per_call * number))))
    times, regrows = [], 0
    while len(times) < repeats:
        elapsed = _run(fn, number, sync)
        if elapsed < target / 4 and regrows < 3:
            number = max(number + 1, round(number * target / max(elapsed, 1e-9)))
            times, regrows = [], regrows + 1
            continue
        times.append(elapsed / number)
    return Timing(min(times), statistics.median(times), number, len(times))
