"""Load test of `tensorlib serve`: requests/s and p50/p99 latency at several concurrencies,
with dynamic batching on and off, beside the same model (same weights) in PyTorch behind a
plain one-request-one-forward FastAPI app (serve_torch_baseline.py), for the digits CNN and
an MLP (random weights: the forward's cost is what matters). Each concurrency level is a set
of clients that send one request after another for `--seconds`, over aiohttp keep-alive
connections, against a server subprocess.

    python benchmarks/serve_load.py [--models digits,mlp] [--clients 1,8,64] [--seconds 5]
        [--rows 1] [--workers N] [--threads T] [--no-torch] [--json out.json]

The baseline needs torch, fastapi and uvicorn; without them (or with --no-torch) only
tensorlib serve is measured, and the script says which package is missing.
"""
import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))

MODES = {"batching on": ["--batch-size", "32", "--max-batch-delay", "5"],
         "batching off": ["--batch-size", "1", "--max-batch-delay", "0"]}


def _digits(nn):
    from train_digits import make_model
    return make_model(nn)


def _mlp(nn):
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512),
                         nn.ReLU(), nn.Linear(512, 10))


# Both take (N, 1, 8, 8) float32 images; built on tensorlib.nn or torch.nn alike.
ARCHITECTURES = {"digits": _digits, "mlp": _mlp}


def save_model(name, path, weights):
    """The model for tensorlib serve (a traced graph) and its weights as .npz (the baseline's)."""
    import numpy as np
    import tensorlib
    tensorlib.manual_seed(0)
    model = ARCHITECTURES[name](tensorlib.nn).eval()
    tensorlib.jit.save(tensorlib.jit.trace(model, tensorlib.randn(2, 1, 8, 8)), path)
    np.savez(weights, **{k: v.numpy() for k, v in model.state_dict().items()})


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [os.path.join(ROOT, "backends", b) for b in ("cpu", "opencl", "cuda")]))


def _started(proc):
    line = proc.stdout.readline()
    if not line.startswith("listening on"):
        proc.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    base = line.split()[-1]
    _wait_until_accepting(proc, base)
    return proc, base


def _wait_until_accepting(proc, base, seconds=60.0):
    """uvicorn runs the app's startup (where the baseline says "listening") before it binds
    its socket: connect until the port answers, so the first request is not refused."""
    host, port = base.rsplit("//", 1)[-1].rsplit(":", 1)
    deadline = time.perf_counter() + seconds
    while True:
        try:
            socket.create_connection((host, int(port)), timeout=1.0).close()
            return
        except OSError:
            if proc.poll() is not None or time.perf_counter() > deadline:
                proc.kill()
                raise SystemExit(f"the server at {base} did not accept connections")
            time.sleep(0.05)


def start(name, path, extra, workers, threads):
    return _started(subprocess.Popen(
        [sys.executable, "-m", "tensorlib.serve", "--port", "0", "--model", f"{name}={path}",
         "--workers", str(workers), "--queue-size", "1000", *extra]
        + (["--threads", str(threads)] if threads else []),
        stdout=subprocess.PIPE, text=True, env=_env()))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_baseline(name, weights, threads):
    script = os.path.join(ROOT, "benchmarks", "serve_torch_baseline.py")
    return _started(subprocess.Popen(
        [sys.executable, script, "--model", name, "--weights", weights, "--port",
         str(_free_port())] + (["--threads", str(threads)] if threads else []),
        stdout=subprocess.PIPE, text=True, env=_env()))


async def load(url, clients, seconds, body):
    import aiohttp
    latencies, errors = [], 0
    end = time.perf_counter() + seconds
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def client():
            nonlocal errors
            while time.perf_counter() < end:
                t0 = time.perf_counter()
                async with session.post(url, data=body,
                                        headers={"Content-Type": "application/json"}) as r:
                    await r.read()
                    if r.status != 200:
                        errors += 1
                latencies.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        elapsed = time.perf_counter() - t0
    latencies.sort()
    q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else latencies * 99
    return {"requests": len(latencies), "errors": errors, "rps": len(latencies) / elapsed,
            "p50_ms": 1000 * q[49], "p99_ms": 1000 * q[98]}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="digits,mlp", help="digits, mlp (default both)")
    p.add_argument("--clients", default="1,8,64", help="concurrency levels (default 1,8,64)")
    p.add_argument("--seconds", type=float, default=5.0, help="per level (default 5)")
    p.add_argument("--rows", type=int, default=1, help="images per request (default 1)")
    p.add_argument("--workers", type=int, default=1, help="server workers (default 1)")
    p.add_argument("--threads", type=int, default=None,
                   help="server's CPU kernel threads (default: the server's default)")
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch baseline")
    p.add_argument("--json", help="also write the results here")
    args = p.parse_args(argv)
    import numpy as np
    from serve_torch_baseline import missing_packages
    models = args.models.split(",")
    unknown = sorted(set(models) - set(ARCHITECTURES))
    if unknown:
        p.error(f"unknown model(s) {unknown}; choose from {sorted(ARCHITECTURES)}")
    levels = [int(c) for c in args.clients.split(",")]
    body = json.dumps({"inputs": np.random.default_rng(0).random(
        (args.rows, 1, 8, 8), dtype=np.float32).tolist()}).encode()
    baseline = not args.no_torch
    if baseline and missing_packages():
        print(f"serve_load: no PyTorch baseline: install {' '.join(missing_packages())}",
              file=sys.stderr)
        baseline = False
    results = []
    with tempfile.TemporaryDirectory() as d:
        for name in models:
            path, weights = os.path.join(d, f"{name}.tlj"), os.path.join(d, f"{name}.npz")
            save_model(name, path, weights)
            servers = [(mode, lambda extra=extra: start(name, path, extra, args.workers,
                                                        args.threads))
                       for mode, extra in MODES.items()]
            if baseline:
                servers.append(("torch FastAPI", lambda: start_baseline(name, weights,
                                                                        args.threads)))
            for mode, launch in servers:
                proc, base = launch()
                try:
                    url = f"{base}/predictions/{name}"
                    asyncio.run(load(url, 4, 1.0, body))             # warm up
                    for clients in levels:
                        r = asyncio.run(load(url, clients, args.seconds, body))
                        r.update(model=name, mode=mode, clients=clients)
                        results.append(r)
                        print(f"{name:<6} {mode:<13} {clients:>3} clients: {r['rps']:8.1f} "
                              f"req/s  p50 {r['p50_ms']:7.1f} ms  p99 {r['p99_ms']:7.1f} ms"
                              + (f"  ({r['errors']} errors)" if r["errors"] else ""),
                              flush=True)
                finally:
                    proc.terminate()
                    proc.wait(60)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
