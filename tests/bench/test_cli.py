"""`tensorlib-bench` in quick mode: the JSON's structure, the table, the plot, the worker on
every device (timings are never asserted)."""
import importlib.util
import json

import numpy as np
import pytest

from tensorlib._bench import cli, worker
from tensorlib._bench.compiled import workloads as compiled_workloads
from tensorlib._bench.models import workloads as model_workloads
from tensorlib._bench.ops import workloads as op_workloads
# after ops: suites are listed in the order their modules are first imported
from tensorlib._bench.attention import workloads as attention_workloads  # noqa: I001
from tensorlib._bench.vision import workloads as vision_workloads  # noqa: I001
from tensorlib._bench.registry import workloads

HAVE_TORCH = importlib.util.find_spec("torch") is not None
HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


def test_quick_json_table_and_plot(tmp_path, capsys):
    path, png = tmp_path / "bench.json", tmp_path / "bench.png"
    argv = ["--quick", "--device", "cpu", "--only", "add,exp_1K,mlp_train", "--json", str(path)]
    if HAVE_MATPLOTLIB:
        argv += ["--plot", str(png)]
    rc = cli.main(argv)
    out = capsys.readouterr()
    assert rc == 0, out.err   # nonzero means some workload raised or gave a wrong result
    report = json.loads(path.read_text())
    libs = ["tensorlib", "torch", "numpy"] if HAVE_TORCH else ["tensorlib", "numpy"]
    assert report["meta"]["libraries"] == libs and report["meta"]["devices"] == ["cpu"]
    ops = ["add_1K", "add_16K", "exp_1K"]
    assert [r["workload"] for r in report["ratios"]] == ops + ["mlp_train"]
    # numpy runs the op workloads only
    assert len(report["results"]) == (len(ops) + 1) * (len(libs) - 1) + len(ops)
    for row in report["results"]:
        assert {"workload", "library", "device", "seconds", "best", "median", "throughput",
                "unit"} <= set(row)
        assert row["library"] in libs and row["device"] == "cpu"
        assert row["seconds"] == row["median"] and 0 < row["best"] <= row["median"]
        if row["unit"] is not None:
            assert row["unit"] in ("GB/s", "GFLOP/s") and row["throughput"] > 0
    for ratio in report["ratios"]:
        assert ratio["device"] == "cpu"
        assert (ratio["vs_numpy"] is None) == (ratio["kind"] != "op")
        assert (ratio["vs_torch"] is None) == (not HAVE_TORCH)
    lines = out.out.splitlines()
    title = ("== device cpu (torch on cpu, numpy on the host) ==" if HAVE_TORCH
             else "== device cpu (numpy on the host) ==")
    header = lines[lines.index(title) + 1]
    assert [c.strip() for c in header.split("|")] == [
        "workload", "tensorlib", "torch", "numpy", "vs torch", "vs numpy"]
    if HAVE_MATPLOTLIB:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_only_and_no_torch(tmp_path, capsys):
    path = tmp_path / "bench.json"
    assert cli.main(["--quick", "--device", "cpu", "--no-torch", "--only", "matmul,small_add",
                     "--json", str(path)]) == 0
    report = json.loads(path.read_text())
    assert report["meta"]["libraries"] == ["tensorlib", "numpy"]
    in_use = report["meta"]["libraries_in_use"]
    assert in_use["torch"] is None and in_use["tensorlib"]["gemm"]
    assert [r["workload"] for r in report["ratios"]] == [
        "small_add", "matmul_16", "matmul_32", "matmul_64"]
    assert all(r["vs_torch"] is None for r in report["ratios"])
    assert "matmul_32" in capsys.readouterr().out


