"""Fixtures for tests/serve: saved graphs, and the real server started in a subprocess."""
import importlib.util
import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

import tensorlib
from tensorlib import nn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MISSING = [m for m in ("aiohttp", "prometheus_client") if importlib.util.find_spec(m) is None]


@pytest.fixture(scope="session", autouse=True)
def serve_extra():
    """Skip (before any server starts) when the [serve] extra is not installed."""
    if MISSING:
        pytest.skip(f"tensorlib serve needs the [serve] extra (pip install '.[serve]'): "
                    f"{', '.join(MISSING)} missing")


def _two_outputs(a, b):
    return a * 2 + b, (a - b).sum(1)


def _matmul(x, y):
    return x @ y


def _double(x):
    return x * 2


@pytest.fixture(scope="session")
def model_files(tmp_path_factory):
    """{name: path} of graphs saved with tensorlib.jit.save."""
    d = tmp_path_factory.mktemp("models")
    tensorlib.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3)).eval()
    tensorlib.jit.save(tensorlib.jit.trace(mlp, tensorlib.randn(2, 4)), str(d / "mlp.tlj"))
    pair = tensorlib.jit.trace(_two_outputs, (tensorlib.randn(3, 5), tensorlib.randn(3, 5)))
    tensorlib.jit.save(pair, str(d / "pair.tlj"))
    tensorlib.jit.save(tensorlib.jit.script(_matmul), str(d / "matmul.tlj"))
    tensorlib.jit.save(tensorlib.jit.script(_double), str(d / "double.tlj"))
    return {name: str(d / f"{name}.tlj") for name in ("mlp", "pair", "matmul", "double")}


class Served:
    """A `python -m tensorlib.serve` subprocess and a urllib client for it."""

    def __init__(self, args, tmp_path):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [ROOT] + [os.path.join(ROOT, "backends", b) for b in ("cpu", "opencl", "cuda")]
            + [env.get("PYTHONPATH", "")])
        self.stderr = open(tmp_path / "server.err", "w+")
        self.proc = subprocess.Popen([sys.executable, "-m", "tensorlib.serve", "--port", "0",
                                      *args], stdout=subprocess.PIPE, stderr=self.stderr,
                                     text=True, env=env, cwd=ROOT)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on http://"):
            try:
                rc = self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                rc = self.proc.wait()
            self.stderr.seek(0)
            raise RuntimeError(f"server did not start (exit {rc}): {self.stderr.read()}")
        self.url = line.split()[-1]
        self.port = int(self.url.rsplit(":", 1)[1])

    def request(self, method, path, body=None, headers=None):
        """(status, headers, body bytes) of one request; HTTP errors are answers too."""
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=body, method=method,
                                     headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()

    def json(self, method, path, body=None, headers=None):
        status, _, data = self.request(method, path, body, headers)
        return status, json.loads(data)

    def metric(self, name, **labels):
        """The value of one sample of /metrics (0.0 when absent)."""
        _, _, text = self.request("GET", "/metrics")
        want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        for line in text.decode().splitlines():
            if line.startswith("#"):
                continue
            key, _, value = line.rpartition(" ")
            sample, _, rest = key.partition("{")
            got = ",".join(sorted(rest.rstrip("}").split(","))) if rest else ""
            if sample == name and got == want:
                return float(value)
        return 0.0

    def stop(self, sig=signal.SIGTERM, timeout=60):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        finally:
            self.proc.stdout.close()
            self.stderr.close()


@pytest.fixture(scope="module")
def server(model_files, tmp_path_factory):
    """One server for a test module: every model of model_files, 100 KB body limit."""
    s = Served([a for name, path in model_files.items() for a in ("--model", f"{name}={path}")]
               + ["--batch-size", "16", "--max-batch-delay", "50",
                  "--max-request-size", "100000"], tmp_path_factory.mktemp("server"))
    yield s
    s.stop()


@pytest.fixture
def start_server(tmp_path):
    """A factory of servers that the test stops itself (or that are stopped after it)."""
    started = []

    def start(*args):
        s = Served(list(args), tmp_path)
        started.append(s)
        return s
    yield start
    for s in started:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()
