"""Model-level benchmarks, the same code run with tensorlib and with PyTorch in one process:
the issues' training steps (an MLP with SGD momentum, a small CNN with Adam), a Transformer
block forward+backward, and the autograd overhead of a chain of tiny ops.

    python -m tensorlib._bench.models [--quick] [--only mlp,cnn,...] [--rounds N] [--json PATH]

Ratios are PyTorch's time / tensorlib's (above 1: tensorlib is faster). Each library runs in
its own process (one command, same machine, back to back): in one process PyTorch's spinning
OpenMP threads took the cores tensorlib's BLAS needed (an MLP step went from 3.2 to 12 ms)."""
import argparse
import json
import subprocess
import sys
import time


def _mlp(lib):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                          nn.Linear(256, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = lib.randn(128, 784), lib.randint(0, 10, (128,))

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return step


def _cnn(lib):
    nn = lib.nn
    model = nn.Sequential(nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(32 * 5 * 5, 10))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x, y = lib.randn(64, 1, 28, 28), lib.randint(0, 10, (64,))

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return step


def _transformer(lib):
    layer = lib.nn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, dropout=0.0,
                                           batch_first=True)
    x = lib.randn(16, 64, 256)

    def step():
        layer.zero_grad()
        layer(x).sum().backward()
    return step


def _chain(lib):
    x = lib.ones(4, requires_grad=True)
    w = lib.full((4,), 0.5, requires_grad=True)

    def step():
        y = x
        for _ in range(25):
            y = y * 1.01 + 0.1
            y = y * w - 0.05
        y.sum().backward()
    return step


WORKLOADS = {
    "mlp": ("MLP 784-512-256-10 train step, batch 128, SGD momentum", _mlp, 1),
    "cnn": ("CNN 2x(conv-relu-pool) 1x28x28 train step, batch 64, Adam", _cnn, 1),
    "transformer": ("Transformer encoder layer d=256 h=4 seq=64 batch=16 fwd+bwd",
                    _transformer, 1),
    "autograd_chain": ("100 tiny ops (4 elements) forward+backward, time per op", _chain, 100),
}


def _time(step, seconds):
    step()                                   # warm-up (allocations, kernel tables)
    best, spent, runs = float("inf"), 0.0, 0
    while spent < seconds or runs < 3:
        start = time.perf_counter()
        step()
        elapsed = time.perf_counter() - start
        best, spent, runs = min(best, elapsed), spent + elapsed, runs + 1
    return best


def _measure(library, name, seconds):
    """Seconds per step (per op for the chain) of one workload with one library, here."""
    import importlib
    lib = importlib.import_module(library)
    if library == "torch":
        lib.set_num_threads(_cores())
    description, build, per = WORKLOADS[name]
    lib.manual_seed(0)
    return _time(build(lib), seconds) / per


def _cores():
    import os
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _in_subprocess(library, name, seconds):
    cmd = [sys.executable, "-m", "tensorlib._bench.models", "--worker", library,
           "--only", name, "--seconds", str(seconds)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return None, lines[-1] if lines else f"exit code {done.returncode}"
    return json.loads(done.stdout.strip().splitlines()[-1]), None


def run(names, seconds, rounds=1):
    """Each workload with each library; with several rounds the libraries alternate and each
    keeps its best, so a slow spell of a shared machine does not land on one side only."""
    libraries = ["tensorlib"]
    try:
        import importlib.util
        if importlib.util.find_spec("torch") is not None:
            libraries.append("torch")
    except ValueError:
        pass
    rows = []
    for name in names:
        row = {"workload": name, "description": WORKLOADS[name][0]}
        for _ in range(rounds):
            for library in libraries:
                took, error = _in_subprocess(library, name, seconds)
                if error:
                    row[f"{library}_error"] = error
                elif row.get(library) is None or took < row[library]:
                    row[library] = took
        if row.get("tensorlib") and row.get("torch"):
            row["vs_torch"] = row["torch"] / row["tensorlib"]
        rows.append(row)
    return rows


def _fmt(seconds):
    if seconds is None:
        return "error"
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.2f} us"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tensorlib._bench.models")
    parser.add_argument("--only", default=",".join(WORKLOADS))
    parser.add_argument("--quick", action="store_true", help="short timing windows")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--seconds", type=float, help="timing window per workload")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating runs per library and workload, best kept")
    parser.add_argument("--worker", help=argparse.SUPPRESS)   # one library, in a subprocess
    args = parser.parse_args(argv)
    seconds = args.seconds or (0.2 if args.quick else 2.0)
    if args.worker:
        print(json.dumps(_measure(args.worker, args.only, seconds)))
        return 0
    rounds = 1 if args.quick else args.rounds
    rows = run([n for n in args.only.split(",") if n], seconds, rounds)
    print(f"{'workload':<16} {'tensorlib':>11} {'torch':>11} {'vs torch':>9}  what")
    for r in rows:
        ratio = f"{r['vs_torch']:.2f}x" if "vs_torch" in r else "-"
        print(f"{r['workload']:<16} {_fmt(r.get('tensorlib')):>11} {_fmt(r.get('torch')):>11} "
              f"{ratio:>9}  {r['description']}")
        for key in ("tensorlib_error", "torch_error"):
            if key in r:
                print(f"{'':16} {key}: {r[key]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if all(r.get("tensorlib") for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
