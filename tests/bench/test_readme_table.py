"""benchmarks/readme_table.py on made-up bench JSON: medians over runs, the ratio range,
only workloads every run timed on both libraries, and the README splice between markers."""
import importlib.util
import os
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "readme_table.py"


@pytest.fixture(scope="module")
def table():
    spec = importlib.util.spec_from_file_location("readme_table", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(ours, theirs, ratio, extra=()):
    results = [{"workload": "mm", "library": "tensorlib", "device": "cpu", "seconds": ours},
               {"workload": "mm", "library": "torch", "device": "cpu", "seconds": theirs},
               {"workload": "mm", "library": "numpy", "device": "cpu", "seconds": 1.0}]
    ratios = [{"workload": "mm", "device": "cpu", "vs_torch": ratio}]
    for name in extra:
        results.append({"workload": name, "library": "tensorlib", "device": "cpu",
                        "seconds": 2e-6})
        ratios.append({"workload": name, "device": "cpu", "vs_torch": None})
    return {"results": results, "ratios": ratios}


def test_medians_and_ratio_range(table):
    runs = [_run(1e-3, 2e-3, 2.0), _run(3e-3, 2e-3, 0.9, extra=["only_ours"]),
            _run(2e-3, 2.5e-3, 1.1)]
    assert table.summarize(runs, "cpu") == [("mm", 2e-3, 2e-3, 0.9, 2.0)]
    text = table.render(table.summarize(runs, "cpu"), 3, "cpu", "python x.py", "CPU X",
                        "2026-12-05", ("0.10", "0.20"))
    assert "3 runs of `tensorlib-bench --device cpu` on CPU X, 2026-12-05" in text
    assert "load average 0.10 before and 0.20 after" in text
    assert "mm       |       2 ms |       2 ms | 0.90-2.00x" in text


def test_readme_splice_keeps_the_rest(table, tmp_path, monkeypatch):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{table.START}\nold\n{table.END}\nafter\n")
    monkeypatch.setattr(table, "README", str(readme))
    table.write_readme("new table")
    assert readme.read_text() == f"intro\n{table.START}\nnew table\n{table.END}\nafter\n"
    readme.write_text("no markers\n")
    with pytest.raises(SystemExit, match="no <!-- bench-table:start -->"):
        table.write_readme("x")


def test_keep_leaves_each_runs_report(table, tmp_path, monkeypatch):
    """--keep DIR: the bench writes its JSON at DIR/run-N.json, which stays after the run."""
    import json
    import subprocess
    import sys
    import types
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))  # main() asks for it

    def fake_bench(cmd, check, stdout, cwd):
        assert os.path.isdir(cwd) and os.path.abspath(cwd) != os.getcwd()  # not the checkout
        out = cmd[cmd.index("--json") + 1]
        assert os.path.isabs(out)
        with open(out, "w") as f:
            json.dump(_run(1e-3, 2e-3, 2.0), f)
    monkeypatch.setattr(subprocess, "run", fake_bench)
    monkeypatch.setattr(table, "write_readme", lambda block: None)
    monkeypatch.chdir(tmp_path)
    table.main(["--runs", "2", "--keep", "reports"])      # relative to the caller's folder
    kept = sorted(p.name for p in (tmp_path / "reports").iterdir())
    assert kept == ["run-1.json", "run-2.json"]
    assert json.loads((tmp_path / "reports" / "run-2.json").read_text())["ratios"][0][
        "vs_torch"] == 2.0
