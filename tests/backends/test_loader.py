"""Backend discovery: entry points are faked by patching importlib.metadata.entry_points (as
fsspec's tests do), so broken, outdated, disabled and partial plugins can be tried without
installing anything; one test uses a real dist-info on PYTHONPATH in a fresh interpreter."""
import importlib.metadata
import os
import subprocess
import sys
import types
import warnings

import numpy as np
import pytest

import tensorlib
from tensorlib._C.tensor_impl import host_array
from tensorlib.backends import _fallback
from tensorlib.backends._loader import GROUP, Loader
from tensorlib.backends.interface import API_VERSION, Backend

REAL_ENTRY_POINTS = importlib.metadata.entry_points


class HostBackend(Backend):
    """A minimal plugin over host memory with only the kernels it is given."""

    def __init__(self, name, kernels, api_version=API_VERSION):
        self.device_type, self.kernels, self.api_version = name, kernels, api_version

    def device_count(self):
        return 1

    def allocate(self, nbytes, index):
        return np.empty(nbytes, np.uint8)

    def copy_from_host(self, dst, array):
        host_array(dst)[...] = array

    def copy_to_host(self, src):
        return np.ascontiguousarray(host_array(src)).copy()

    def register(self, table):
        table.update(self.kernels)


def _set(out, value):
    host_array(out)[...] = value


PARTIAL_KERNELS = {"fill": _set, "copy": lambda out, src: _set(out, host_array(src)),
                   "add": lambda out, a, b: _set(out, host_array(a) + host_array(b))}

PLUGINS = types.ModuleType("tl_fake_plugins")         # one object: devices are cached by name
PLUGINS.partial = HostBackend("tl_partial", PARTIAL_KERNELS)
PLUGINS.future = HostBackend("tl_future", PARTIAL_KERNELS, api_version=API_VERSION + 1)
PLUGINS.third = HostBackend("tl_third", PARTIAL_KERNELS)
PLUGINS.misnamed = HostBackend("something_else", PARTIAL_KERNELS)


def _ep(name, value):
    return importlib.metadata.EntryPoint(name=name, value=value, group=GROUP)


FAKE = [_ep("tl_partial", "tl_fake_plugins:partial"), _ep("tl_future", "tl_fake_plugins:future"),
        _ep("tl_third", "tl_fake_plugins:third"), _ep("tl_misnamed", "tl_fake_plugins:misnamed"),
        _ep("tl_boom", "tl_fake_boom:backend")]


@pytest.fixture
def fake_plugins(monkeypatch, tmp_path):
    """The real entry points plus FAKE; the global loader re-reads them, and is restored."""
    (tmp_path / "tl_fake_boom.py").write_text(
        "raise ImportError('tensorlib-boom needs libboom.so, which is not installed')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "tl_fake_plugins", PLUGINS)

    def entry_points(**params):
        found = list(REAL_ENTRY_POINTS(**params))
        return found + FAKE if params.get("group") == GROUP else found
    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    tensorlib.backends.rediscover()
    yield
    monkeypatch.undo()
    tensorlib.backends.rediscover()


def test_broken_plugin_is_recorded_with_its_traceback(fake_plugins):
    records = {r.name: r for r in tensorlib.backends.list()}
    boom = records["tl_boom"]
    assert boom.status == "broken"
    assert "libboom.so" in boom.reason
    assert "Traceback" in boom.traceback and "tl_fake_boom" in boom.traceback
    assert "libboom.so" in tensorlib.backends.why_unavailable("tl_boom")
    with pytest.raises(RuntimeError, match="'tl_boom' backend is broken"):
        tensorlib.ones(2, device="tl_boom")
    assert records["cpu"].status == "available"          # the others are untouched
    assert records["tl_partial"].status == "available"


def test_import_tensorlib_survives_a_broken_plugin(tmp_path):
    """A real installed distribution whose module raises, in a fresh interpreter."""
    dist = tmp_path / "tensorlib_boom-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tensorlib-boom\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{GROUP}]\nboom = tl_boom_mod:backend\n")
    (tmp_path / "tl_boom_mod.py").write_text("raise RuntimeError('driver crashed at import')\n")
    code = ("import tensorlib\n"
            "r = {r.name: r for r in tensorlib.backends.list()}['boom']\n"
            "print(r.status, '|', r.reason)\n"
            "print(tensorlib.ones(2).sum().item())\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tmp_path)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["broken | RuntimeError: driver crashed at import",
                                          "2.0"]


