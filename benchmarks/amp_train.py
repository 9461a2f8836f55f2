"""Training steps in float32 and under bfloat16 autocast on the CPU, tensorlib and PyTorch
side by side: the MLP and Transformer workloads of `tensorlib-bench` (tensorlib/_bench/
models.py builds the same models for both), each step = zero_grad, forward and loss inside
`autocast("cpu", dtype=bfloat16)` (or not), backward, optimizer step.

    python benchmarks/amp_train.py [--rounds 3] [--steps 5] [--quick]

Each library runs in its own process (as tensorlib-bench does: PyTorch's OpenMP threads
take the cores otherwise); the processes alternate for --rounds rounds and each figure is
the best step time over all of them (the machines are shared and noisy)."""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _worker(library, steps, quick):
    import importlib
    from tensorlib._bench.models import _mlp, _transformer
    lib = importlib.import_module(library)
    results = {}
    for name, build in (("mlp", _mlp), ("transformer", _transformer)):
        lib.manual_seed(0)
        model, x, y, loss_fn, make_optimizer = build(lib, quick)
        model.train()
        optimizer = make_optimizer(model.parameters())
        for label, enabled in (("float32", False), ("bfloat16", True)):
            def step():
                optimizer.zero_grad()
                with lib.autocast("cpu", dtype=lib.bfloat16, enabled=enabled):
                    loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
                return loss
            for _ in range(2):
                step()
            best = float("inf")
            for _ in range(steps):
                start = time.perf_counter()
                step()
                best = min(best, time.perf_counter() - start)
            results[f"{name} {label}"] = best * 1e3
    print(json.dumps(results))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return _worker(args.worker, args.steps, args.quick)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT, os.path.join(ROOT, "backends", "cpu")] +
        ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    best = {}
    for _ in range(args.rounds):
        for library in ("tensorlib", "torch"):
            cmd = [sys.executable, __file__, "--worker", library, "--steps", str(args.steps)]
            out = subprocess.run(cmd + (["--quick"] if args.quick else []), env=env,
                                 capture_output=True, text=True, check=True).stdout
            for key, ms in json.loads(out.strip().splitlines()[-1]).items():
                best[(library, key)] = min(best.get((library, key), ms), ms)
    print(f"{'model':<12} {'dtype':<9} {'tensorlib ms':>13} {'torch ms':>10} "
          f"{'torch/tensorlib':>16}")
    for model in ("mlp", "transformer"):
        for dtype in ("float32", "bfloat16"):
            ours, theirs = best[("tensorlib", f"{model} {dtype}")], \
                best[("torch", f"{model} {dtype}")]
            print(f"{model:<12} {dtype:<9} {ours:>13.2f} {theirs:>10.2f} {theirs / ours:>16.2f}")
        slow = [best[(lib, f"{model} bfloat16")] / best[(lib, f"{model} float32")]
                for lib in ("tensorlib", "torch")]
        print(f"{model:<12} bf16/fp32 tensorlib {slow[0]:.2f}x, torch {slow[1]:.2f}x")


if __name__ == "__main__":
    main()
