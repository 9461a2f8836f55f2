"""examples/serve_digits.py, shortened, then its graph served and asked as docs/serving.md
does: the server's answers are the saved graph's own predictions."""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorlib

from .conftest import ROOT


@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None,
                    reason="needs scikit-learn (pip install \".[examples]\")")
def test_serve_digits_example(tmp_path, start_server):
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "serve_digits.py"),
                           "--epochs", "1", "--max-batches", "3", "--out", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "the saved graph gives the same predictions" in done.stdout
    images = np.load(out / "request.npy")
    assert images.shape == (5, 1, 8, 8) and images.dtype == np.float32
    with tensorlib.no_grad():
        want = tensorlib.jit.load(str(out / "digits.tlj"))(tensorlib.from_numpy(images)).numpy()

    s = start_server("--model", f"digits={out / 'digits.tlj'}")
    status, doc = s.json("POST", "/predictions/digits", (out / "request.json").read_bytes(),
                         {"Content-Type": "application/json"})
    assert status == 200
    np.testing.assert_allclose(doc["outputs"], want, rtol=1e-5, atol=1e-5)
    desc = s.json("GET", "/models/digits")[1][0]
    assert desc["inputs"] == [{"shape": [None, 1, 8, 8], "dtype": "float32"}]
    assert len(json.loads((out / "labels.json").read_text())) == 5
    assert s.stop() == 0
