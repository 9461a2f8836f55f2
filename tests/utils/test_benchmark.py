"""torch.utils.benchmark: the statistics and printed layout of Measurement (against PyTorch's on
the same raw times), Timer's run counts, setup and globals, and Compare's table."""
import numpy as np
import pytest

import tensorlib
from tensorlib.utils import benchmark

RAW = [0.0031, 0.0029, 0.0030, 0.0042, 0.0028, 0.0030, 0.0033]


def _spec(**kw):
    return benchmark.TaskSpec(stmt=kw.pop("stmt", "x + 1"), setup=kw.pop("setup", "pass"), **kw)


def test_measurement_statistics_match_numpy():
    m = benchmark.Measurement(100, RAW, _spec())
    per_run = np.array(RAW) / 100
    assert m.times == pytest.approx(per_run.tolist())
    assert m.median == pytest.approx(np.median(per_run))
    assert m.mean == pytest.approx(per_run.mean())
    assert m.iqr == pytest.approx(np.percentile(per_run, 75) - np.percentile(per_run, 25))
    assert m.meets_confidence(0.5) and not m.meets_confidence(0.01)


@pytest.mark.parametrize("raw,kw", [
    (RAW, dict(label="add", sub_label="small", description="float32")),
    ([0.0025], dict(label="add")),
    ([0.0025], dict(stmt="y = x * 2", setup="x = torch.ones(3)")),
    ([1e-7, 1.2e-7, 0.9e-7, 1.1e-7], dict(num_threads=2, description="d")),
    ([1.0, 2.0, 1.0, 3.0, 1.0], dict(label="noisy")),
    ([1.0, 2.0, 1.0], dict(label="three")),
    ([1.0, 1.02, 1.0, 1.5, 1.1, 1.1], dict(label="fluctuating")),
])
def test_printed_like_pytorch(raw, kw):
    torch = pytest.importorskip("torch")
    from torch.utils.benchmark.utils.common import Measurement, TaskSpec
    ours = repr(benchmark.Measurement(10, raw, _spec(**dict(kw))))
    kw = dict(kw)
    theirs = repr(Measurement(10, raw, TaskSpec(stmt=kw.pop("stmt", "x + 1"),
                                                setup=kw.pop("setup", "pass"), **kw)))
    assert ours.splitlines()[0].startswith("<tensorlib.utils.benchmark.Measurement object")
    assert ours.splitlines()[1:] == theirs.splitlines()[1:]


def test_timeit_runs_the_statement_the_number_asked_plus_a_warm_up():
    calls = []
    t = benchmark.Timer("f()", globals={"f": lambda: calls.append(1)})
    m = t.timeit(300)
    assert m.number_per_run == 300 and len(m.raw_times) == 1
    assert len(calls) == 300 + 3          # the warm-up runs 1% of it (at least 2)


def test_setup_and_the_torch_name_are_available_to_the_statement():
    seen = {}
    t = benchmark.Timer("seen['y'] = torch.ones(2) + x", setup="x = 3",
                        globals={"seen": seen})
    t.timeit(2)
    assert seen["y"].tolist() == [4.0, 4.0]


def test_blocked_autorange_measures_at_least_the_minimum_time():
    m = benchmark.Timer("sum(range(50))").blocked_autorange(min_run_time=0.05)
    assert sum(m.raw_times) >= 0.05 and m.number_per_run >= 1 and len(m.times) >= 1


def test_adaptive_autorange_stops_at_its_time_limit():
    m = benchmark.Timer("pass").adaptive_autorange(threshold=0.0, max_run_time=0.05)
    assert sum(m.raw_times) >= 0.05 and len(m.times) >= 1


def test_thread_count_is_set_for_the_measurement_and_put_back():
    before = tensorlib.get_num_threads()
    seen = []
    benchmark.Timer("seen.append(torch.get_num_threads())", globals={"seen": seen},
                    num_threads=1).timeit(2)
    assert set(seen) == {1} and tensorlib.get_num_threads() == before


def test_unsupported_requests_raise():
    t = benchmark.Timer("pass")
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        t.repeat()
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        t.autorange()
    with pytest.raises(NotImplementedError, match="Callgrind"):
        t.collect_callgrind()
    with pytest.raises(ValueError, match="str"):
        benchmark.Timer(lambda: None)
    with pytest.raises(ValueError, match="Measurement"):
        benchmark.Compare([1.0])


def test_compare_table_groups_by_label_threads_rows_and_columns():
    ms = [benchmark.Measurement(1, [2e-6], _spec(label="add", sub_label="small", description="a")),
          benchmark.Measurement(1, [3e-6], _spec(label="add", sub_label="small", description="b")),
          benchmark.Measurement(1, [5e-6], _spec(label="add", sub_label="large", description="b",
                                                 num_threads=2)),
          benchmark.Measurement(1, [7e-3], _spec(label="mul", sub_label="small", description="a"))]
    text = str(benchmark.Compare(ms))
    assert "-- add --" in text and "-- mul --" in text
    assert "1 threads:" in text and "2 threads:" in text
    assert "Times are in microseconds (us)." in text and "Times are in milliseconds (ms)." in text
    small = [line for line in text.splitlines() if "small" in line][0]
    assert "2.0" in small and "3.0" in small
