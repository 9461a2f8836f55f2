"""Smoke test of `tensorlib-bench`: tiny sizes, JSON structure only (timings are never asserted)."""
import json

import pytest

from tensorlib._bench import cli
from tensorlib._bench.ops import workloads


def _torch_available():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def test_quick_json_structure(tmp_path, capsys):
    path = tmp_path / "bench.json"
    rc = cli.main(["--quick", "--json", str(path)])
    out = capsys.readouterr()
    assert rc == 0, out.err   # nonzero means some op raised or gave a wrong result
    report = json.loads(path.read_text())
    libs = ["tensorlib", "torch", "numpy"] if _torch_available() else ["tensorlib", "numpy"]
    assert report["meta"]["libraries"] == libs
    names = [w.name for w in workloads(quick=True)]
    assert [r["workload"] for r in report["ratios"]] == names
    assert len(report["results"]) == len(names) * len(libs)
    for row in report["results"]:
        assert {"workload", "library", "seconds", "throughput", "unit"} <= set(row)
        assert row["library"] in libs
        assert row["seconds"] > 0
        if row["unit"] is not None:
            assert row["unit"] in ("GB/s", "GFLOP/s") and row["throughput"] > 0
    for ratio in report["ratios"]:
        assert ratio["vs_numpy"] > 0
        assert (ratio["vs_torch"] is None) == ("torch" not in libs)
    header = out.out.splitlines()[2]
    assert [c.strip() for c in header.split("|")] == [
        "workload", "tensorlib", "torch", "numpy", "vs torch", "vs numpy"]


def test_only_and_no_torch(tmp_path, capsys):
    path = tmp_path / "bench.json"
    assert cli.main(["--quick", "--no-torch", "--only", "matmul,small_add",
                     "--json", str(path)]) == 0
    report = json.loads(path.read_text())
    assert report["meta"]["libraries"] == ["tensorlib", "numpy"]
    assert [r["workload"] for r in report["ratios"]] == [
        "small_add", "matmul_16", "matmul_32", "matmul_64"]
    assert all(r["vs_torch"] is None for r in report["ratios"])
    assert "matmul_32" in capsys.readouterr().out


def test_unknown_workload_is_an_error():
    with pytest.raises(SystemExit):
        cli.main(["--quick", "--only", "nope"])
