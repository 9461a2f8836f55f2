"""Each example runs, shortened (one epoch, a few batches), as a user would start it."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples")


def _needs(*modules):
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)} "
                              f"(pip install \".[examples]\")")


def _run(script, *args, cwd):
    done = subprocess.run([sys.executable, os.path.join(EXAMPLES, script), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()


@_needs("sklearn", "tqdm", "matplotlib")
def test_train_digits_short(tmp_path):
    import tensorlib
    lines = _run("train_digits.py", "--epochs", "1", "--max-batches", "3", "--device", "cpu",
                 "--out", str(tmp_path), cwd=tmp_path)
    assert re.fullmatch(r"test accuracy: \d{1,3}\.\d%", lines[-1]), lines[-1]
    assert "reloads to the same predictions" in lines[-2]
    assert any(line.startswith("epoch  1: train loss") for line in lines)
    assert (tmp_path / "digits.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    checkpoint = tensorlib.load(tmp_path / "digits_cnn.pt")
    assert checkpoint["epochs"] == 1 and "0.weight" in checkpoint["model"]


@_needs("tqdm")
def test_char_transformer_short(tmp_path):
    lines = _run("char_transformer.py", "--epochs", "1", "--max-batches", "2",
                 "--sample-length", "20", "--device", "cpu", cwd=tmp_path)
    sample = lines[lines.index("sample:") + 1]
    assert sample.startswith("And God said") and len(sample) == len("And God said") + 20
    assert lines[-1].startswith("trained 1 epochs in") and "validation loss" in lines[-1]


def test_linear_regression_fits_sin(tmp_path):
    lines = _run("linear_regression.py", cwd=tmp_path)
    final_loss = float(lines[-2].split()[1])
    assert lines[-2].startswith("1999 ") and final_loss < 20.0   # PyTorch's run ends near 9
    assert lines[-1].startswith("Result: y = ")


def test_best_device_is_never_an_opencl_cpu(monkeypatch):
    sys.path.insert(0, EXAMPLES)
    try:
        from common import best_device
    finally:
        sys.path.remove(EXAMPLES)
    import tensorlib
    device = best_device()
    assert device.split(":")[0] in tensorlib.backends.available()
    if device.startswith("opencl"):
        from tensorlib_opencl import device as opencl_devices
        assert not opencl_devices.get(int(device.split(":")[1])).is_cpu
    if "cuda" not in tensorlib.backends.available():
        assert not device.startswith("cuda")
