"""tensorlib on `cuda` beside torch on the same GPU, in one run: GEMM float32 (TF32 off on
both sides) and bfloat16 at 4096, add on 64M floats, softmax 8192x8192, the MLP and CNN
training steps of `tensorlib._bench.models`, and the tests' LeNet trained on cuda.

    python benchmarks/cuda_bench.py [--json PATH] [--repeats N]

Each figure is the best of --repeats timed calls after a warm-up (which compiles, or loads
from the kernel cache), both libraries synchronised after every call. Ratios are tensorlib's
throughput / torch's (above 1: tensorlib is faster); for training steps, tensorlib's time /
torch's (the issue's target is at most 1.5)."""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _best(fn, sync, repeats):
    fn()
    sync()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t)
    return best


class _OnDevice:
    """A library whose randn/randint and nn.Sequential models are made on `device`, so the
    CPU-written workloads of tensorlib._bench.models run there unchanged."""

    def __init__(self, lib, device):
        self._lib, self._device = lib, device
        self.nn = _NN(lib.nn, device)

    def randn(self, *sizes):
        return self._lib.randn(*sizes, device=self._device)

    def randint(self, low, high, size):
        return self._lib.randint(low, high, size, device=self._device)

    def __getattr__(self, name):
        return getattr(self._lib, name)


class _NN:
    def __init__(self, nn, device):
        self._nn, self._device = nn, device

    def Sequential(self, *modules):  # noqa: N802 - torch's name
        return self._nn.Sequential(*modules).to(self._device)

    def __getattr__(self, name):
        return getattr(self._nn, name)


def _kernels(lib, repeats):
    """[(name, unit, per-call work, seconds)] for the kernel workloads with one library."""
    sync = lib.cuda.synchronize
    rows = []
    n = 4096
    for dt_name, label in (("float32", "GEMM fp32 4096 (TF32 off)"), ("bfloat16", "GEMM bf16 4096")):
        dt = getattr(lib, dt_name)
        a = lib.randn(n, n, device="cuda").to(dt)
        b = lib.randn(n, n, device="cuda").to(dt)
        rows.append((label, "TFLOP/s", 2 * n ** 3 / 1e12, _best(lambda: a @ b, sync, repeats)))
    m = 64 << 20
    x, y = lib.randn(m, device="cuda"), lib.randn(m, device="cuda")
    rows.append(("add 64M fp32", "GB/s", 3 * 4 * m / 1e9, _best(lambda: x + y, sync, repeats)))
    del x, y
    s = lib.randn(8192, 8192, device="cuda")
    rows.append(("softmax 8192x8192 fp32", "GB/s", 2 * 4 * s.numel() / 1e9,
                 _best(lambda: s.softmax(1), sync, repeats)))
    return rows


def _steps(lib, repeats):
    from tensorlib._bench.models import WORKLOADS
    rows = []
    for name in ("mlp", "cnn"):
        description, build, _ = WORKLOADS[name]
        lib.manual_seed(0)
        step = build(_OnDevice(lib, "cuda"))
        rows.append((f"{name} train step", "ms", None,
                     _best(step, lib.cuda.synchronize, repeats)))
    return rows


def _lenet():
    """The tests' LeNet trained 15 steps on cuda: (first loss, last loss, seconds)."""
    from tests.nn.test_training import _train_lenet
    t = time.perf_counter()
    losses = _train_lenet("cuda")
    return losses[0], losses[-1], time.perf_counter() - t


def _measure(name, repeats):
    import importlib
    lib = importlib.import_module(name)
    if name == "torch":
        lib.backends.cuda.matmul.allow_tf32 = False
        lib.set_float32_matmul_precision("highest")
    out = {}
    for part in (_kernels, _steps):
        try:
            for label, unit, work, seconds in part(lib, repeats):
                out[label] = {"unit": unit, "work": work, "seconds": seconds}
        except Exception as exc:                  # report, and go on with the other part
            out[f"{part.__name__} error"] = f"{type(exc).__name__}: {exc}"
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    import tensorlib as tl
    print(f"GPU: {tl.cuda.get_device_name()}  ({tl.backends.get('cuda').info()})")
    results = {"tensorlib": _measure("tensorlib", args.repeats)}
    try:
        results["torch"] = _measure("torch", args.repeats)
    except Exception as exc:
        results["torch"] = {"error": f"{type(exc).__name__}: {exc}"}
    try:
        first, last, took = _lenet()
        results["lenet"] = {"first_loss": first, "last_loss": last, "seconds": took}
    except Exception as exc:
        results["lenet"] = {"error": f"{type(exc).__name__}: {exc}"}

    ours, theirs = results["tensorlib"], results["torch"]
    print(f"\n{'workload':<28} {'tensorlib':>12} {'torch':>12} {'ratio':>7}")
    rows = []
    for label, r in ours.items():
        if not isinstance(r, dict):
            print(f"{label}: {r}")
            continue
        t = theirs.get(label) if isinstance(theirs.get(label), dict) else None
        if r["unit"] == "ms":
            mine, peer = r["seconds"] * 1e3, t["seconds"] * 1e3 if t else None
            ratio = mine / peer if peer else None            # time: lower is better
            fmt = "{:.2f} ms"
        else:
            mine = r["work"] / r["seconds"]
            peer = t["work"] / t["seconds"] if t else None
            ratio = mine / peer if peer else None            # throughput: higher is better
            fmt = "{:.1f} " + r["unit"]
        rows.append({"workload": label, "tensorlib": mine, "torch": peer, "ratio": ratio,
                     "unit": r["unit"] if r["unit"] != "ms" else "ms (time ratio)"})
        print(f"{label:<28} {fmt.format(mine):>12} {fmt.format(peer) if peer else '-':>12} "
              f"{f'{ratio:.2f}x' if ratio else '-':>7}")
    for key, value in theirs.items():
        if not isinstance(value, dict):
            print(f"torch {key}: {value}")
    print(f"LeNet on cuda: {results['lenet']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "raw": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
