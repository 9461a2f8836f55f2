"""Benchmarks of `tensorlib.compile` beside eager tensorlib, PyTorch eager and torch.compile,
the same code run by each, every (library, mode) in its own process:

    python -m tensorlib._bench.compiled [--quick] [--only chain,softmax,...] [--json PATH]

Workloads: the elementwise chain (x*2+1).relu().exp() on 4M floats, softmax and layer_norm
over 4096x1024, and the MLP and CNN training steps of `tensorlib._bench.models` with the
model and the optimizer step compiled. Times are the best of the repeats after warm-up (the
first calls, which compile, are not timed; `cold compile` is reported separately)."""
import argparse
import json
import subprocess
import sys
import time

MODES = (("tensorlib", "eager"), ("tensorlib", "compiled"), ("torch", "eager"),
         ("torch", "compiled"))


def _chain(lib, compiled):
    x = lib.randn(4 * 1024 * 1024)

    def f(x):
        return (x * 2 + 1).relu().exp()
    fn = lib.compile(f) if compiled else f
    return lambda: fn(x), 4 * 1024 * 1024 * 4 * 2


def _softmax(lib, compiled):
    x = lib.randn(4096, 1024)

    def f(x):
        return lib.nn.functional.softmax(x, -1)
    fn = lib.compile(f) if compiled else f
    return lambda: fn(x), 4096 * 1024 * 4 * 2


def _layer_norm(lib, compiled):
    x = lib.randn(4096, 1024)
    w, b = lib.randn(1024), lib.randn(1024)

    def f(x):
        return lib.nn.functional.layer_norm(x, (1024,), w, b)
    fn = lib.compile(f) if compiled else f
    return lambda: fn(x), 4096 * 1024 * 4 * 2


def _train_step(model, opt, x, y, lib, compiled):
    fwd = lib.compile(model) if compiled else model
    update = lib.compile(opt.step) if compiled else opt.step

    def step():
        opt.zero_grad()
        lib.nn.functional.cross_entropy(fwd(x), y).backward()
        update()
    return step, None


def _mlp(lib, compiled):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                          nn.Linear(256, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return _train_step(model, opt, lib.randn(128, 784), lib.randint(0, 10, (128,)), lib,
                       compiled)


def _cnn(lib, compiled):
    nn = lib.nn
    model = nn.Sequential(nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(32 * 5 * 5, 10))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    return _train_step(model, opt, lib.randn(64, 1, 28, 28), lib.randint(0, 10, (64,)), lib,
                       compiled)


WORKLOADS = {
    "chain": ("(x*2+1).relu().exp(), 4M float32", _chain),
    "softmax": ("softmax over the last dim, 4096x1024 float32", _softmax),
    "layer_norm": ("layer_norm over the last dim, 4096x1024 float32", _layer_norm),
    "mlp": ("MLP 784-512-256-10 train step, batch 128, SGD momentum", _mlp),
    "cnn": ("CNN 2x(conv-relu-pool) train step, batch 64, Adam", _cnn),
}


def _worker(library, mode, names, repeats):
    """Runs in its own process; prints one JSON line of results."""
    if library == "torch":
        import torch as lib
        lib.set_num_threads(2)
    else:
        import tensorlib as lib
    lib.manual_seed(0)
    out = {}
    for name in names:
        fn, nbytes = WORKLOADS[name][1](lib, mode == "compiled")
        t0 = time.perf_counter()
        fn()
        cold = time.perf_counter() - t0
        for _ in range(3):
            fn()
        number = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            if time.perf_counter() - t0 > 0.05 or number >= 256:
                break
            number *= 2
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            best = min(best, (time.perf_counter() - t0) / number)
        out[name] = {"seconds": best, "first_call": cold,
                     "GB/s": nbytes / best / 1e9 if nbytes else None}
    print(json.dumps(out))


def run(names, repeats):
    results = {}
    for library, mode in MODES:
        proc = subprocess.run([sys.executable, "-m", "tensorlib._bench.compiled", "--worker",
                               library, mode, ",".join(names), str(repeats)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            results[(library, mode)] = {"error": proc.stderr.strip().splitlines()[-1:]}
            continue
        results[(library, mode)] = json.loads(proc.stdout.strip().splitlines()[-1])
    return results


def table(results, names):
    lines = [f"{'workload':<12} {'tl eager':>10} {'tl compiled':>12} {'torch eager':>12} "
             f"{'torch.compile':>14} {'vs torch eager':>15} {'vs torch.compile':>17} "
             f"{'tl 1st call':>12}"]

    def t(lib, mode, name):
        r = results.get((lib, mode), {})
        return r.get(name, {}).get("seconds") if isinstance(r, dict) else None

    for name in names:
        te, tc = t("tensorlib", "eager", name), t("tensorlib", "compiled", name)
        pe, pc = t("torch", "eager", name), t("torch", "compiled", name)
        cold = results.get(("tensorlib", "compiled"), {}).get(name, {}).get("first_call")

        def ms(v):
            return f"{v * 1e3:.3f} ms" if v else "-"

        def ratio(a, b):
            return f"{a / b:.2f}x" if a and b else "-"
        lines.append(f"{name:<12} {ms(te):>10} {ms(tc):>12} {ms(pe):>12} {ms(pc):>14} "
                     f"{ratio(pe, tc):>15} {ratio(pc, tc):>17} {ms(cold):>12}")
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        library, mode, names, repeats = argv[1:5]
        _worker(library, mode, names.split(","), int(repeats))
        return 0
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default=",".join(WORKLOADS))
    p.add_argument("--quick", action="store_true")
    p.add_argument("--json")
    args = p.parse_args(argv)
    names = [n for n in args.only.split(",") if n]
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        p.error(f"unknown workloads {unknown}; choose from {list(WORKLOADS)}")
    results = run(names, 3 if args.quick else 7)
    print(table(results, names))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({f"{lib}-{mode}": r for (lib, mode), r in results.items()}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