def test_api_version_mismatch_is_broken(fake_plugins):
    record = tensorlib.backends._loader.LOADER.record("tl_future")
    assert record.status == "broken"
    assert f"version {API_VERSION + 1}" in record.reason
    assert f"version {API_VERSION}" in record.reason


def test_device_type_must_match_the_entry_point(fake_plugins):
    record = tensorlib.backends._loader.LOADER.record("tl_misnamed")
    assert record.status == "broken" and "something_else" in record.reason


def test_autoload_off_disables_third_party_only(fake_plugins, monkeypatch):
    monkeypatch.setenv("TENSORLIB_BACKEND_AUTOLOAD", "0")
    loader = Loader()
    assert loader.record("tl_third").status == "disabled"
    assert loader.record("cpu").status == "available"
    with pytest.raises(RuntimeError, match="TENSORLIB_BACKEND_AUTOLOAD=0"):
        loader.load("tl_third")


def test_disable_one_backend_by_name(fake_plugins, monkeypatch):
    monkeypatch.setenv("TENSORLIB_DISABLE_BACKENDS", "tl_third, other")
    loader = Loader()
    assert loader.record("tl_third").status == "disabled"
    assert "TENSORLIB_DISABLE_BACKENDS" in loader.record("tl_third").reason
    assert loader.record("tl_partial").status == "available"


def test_unknown_device_type_names_it():
    with pytest.raises(RuntimeError, match="Unknown device type 'nosuchdev'"):
        tensorlib.device("nosuchdev")
    with pytest.raises(RuntimeError, match="nosuchdev"):
        tensorlib.ones(2, device="nosuchdev:0")


def test_missing_primitive_names_op_and_device(fake_plugins):
    x = tensorlib.ones(3, device="tl_partial") + 1       # fill and add exist
    np.testing.assert_array_equal(x.cpu().numpy(), [2, 2, 2])
    with pytest.raises(NotImplementedError, match="'exp'.*'tl_partial'"):
        x.exp()
    assert "exp" in tensorlib.backends.op_coverage("tl_partial")[1]


def test_cpu_fallback_runs_missing_ops_with_one_warning(fake_plugins):
    x = tensorlib.ones(3, device="tl_partial")
    was = tensorlib.backends.cpu_fallback_enabled()
    _fallback._warned.discard(("exp", "tl_partial"))
    tensorlib.backends.set_cpu_fallback(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y, z = x.exp(), x.exp()
    finally:
        tensorlib.backends.set_cpu_fallback(was)
        _fallback._warned.discard(("exp", "tl_partial"))
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1, messages                   # once per (op, device type)
    assert "'exp'" in messages[0] and "'tl_partial'" in messages[0]
    assert y.device.type == "tl_partial"
    np.testing.assert_allclose(y.cpu().numpy(), np.full(3, np.e), rtol=1e-6)
    np.testing.assert_allclose(z.cpu().numpy(), np.full(3, np.e), rtol=1e-6)
    if not was:
        with pytest.raises(NotImplementedError):           # switched off again
            x.exp()


@pytest.mark.parametrize("module", ["tensorlib_cpu", "tensorlib_cpu.gemm"])
def test_importing_a_backend_package_before_tensorlib_works(module):
    """A plugin's module imported first imports tensorlib itself, whose setup must not ask
    for the half-imported backend (it did through repr() of default_generator)."""
    out = subprocess.run([sys.executable, "-c", f"import {module}; import tensorlib; "
                          "print(tensorlib.ones(2).sum().item())"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2.0"
