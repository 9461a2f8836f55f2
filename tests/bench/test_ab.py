"""`python -m tensorlib._bench.ab`: the alternating driver's result structure, its table and
its errors (timings are never asserted)."""
import importlib.util
import os

import pytest

from tensorlib._bench import ab

HAVE_TORCH = importlib.util.find_spec("torch") is not None


def test_every_side_gets_a_best_time_per_workload(capsys):
    best = ab.alternate(["small_add"], rounds=2, reps=1, threads=1,
                        variants=["TENSORLIB_BLAS=openblas"], torch=HAVE_TORCH)
    sides = (["torch"] if HAVE_TORCH else []) + ["tensorlib", "tensorlib[TENSORLIB_BLAS=openblas]"]
    assert list(best) == ["small_add"] and list(best["small_add"]) == sides
    assert all(0 < s < 1 for s in best["small_add"].values())
    assert ab.main(["--only", "small_add", "--rounds", "1", "--reps", "1", "--threads", "1",
                    "--no-torch"]) == 0
    out = capsys.readouterr().out
    assert "thread CPU time" in out and "small_add" in out


def test_a_failing_workload_and_an_unknown_name_are_errors():
    with pytest.raises(RuntimeError, match="no_such_workload on tensorlib: KeyError"):
        ab.alternate(["no_such_workload"], rounds=1, reps=1, threads=1, torch=False)
    with pytest.raises(SystemExit):
        ab.main(["--only", "no_such_workload"])


def test_a_tiny_step_is_sampled_over_many_calls_and_a_slow_one_once():
    def scripted(*readings):          # a clock that returns the given readings in turn
        it = iter(readings)
        return lambda: next(it)
    calls = []
    step = lambda: calls.append(1)  # noqa: E731
    assert ab._calls_per_sample(step, scripted(0.0, 1e-6)) == round(ab.MIN_SAMPLE_SECONDS / 1e-6)
    assert ab._calls_per_sample(step, scripted(0.0, 0.5)) == 1
    assert ab._calls_per_sample(step, scripted(0.0, 0.0)) == round(ab.MIN_SAMPLE_SECONDS / 1e-7)
    assert len(calls) == 6            # a warm-up call and a timed call each time


def test_tensorlib_sides_run_without_the_load_adaptation():
    """The other sides' turns would look like outside load to it; a variant may turn it on."""
    sides = {label: env for label, _, env in ab._sides(["TENSORLIB_ADAPTIVE_THREADS=1"], True)}
    assert sides["torch"] == {}
    assert sides["tensorlib"] == {"TENSORLIB_ADAPTIVE_THREADS": "0"}
    assert sides["tensorlib[TENSORLIB_ADAPTIVE_THREADS=1]"] == {"TENSORLIB_ADAPTIVE_THREADS": "1"}


def test_a_compiled_row_runs_when_named(capsys):
    assert ab.main(["--only", "chain_compiled", "--rounds", "1", "--reps", "1", "--threads",
                    "1", "--no-torch"]) == 0
    assert "chain_compiled" in capsys.readouterr().out


def test_workers_import_the_drivers_tensorlib_not_the_working_folders(tmp_path, monkeypatch):
    """`python -m` puts the working folder first on sys.path: a worker started in a checkout
    imported it even where a variant's PYTHONPATH named an installed copy."""
    decoy = tmp_path / "tensorlib"
    decoy.mkdir()
    (decoy / "__init__.py").write_text("raise ImportError('the working folder was imported')\n")
    monkeypatch.chdir(tmp_path)
    best = ab.alternate(["small_add"], rounds=1, reps=1, threads=1, torch=False)
    assert list(best["small_add"]) == ["tensorlib"]
    import tensorlib
    assert ab._driver_path().split(os.pathsep)[0] == \
        os.path.dirname(os.path.dirname(tensorlib.__file__))
