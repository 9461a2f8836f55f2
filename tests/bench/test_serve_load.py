"""benchmarks/serve_load.py end to end at a tiny size: tensorlib serve with batching on and
off, and (where torch, fastapi and uvicorn are installed) the PyTorch FastAPI baseline on the
same weights, every request answered; without them the script says what is missing."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "serve_load.py"
BASELINE = ("torch", "fastapi", "uvicorn")


def _run(*args):
    if any(importlib.util.find_spec(m) is None for m in ("aiohttp", "prometheus_client")):
        pytest.skip("tensorlib serve needs the [serve] extra (aiohttp, prometheus_client)")
    return subprocess.run([sys.executable, str(SCRIPT), "--models", "mlp", "--clients", "2",
                           "--seconds", "0.3", *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


def test_tensorlib_serve_rows():
    done = _run("--no-torch")
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert any(line.startswith("mlp    batching on ") for line in lines)
    assert any(line.startswith("mlp    batching off") for line in lines)
    assert "errors" not in done.stdout and "torch FastAPI" not in done.stdout


def test_pytorch_baseline_row_or_what_is_missing():
    done = _run()
    assert done.returncode == 0, done.stderr[-3000:]
    missing = [m for m in BASELINE if importlib.util.find_spec(m) is None]
    if missing:
        assert f"no PyTorch baseline: install {' '.join(missing)}" in done.stderr
    else:
        assert any(line.startswith("mlp    torch FastAPI   2 clients")
                   for line in done.stdout.splitlines()), done.stdout
        assert "errors" not in done.stdout
