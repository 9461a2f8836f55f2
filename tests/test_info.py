"""`tensorlib info`: what it reports about versions, backends and the kernel cache."""
import numpy as np

import tensorlib
from tensorlib.__main__ import main
from tensorlib._info import collect
from tensorlib.codegen.cache import DiskCache


def test_info_names_versions_backends_and_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TENSORLIB_KERNEL_CACHE_DIR", str(tmp_path))
    DiskCache().put("ab" + "0" * 62, b"x" * 100)
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"tensorlib {tensorlib.__version__}")
    assert f"numpy     {np.__version__}" in out
    assert "GEMM" in out and "conv2d" in out
    for record in tensorlib.backends.list():
        assert f"  {record.name:<10} {record.status}" in out
        if record.status != "available":
            assert f"reason: {record.reason}" in out
    assert "cpu:0  " in out
    header = len(b"TLKC1\n") + 65
    assert f"kernel cache  {tmp_path}: 1 entries, {100 + header} B" in out


def test_collect_lists_devices_of_available_backends():
    info = collect()
    by_name = {b["name"]: b for b in info["backends"]}
    assert by_name["cpu"]["status"] == "available" and len(by_name["cpu"]["devices"]) == 1
    for b in info["backends"]:
        if b["status"] == "available":
            assert len(b["devices"]) == tensorlib.backends.get(b["name"]).device_count()
        else:
            assert b["devices"] == [] and b["reason"]


def test_ops_lists_coverage(capsys):
    assert main(["info", "--ops"]) == 0
    assert "primitive op coverage:" in capsys.readouterr().out
