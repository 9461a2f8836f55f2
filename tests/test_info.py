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


def test_ops_lists_primitives_and_composites(capsys):
    assert main(["info", "--ops"]) == 0
    out = capsys.readouterr().out
    assert "kernels per backend:" in out
    have, absent = tensorlib.backends.composite_coverage("cpu")
    total = len(have) + len(absent)
    assert f"composites {len(have)}/{total}" in out and "cpu        primitives" in out
    assert all(name in out for name in have)


def test_composite_coverage_splits_the_declared_set():
    from tensorlib.backends.interface import COMPOSITES
    have, absent = tensorlib.backends.composite_coverage("cpu")
    assert sorted(have + absent) == sorted(COMPOSITES) and not set(have) & set(absent)
    assert "conv2d" in have       # the CPU backend's own convolution


def _fake_cpu(monkeypatch, *, mkl, onednn_path, vendor="GenuineIntel"):
    from tensorlib import _info
    from tensorlib_cpu import blas_choice, onednn
    monkeypatch.setattr(_info.sys, "platform", "linux")
    monkeypatch.setattr(_info.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(blas_choice, "cpu_vendor", lambda: vendor)
    monkeypatch.setattr(blas_choice, "openblas_core", lambda: "Haswell")
    monkeypatch.setattr(blas_choice, "find_mkl", lambda: mkl)
    monkeypatch.setattr(onednn, "find", lambda: onednn_path)
    monkeypatch.delenv(blas_choice.ENV, raising=False)
    return _info


def test_info_says_what_would_make_the_cpu_faster(monkeypatch, capsys):
    _info = _fake_cpu(monkeypatch, mkl=None, onednn_path=None)
    hints = _info._speedups()
    assert len(hints) == 2
    assert 'install mkl (pip install "tensorlib[mkl]")' in hints[0]
    assert hints[1].startswith("conv2d forward and backward and, on Intel and AMD Zen 4, "
                               "float32 GEMMs")
    assert "install onednn-cpu-gomp (a default dependency" in hints[1]
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert all(f"  faster  {hint}" in out for hint in hints)


def test_info_has_no_hint_for_what_is_installed_or_unused(monkeypatch):
    _info = _fake_cpu(monkeypatch, mkl="/x/libmkl_rt.so.2", onednn_path="/x/libdnnl.so.3")
    assert _info._speedups() == []
    # Intel with oneDNN: its sgemm runs the GEMMs, so MKL is not suggested
    _info = _fake_cpu(monkeypatch, mkl=None, onednn_path="/x/libdnnl.so.3")
    assert _info._speedups() == []
    # AMD AVX2 (OpenBLAS's Haswell kernels): MKL would not be chosen, so it is not suggested
    _info = _fake_cpu(monkeypatch, mkl=None, onednn_path="/x/libdnnl.so.3",
                      vendor="AuthenticAMD")
    assert _info._speedups() == []
    monkeypatch.setattr(_info.platform, "machine", lambda: "aarch64")
    assert _info._speedups() == []


def test_info_suggests_mkl_on_zen4_only_without_onednn(monkeypatch):
    """On Zen 4 (OpenBLAS's AVX-512 kernels on split units) oneDNN's sgemm is the default;
    MKL is worth suggesting only where oneDNN is absent."""
    from tensorlib_cpu import blas_choice
    _info = _fake_cpu(monkeypatch, mkl=None, onednn_path="/x/libdnnl.so.3",
                      vendor="AuthenticAMD")
    monkeypatch.setattr(blas_choice, "split_width_avx512", lambda: True)
    assert _info._speedups() == []
    _info = _fake_cpu(monkeypatch, mkl=None, onednn_path=None, vendor="AuthenticAMD")
    hints = _info._speedups()
    assert len(hints) == 2 and "install mkl" in hints[0]
