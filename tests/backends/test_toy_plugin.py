"""The example third-party plugin, installed the way a user would (pip, offline, into a
directory on sys.path): found through its entry point, usable as toy:0 and toy:1, and passing
the conformance suite."""
import gc
import importlib
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import tensorlib
from tensorlib.testing.conformance import ConformanceSuite

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "toy_backend"


@pytest.fixture(scope="module", autouse=True)
def toy_site(tmp_path_factory):
    """pip-install examples/toy_backend into a temporary directory, once for this module."""
    root = tmp_path_factory.mktemp("toy")
    src, site = root / "src", root / "site"
    # a copy, so the build leaves no build/ or .egg-info in the repository
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__", "tests"))
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
         "--no-index", "--disable-pip-version-check", "-q", "--target", str(site), str(src)],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"pip install failed:\n{proc.stdout}\n{proc.stderr}"
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    tensorlib.backends.rediscover()
    yield site
    sys.path.remove(str(site))
    for name in [m for m in sys.modules if m.split(".")[0] == "tensorlib_toy"]:
        del sys.modules[name]
    importlib.invalidate_caches()
    tensorlib.backends.rediscover()


def test_listed_as_available():
    records = {r.name: r for r in tensorlib.backends.list()}
    assert records["toy"].status == "available", records["toy"]
    assert not records["toy"].first_party
    assert "toy" in tensorlib.backends.available()
    assert tensorlib.backends.why_unavailable("toy") is None
    assert tensorlib.backends.op_coverage("toy")[1] == []
    assert tensorlib.backends.composite_coverage("toy")[0] == ["relu"]


def test_the_toy_relu_kernel_is_the_one_called():
    x = tensorlib.tensor([-1.0, 0.5, float("nan")], device="toy")
    table = x._device._kernels
    calls = []
    original = table["relu"]
    table["relu"] = lambda out, a: calls.append(1) or original(out, a)
    try:
        np.testing.assert_array_equal(tensorlib.relu(x).cpu().numpy(), [0.0, 0.5, np.nan])
    finally:
        table["relu"] = original
    assert calls == [1]


def test_arithmetic_and_moves():
    x = tensorlib.ones(3, device="toy:1") + 1
    assert x.device == tensorlib.device("toy:1")
    np.testing.assert_array_equal(x.cpu().numpy(), [2, 2, 2])
    on_cpu = x.to("cpu")
    assert on_cpu.device.type == "cpu"
    np.testing.assert_array_equal(on_cpu.numpy(), [2, 2, 2])
    on_toy0 = x.to("toy:0")
    assert on_toy0.device == tensorlib.device("toy:0")
    np.testing.assert_array_equal(on_toy0.cpu().numpy(), [2, 2, 2])
    back = on_cpu.to("toy:0")
    np.testing.assert_array_equal((back * on_toy0).cpu().numpy(), [4, 4, 4])


def test_allocator_counts_bytes_per_device():
    backend = tensorlib.backends.get("toy")
    before = [backend.memory_allocated(i) for i in (0, 1)]
    t = tensorlib.empty(256, device="toy:1")
    assert backend.memory_allocated(1) - before[1] == 1024
    assert backend.memory_allocated(0) == before[0]
    del t
    gc.collect()
    assert backend.memory_allocated(1) == before[1]


def test_found_and_imported_lazily_in_a_fresh_process(toy_site):
    code = ("import sys, tensorlib\n"
            "assert 'tensorlib_toy' not in sys.modules  # entry points read, nothing imported\n"
            "print((tensorlib.ones(2, device='toy:1') * 3).cpu().numpy().tolist())\n"
            "assert 'tensorlib_toy' in sys.modules\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(toy_site)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[3.0, 3.0]"


class TestToyConformance(ConformanceSuite):
    device = "toy"
