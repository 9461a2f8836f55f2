"""How much each library slows down when other processes take cores: the MLP and CNN training
steps timed with the machine as it is, then again beside busy processes (each a Python loop
that never sleeps, one per `--busy`), each library in its own worker process as in
`tensorlib-bench`. Prints per library the two medians and the slowdown (loaded / idle); #31
asks tensorlib's to be no worse than PyTorch's. Run it on an otherwise idle machine: the
first column is only "idle" if nothing else runs (the load average is printed).

    python benchmarks/oversubscription.py [--busy 1] [--only mlp_train,cnn_train]"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # run from a checkout

from tensorlib._bench.cli import _child_env  # noqa: E402


def measure(library, names):
    """{workload: median seconds} from one worker process of `library` on the CPU."""
    proc = subprocess.run([sys.executable, "-m", "tensorlib._bench.worker", library, "cpu",
                           "--only", ",".join(names)], capture_output=True, text=True,
                          env=_child_env())
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or len(rows) != len(names):
        raise RuntimeError(f"{library} worker failed: {proc.stderr.strip()[-500:]}")
    return {row["workload"]: row["seconds"] for row in rows}


def with_busy_processes(count, fn):
    """fn() while `count` busy-looping processes run beside it."""
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        return fn()
    finally:
        for p in busy:
            p.kill()
            p.wait()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=1, help="busy processes beside the run")
    parser.add_argument("--only", default="mlp_train,cnn_train")
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n]
    libraries = ["tensorlib"] + (["torch"] if importlib.util.find_spec("torch") else [])
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}; "
          f"{os.cpu_count()} logical cores; {args.busy} busy process(es) for the loaded run")
    idle = {lib: measure(lib, names) for lib in libraries}
    loaded = with_busy_processes(args.busy, lambda: {lib: measure(lib, names)
                                                     for lib in libraries})
    print(f"{'workload':<12} {'library':<10} {'idle':>10} {'loaded':>10} {'slowdown':>9}")
    for name in names:
        for lib in libraries:
            a, b = idle[lib][name], loaded[lib][name]
            print(f"{name:<12} {lib:<10} {a * 1e3:8.2f}ms {b * 1e3:8.2f}ms {b / a:8.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
