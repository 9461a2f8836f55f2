"""tensorlib.distributed beside PyTorch's gloo, in one run on this machine (2 ranks each):

  1. all_reduce bandwidth, float32, 1 MB .. 256 MB: tensorlib (tensorlib-run, MPI), raw
     mpi4py on the same buffers (MPI's own ceiling), and torch gloo (torchrun);
  2. the DDP step of the MLP in tensorlib._bench.models (784-512-256-10, batch 128 per rank,
     SGD momentum): one process without DDP vs two ranks with DDP, for tensorlib (default
     buckets, which for this MLP is one bucket after backward; two buckets, the first
     reduced while backward goes on; a bucket per parameter) and for torch.

    python benchmarks/distributed_allreduce.py [--sizes 1,4,16,64,256] [--steps 20]
        [--json out.json] [--no-torch]

Every process runs with OMP_NUM_THREADS=1 (torchrun's default with several ranks per node),
so "2 ranks" and "1 process" do the same work per core. Bandwidth is nccl-tests' algorithm
bandwidth (bytes reduced / time; for 2 ranks the bus bandwidth is the same). Times are the
best of the repeats: the machine is shared, so compare the same-run ratios."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MB = 1024 * 1024
ROUNDS = 5


def _best(fn, repeats, sync):
    best = float("inf")
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _repeats(size_mb):
    return 20 if size_mb <= 4 else 8 if size_mb <= 64 else 4


def _mlp(lib):
    """The MLP and data of tensorlib._bench.models._mlp."""
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                          nn.Linear(256, 10))
    return model, lib.randn(128, 784), lib.randint(0, 10, (128,))


def _stepper(lib, model, x, y):
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step():
        opt.zero_grad()
        lib.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    for _ in range(3):
        step()
    return step


def worker(lib_name, sizes, steps, out):
    """One rank of a measuring job (started by tensorlib-run or torchrun)."""
    import numpy as np
    if lib_name == "tensorlib":
        import tensorlib as lib
        import tensorlib.distributed as dist
        from tensorlib.nn.parallel import DistributedDataParallel as DDP
        dist.init_process_group("mpi")
    else:
        import torch as lib
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        lib.set_num_threads(1)
        dist.init_process_group("gloo")
    result = {"allreduce": {}, "ddp": {}}
    for size in sizes:
        n = size * MB // 4
        t = lib.from_numpy(np.ones(n, dtype=np.float32))
        dist.all_reduce(t)
        secs = _best(lambda: dist.all_reduce(t), _repeats(size), dist.barrier)
        result["allreduce"][size] = {"s": secs, "GB/s": size * MB / secs / 1e9}
        if lib_name == "tensorlib":
            from mpi4py import MPI
            a = np.ones(n, dtype=np.float32)
            comm = MPI.COMM_WORLD
            secs = _best(lambda: comm.Allreduce(MPI.IN_PLACE, a), _repeats(size),
                         comm.Barrier)
            result["allreduce_mpi4py"] = result.get("allreduce_mpi4py", {})
            result["allreduce_mpi4py"][size] = {"s": secs, "GB/s": size * MB / secs / 1e9}
        del t
    # this MLP's 2.1 MB of gradients fill PyTorch's default first bucket (1 MB) only with
    # the last one, so "default" is one bucket reduced after backward: no overlap
    variants = {"default": {}}
    if lib_name == "tensorlib":
        variants["2 buckets (first 64 KB), overlap"] = {"first": 64 * 1024, "cap_mb": 1}
        variants["a bucket per parameter, overlap"] = {"first": 1, "cap_mb": 1e-9}
    steppers = {"no DDP (local step)": _stepper(lib, *_mlp(lib))}
    for name, v in variants.items():
        model, x, y = _mlp(lib)
        if "first" in v:
            saved, dist._DEFAULT_FIRST_BUCKET_BYTES = dist._DEFAULT_FIRST_BUCKET_BYTES, \
                v["first"]
        ddp = DDP(model, bucket_cap_mb=v.get("cap_mb"))
        if "first" in v:
            dist._DEFAULT_FIRST_BUCKET_BYTES = saved
        steppers[name] = _stepper(lib, ddp, x, y)
    # rounds interleave the variants, so load from other users hits them alike
    best = {name: float("inf") for name in steppers}
    for _ in range(ROUNDS):
        for name, step in steppers.items():
            best[name] = min(best[name], _best(step, steps, dist.barrier))
    result["ddp"] = best
    if dist.get_rank() == 0:
        with open(out, "w") as f:
            json.dump(result, f)
    dist.destroy_process_group()


def single_process(lib_name, steps):
    """The MLP step in one process without DDP (OMP_NUM_THREADS=1)."""
    if lib_name == "tensorlib":
        import tensorlib as lib
    else:
        import torch as lib
        lib.set_num_threads(1)
    step = _stepper(lib, *_mlp(lib))
    return min(_best(step, steps, lambda: None) for _ in range(ROUNDS))


def _env():
    env = dict(os.environ, OMP_NUM_THREADS="1")
    paths = [ROOT] + [os.path.join(ROOT, "backends", b) for b in ("cpu", "opencl", "cuda")]
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
    return env


def _job(lib_name, args):
    launcher = [sys.executable, "-m", "tensorlib.distributed.run"] if lib_name == "tensorlib" \
        else [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        cmd = launcher + ["--nproc-per-node", "2", os.path.abspath(__file__), "--worker",
                          lib_name, "--sizes", args.sizes, "--steps", str(args.steps),
                          "--out", out]
        subprocess.run(cmd, env=_env(), check=True)
        with open(out) as f:
            return json.load(f)


def _single(lib_name, args):
    code = (f"import sys; sys.path.insert(0, {ROOT!r}); "
            f"from benchmarks.distributed_allreduce import single_process; "
            f"print(single_process({lib_name!r}, {args.steps}))")
    done = subprocess.run([sys.executable, "-c", code], env=_env(), check=True,
                          capture_output=True, text=True)
    return float(done.stdout.split()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1,4,16,64,256", help="MB, comma-separated")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--json", default=None)
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--worker", default=None)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.worker:
        worker(args.worker, sizes, args.steps, args.out)
        return
    libs = ["tensorlib"] + ([] if args.no_torch else ["torch"])
    jobs = {lib: _job(lib, args) for lib in libs}
    single = {lib: _single(lib, args) for lib in libs}
    tl = jobs["tensorlib"]
    th = jobs.get("torch")
    print("\nall_reduce, float32, 2 ranks: algorithm bandwidth GB/s (best of repeats)")
    print(f"{'size':>8} {'tensorlib':>10} {'mpi4py':>10} {'torch gloo':>11} {'tl/gloo':>8}")
    for s in sizes:
        a = tl["allreduce"][str(s)]["GB/s"]
        m = tl["allreduce_mpi4py"][str(s)]["GB/s"]
        g = th["allreduce"][str(s)]["GB/s"] if th else float("nan")
        print(f"{s:>6}MB {a:>10.2f} {m:>10.2f} {g:>11.2f} {a / g:>7.2f}x")
    print("\nMLP 784-512-256-10 train step, batch 128 per rank, SGD momentum, "
          "OMP_NUM_THREADS=1 (ms)")
    print(f"  {'':44} {'ms':>7} {'vs 1 process':>13} {'vs local step':>14}")
    for lib in libs:
        base = single[lib]
        local_step = jobs[lib]["ddp"]["no DDP (local step)"]
        print(f"  {lib + ': 1 process, no DDP':44} {base * 1e3:>7.2f}")
        for name, secs in jobs[lib]["ddp"].items():
            print(f"  {lib + ': 2 ranks, ' + name:44} {secs * 1e3:>7.2f} "
                  f"{secs / base:>12.2f}x {secs / local_step:>13.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"jobs": jobs, "single_process_s": single}, f, indent=1)


if __name__ == "__main__":
    main()
