"""Load test of `tensorlib serve`: requests/s and p50/p99 latency at several concurrencies,
with dynamic batching on and off, on the digits CNN (random weights: the forward's cost is
what matters). Each concurrency level is a set of clients that send one request after another
for `--seconds`, over aiohttp keep-alive connections, against a server subprocess.

    python benchmarks/serve_load.py [--clients 1,8,64] [--seconds 5] [--rows 1] [--workers N]
        [--threads T] [--json out.json]
"""
import argparse
import asyncio
import json
import os
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


def save_model(path):
    import tensorlib
    from train_digits import make_model
    tensorlib.manual_seed(0)
    model = make_model().eval()
    tensorlib.jit.save(tensorlib.jit.trace(model, tensorlib.randn(2, 1, 8, 8)), path)


def start(path, extra, workers, threads):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [os.path.join(ROOT, "backends", b) for b in ("cpu", "opencl", "cuda")]))
    proc = subprocess.Popen([sys.executable, "-m", "tensorlib.serve", "--port", "0",
                             "--model", f"digits={path}", "--workers", str(workers),
                             "--queue-size", "1000", *extra]
                            + (["--threads", str(threads)] if threads else []),
                            stdout=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline()
    if not line.startswith("listening on"):
        proc.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return proc, line.split()[-1]


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
    p.add_argument("--clients", default="1,8,64", help="concurrency levels (default 1,8,64)")
    p.add_argument("--seconds", type=float, default=5.0, help="per level (default 5)")
    p.add_argument("--rows", type=int, default=1, help="images per request (default 1)")
    p.add_argument("--workers", type=int, default=1, help="server workers (default 1)")
    p.add_argument("--threads", type=int, default=None,
                   help="server's CPU kernel threads (default: the server's default)")
    p.add_argument("--json", help="also write the results here")
    args = p.parse_args(argv)
    import numpy as np
    levels = [int(c) for c in args.clients.split(",")]
    body = json.dumps({"inputs": np.random.default_rng(0).random(
        (args.rows, 1, 8, 8), dtype=np.float32).tolist()}).encode()
    results = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "digits.tlj")
        save_model(path)
        for mode, extra in MODES.items():
            proc, base = start(path, extra, args.workers, args.threads)
            try:
                url = base + "/predictions/digits"
                asyncio.run(load(url, 4, 1.0, body))                 # warm up
                for clients in levels:
                    r = asyncio.run(load(url, clients, args.seconds, body))
                    r.update(mode=mode, clients=clients)
                    results.append(r)
                    print(f"{mode:<13} {clients:>3} clients: {r['rps']:8.1f} req/s  "
                          f"p50 {r['p50_ms']:7.1f} ms  p99 {r['p99_ms']:7.1f} ms"
                          + (f"  ({r['errors']} errors)" if r["errors"] else ""), flush=True)
            finally:
                proc.terminate()
                proc.wait(60)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
