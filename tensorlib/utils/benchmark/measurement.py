"""`Measurement`: the replicated times of one statement and their summary (median, IQR), printed
in PyTorch's layout; the unit helpers `Compare` shares."""
import dataclasses
import math
import statistics
import textwrap

_UNITS = ((1e-9, "ns"), (1e-6, "us"), (1e-3, "ms"), (1.0, "s"))
_ENGLISH = {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}
_NOISY_IQR = 0.1   # an IQR above this fraction of the median is worth a warning, as PyTorch's
_GROSS_IQR = 0.25  # ... and above this, a stronger one


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What was timed: the statement, its setup and the labels `Compare` groups by."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n" \
               + textwrap.indent(self.stmt, "  ")

    def summarize(self):
        lines = [self.title, self.description or ""]
        if self.setup and self.setup != "pass":
            lines.append("setup:" + (f" {self.setup}" if "\n" not in self.setup
                                     else "\n" + textwrap.indent(self.setup, "  ")))
        if self.env:
            lines.append(f"env: {self.env}")
        return "\n".join(line for line in lines if line)


def select_unit(t):
    """(unit name, seconds per unit) that prints `t` seconds with 1 to 3 integer digits."""
    for scale, unit in reversed(_UNITS):
        if t >= scale or scale == _UNITS[0][0]:
            return unit, scale
    return "ns", 1e-9


def unit_to_english(unit):
    return _ENGLISH[unit]


def trim_sigfig(x, n):
    """`x` rounded to `n` significant figures."""
    if x == 0 or not math.isfinite(x):
        return x
    magnitude = int(math.floor(math.log10(abs(x))))
    return round(x, n - 1 - magnitude)


def _quantile(values, q):
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclasses.dataclass
class Measurement:
    """`raw_times[i]` is the wall time of block i, which ran the statement `number_per_run`
    times; `times` are per run."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict = None

    def __post_init__(self):
        if not self.raw_times:
            raise ValueError("Measurement: no times were recorded")

    def __getattr__(self, name):   # stmt, label, description, ... read through to the spec
        spec = self.__dict__.get("task_spec")
        if spec is not None and name in {f.name for f in dataclasses.fields(TaskSpec)} | {"title"}:
            return getattr(spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        return _quantile(self.times, 0.5)

    @property
    def mean(self):
        return statistics.fmean(self.times)

    @property
    def iqr(self):
        return _quantile(self.times, 0.75) - _quantile(self.times, 0.25)

    @property
    def significant_figures(self):
        """How many digits of the median the replicates support (1 to 4)."""
        if len(self.times) < 2 or self.iqr == 0:
            return 4
        spread = self.iqr / math.sqrt(len(self.times)) / self.median
        return max(1, min(4, int(-math.floor(math.log10(max(spread, 1e-12))))))

    @property
    def has_warnings(self):
        return bool(self._warnings())

    def meets_confidence(self, threshold=_NOISY_IQR):
        return self.iqr / self.median < threshold

    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def _warnings(self):
        for threshold, meaning in ((_GROSS_IQR, "This suggests significant environmental "
                                                "influence."),
                                   (_NOISY_IQR, "This could indicate system fluctuation.")):
            if not self.meets_confidence(threshold):
                return [f"WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% "
                        f"of the median measurement.\n           {meaning}"]
        return []

    def __repr__(self):
        unit, scale = select_unit(self.median)
        lines = [f"<tensorlib.utils.benchmark.Measurement object at {hex(id(self))}>",
                 self.task_spec.summarize()]
        threads = f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        n = len(self.times)
        lines.append(f"  {'Median: ' if n > 1 else ''}{self.median / scale:.2f} {unit}")
        if n >= 4:
            q1, q3 = _quantile(self.times, 0.25), _quantile(self.times, 0.75)
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({q1 / scale:.2f} to "
                         f"{q3 / scale:.2f})")
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads}")
        lines += ["  " + w for w in self._warnings()]
        return "\n".join(lines)

    @staticmethod
    def merge(measurements):
        """One Measurement per distinct task, pooling the per-run times of replicates."""
        grouped = {}
        for m in measurements:
            grouped.setdefault(m.task_spec, []).append(m)
        return [Measurement(1, [t for m in group for t in m.times], spec)
                for spec, group in grouped.items()]