def test_libraries_mode_names_each_sides_gemm_and_convolution(capsys):
    assert cli.main(["--libraries"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("tensorlib ") and "gemm:" in out and "conv2d:" in out
    if HAVE_TORCH:
        assert "\ntorch 2." in out and out.count("\n  gemm:") == 2
    else:
        assert "torch: not run" in out


def test_unknown_workload_is_an_error():
    with pytest.raises(SystemExit):
        cli.main(["--quick", "--only", "nope"])


def test_unavailable_device_exits_2(capsys):
    assert cli.main(["--quick", "--device", "nosuchdevice", "--only", "small_add"]) == 2
    assert "nosuchdevice" in capsys.readouterr().err


def test_registry_has_ops_and_models_with_unique_names():
    names = [w.name for w in workloads(quick=True)]
    assert len(names) == len(set(names))
    assert names == [w.name for w in op_workloads(True)] + [w.name for w in
                                                           model_workloads(True)] + \
        [w.name for w in compiled_workloads(True)] + [w.name for w in attention_workloads(True)] \
        + [w.name for w in vision_workloads(True)]
    assert {"chain_compiled", "mlp_train_compiled"} <= set(names)
    assert {"mlp_fwd", "mlp_train", "cnn_fwd", "cnn_train", "transformer_fwd",
            "transformer_train"} <= set(names)


def test_cpu_only_workloads_are_left_out_on_other_devices():
    chosen = [w for w in workloads(quick=True) if w.name in ("mlp_fwd", "mlp_fwd_qint8")]
    jobs = cli._jobs(chosen, ["cpu", "opencl"], with_torch=False)
    assert jobs[("tensorlib", "cpu")] == ["mlp_fwd", "mlp_fwd_qint8"]
    assert jobs[("tensorlib", "opencl")] == ["mlp_fwd"]


def test_quantized_mlp_runs_on_the_cpu():
    rows = []
    worker.run("tensorlib", "cpu", {"mlp_fwd_qint8"}, True, rows.append)
    assert "error" not in rows[0], rows[0]["error"]


def test_worker_times_ops_and_models_on_each_device(device):
    rows = []
    worker.run("tensorlib", device, {"add_1K", "mlp_fwd", "autograd_chain"}, True,
               rows.append)
    assert [r["workload"] for r in rows] == ["add_1K", "mlp_fwd", "autograd_chain"]
    for r in rows:
        assert "error" not in r, r["error"]
        assert r["device"] == device and r["seconds"] > 0 and r["repeats"] >= 2


def test_worker_reports_a_wrong_result():
    session = worker.Session("tensorlib", "cpu", True)
    broken = session.by_name["add_1K"]
    broken._op = lambda lib, a, b: (lambda: a + b) if lib == "numpy" else (lambda: a - b)
    assert session.prepare("add_1K") is None
    while not session.repeat("add_1K"):
        pass
    row = session.finish("add_1K")
    assert row["error"].startswith("wrong result vs numpy") and row["seconds"] > 0


def test_compiled_workloads_run_only_when_asked(tmp_path):
    path = tmp_path / "c.json"
    assert cli.main(["--quick", "--device", "cpu", "--no-torch", "--only", "chain_compiled",
                     "--json", str(path)]) == 0
    rows = json.loads(path.read_text())["results"]
    assert [r["workload"] for r in rows if r["library"] == "tensorlib"] == ["chain_compiled"]
    assert not any(w.mode == "compiled" for w in cli._select(cli._parse(["--quick"])))


@pytest.mark.parametrize("shape,dtype", [((3,), np.float32), ((5, 7), np.float64),
                                         ((2, 3, 1), np.int64)])
def test_inputs_start_on_a_line_whatever_the_heap_gave(shape, dtype):
    # every library's process must see the same layout: only the values are numpy's
    from tensorlib._bench.ops import on_lines
    source = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    for offset in range(0, 64, 8):           # a source at each offset within its line
        raw = np.empty(source.nbytes + 64, np.uint8)
        skip = (-raw.ctypes.data % 64 + offset) % 64
        shifted = raw[skip:skip + source.nbytes].view(dtype).reshape(shape)
        shifted[...] = source
        got = on_lines(shifted)
        assert got.ctypes.data % 64 == 0 and got.flags.c_contiguous
        assert got.dtype == dtype and got.shape == shape and np.array_equal(got, source)
    for w in op_workloads(quick=True):
        assert all(a.ctypes.data % 64 == 0 for a in w.inputs()), w.name
