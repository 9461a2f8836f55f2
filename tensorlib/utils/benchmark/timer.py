"""`Timer`: PyTorch's benchmark timer. A statement is timed in blocks of `number_per_run` runs
(the block size chosen so the timer's own overhead is negligible), after a warm-up, with the
thread count fixed for the measurement; `blocked_autorange` and `adaptive_autorange` collect
replicates until enough time has passed (or the spread is small enough)."""
import enum
import time
import timeit

from tensorlib.utils.benchmark.measurement import Measurement, TaskSpec

timer = time.perf_counter
_MAX_BLOCK = 2 ** 31


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1,
                 language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language not in (Language.PYTHON, "py", "python"):
            raise NotImplementedError("Timer: C++ statements (language=Language.CPP) are not "
                                      "supported by tensorlib")
        if global_setup:
            raise ValueError("global_setup is C++ only.")
        import tensorlib
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", tensorlib)
        self._globals.setdefault("tensorlib", tensorlib)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, label=label, sub_label=sub_label,
                                   description=description, env=env, num_threads=num_threads)

    def _timeit(self, number):
        """Seconds for `number` runs, with the thread count set for the measurement."""
        import tensorlib
        before = tensorlib.get_num_threads()
        tensorlib.set_num_threads(self._task_spec.num_threads)
        try:
            return max(self._timer.timeit(number), 1e-9)
        finally:
            tensorlib.set_num_threads(before)

    def timeit(self, number=1000000):
        """One block of `number` runs, after a warm-up of about 1% of it."""
        self._timeit(max(number // 100, 2))
        return Measurement(number, [self._timeit(number)], self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def collect_callgrind(self, *args, **kwargs):
        raise NotImplementedError("Timer.collect_callgrind: instruction counts (Callgrind) are "
                                  "not provided by tensorlib")

    def _block_size(self, min_run_time):
        """Runs per block: grown tenfold until a block is long enough that the timer's overhead
        (an empty block) is under 0.01% of it, or a block alone exceeds min_run_time."""
        overhead = sorted(self._timeit(0) for _ in range(5))[2]
        number = 1
        while True:
            taken = self._timeit(number)
            if (overhead / taken <= 1e-4 and taken >= min_run_time / 1000) \
                    or taken > min_run_time or number * 10 > _MAX_BLOCK:
                return number
            number *= 10

    def _replicates(self, number, min_run_time, stop, callback):
        times, total = [], 0.0
        while total < min_run_time or not stop(times):
            block = self._timeit(number)
            total += block
            times.append(block)
            if callback is not None:
                callback(number, block)
            if stop(times) is None:     # the time limit is reached
                break
        return Measurement(number, times, self._task_spec)

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs, repeated until `min_run_time` seconds have been measured."""
        number = self._block_size(min_run_time=0.05)
        return self._replicates(number, min_run_time, lambda times: True, callback)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """Blocks of runs until at least 4 replicates' IQR is under `threshold` of their median
        (and `min_run_time` has passed), or `max_run_time` seconds have been measured."""
        number = self._block_size(min_run_time=0.05)

        def stop(times):
            if sum(times) >= max_run_time:
                return None
            return len(times) >= 4 and Measurement(number, times, self._task_spec) \
                .meets_confidence(threshold)
        return self._replicates(number, min_run_time, stop, callback)
