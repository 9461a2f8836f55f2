"""`python -m tensorlib._bench.ab --only gemm,bmm`: tensorlib and PyTorch taken in turns, for
figures that survive a machine shared with other jobs.

`tensorlib-bench` times each library once, one after the other, so a burst of load from
another process lands on one side only (on the shared 2-core AMD EPYC the same GEMM row
moved by 0.67-1.05x between runs). Here each side keeps one worker process (each library
in its own process, as there): PyTorch, tensorlib, and any tensorlib variants given as
environment settings (`--variant TENSORLIB_BLAS=mkl`). Compiled rows run when named
(`--only lstm_seq_compiled`, or `--only compiled` for all); their PyTorch side is
torch.compile. Round after round, the driver asks each worker in turn for the best of
`--reps` samples of one workload (a sample is one call, or enough back-to-back calls of a
tiny op to last MIN_SAMPLE_SECONDS), and keeps each side's best over all rounds, so every
side is sampled through the same spells of load. With
`--threads 1` the clock is the worker thread's CPU time (time.thread_time), which waiting
for a busy core does not stretch; with more threads it is wall time (threads wait for each
other). Ratios are torch's time / the side's (above 1: faster than torch).

tensorlib's workers run with the load-adaptive thread count off (TENSORLIB_ADAPTIVE_THREADS=0;
a variant may turn it on): its 0.1 s load windows take in the other sides' turns, so it
counted PyTorch's busy threads as outside load and ran its own turn on fewer threads (at 2
threads mlp_train read 0.61x with it, 0.97x without). `benchmarks/oversubscription.py` is
what measures that adaptation.

Workers start in the system's temporary folder, with the folders the driver imported
tensorlib and its CPU backend from put first on PYTHONPATH: `python -m` puts the working
folder first on sys.path, so a worker started in a checkout imported that checkout even when
a variant's PYTHONPATH named an installed copy (both sides then ran the same code). A
variant's own PYTHONPATH replaces that one."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

__all__ = ["main", "alternate", "serve"]


def _sides(variants, torch):
    """(label, library, extra environment) per worker: torch first, then tensorlib as it is,
    then one per variant ("NAME=VALUE[,NAME=VALUE]")."""
    sides = [("torch", "torch", {})] if torch else []
    fixed = {"TENSORLIB_ADAPTIVE_THREADS": "0"}
    sides.append(("tensorlib", "tensorlib", fixed))
    for spec in variants:
        env = dict(item.split("=", 1) for item in spec.split(",") if item)
        sides.append((f"tensorlib[{spec}]", "tensorlib", {**fixed, **env}))
    return sides


def _driver_path():
    """PYTHONPATH that makes a worker import the tensorlib (and CPU backend) this driver
    imported, wherever the worker starts."""
    import tensorlib
    import tensorlib_cpu
    first = [os.path.dirname(os.path.dirname(os.path.abspath(m.__file__)))
             for m in (tensorlib, tensorlib_cpu)]
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return os.pathsep.join(dict.fromkeys(first + rest))


class _Worker:
    """One `serve` process: a line "NAME REPS" in, the best of REPS calls (seconds) out."""

    def __init__(self, library, env, threads):
        full = {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONPATH": _driver_path(),
                **env}
        self.library = library
        self.proc = subprocess.Popen([sys.executable, "-m", "tensorlib._bench.ab", "--serve",
                                      library], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=full, cwd=tempfile.gettempdir())
        self._expect("ready")

    def _expect(self, what):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"a benchmark worker exited (rc {self.proc.wait()}) before "
                               f"answering {what!r}")
        return line

    def best(self, name, reps):
        self.proc.stdin.write(f"{name} {reps}\n")
        self.proc.stdin.flush()
        answer = json.loads(self._expect(name))
        if isinstance(answer, str):
            raise RuntimeError(f"{name} on {self.library}: {answer}")
        return answer

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def alternate(names, rounds=8, reps=5, threads=None, variants=(), torch=True, pause=0.02):
    """{name: {side label: best seconds}} over `rounds` turns through every side."""
    threads = threads or len(os.sched_getaffinity(0))
    workers = {}
    try:
        for label, library, env in _sides(variants, torch):
            workers[label] = _Worker(library, env, threads)
        best = {name: {} for name in names}
        for _ in range(rounds):
            for name in names:
                for label, worker in workers.items():
                    seconds = worker.best(name, reps)
                    best[name][label] = min(best[name].get(label, seconds), seconds)
                    time.sleep(pause)      # let the last side's spinning threads go idle
        return best
    finally:
        for worker in workers.values():
            worker.close()


# A sample lasts at least this long: a one-call sample of a ~1 us op is mostly the clock's
# own cost and its jitter (a + b on 4 elements read 1.5 us per single call against 0.8 us
# over 20,000 calls, for either library alike, so the ratio was pulled towards 1).
MIN_SAMPLE_SECONDS = 2e-3


def _calls_per_sample(step, clock):
    """Back-to-back calls per timed sample: one for any step slower than MIN_SAMPLE_SECONDS,
    enough to fill it for faster ones (after a warm-up call)."""
    step()
    start = clock()
    step()
    once = max(clock() - start, 1e-7)   # a clock too coarse to see one call: 0.1 us a call
    return max(1, round(MIN_SAMPLE_SECONDS / once))


def serve(library):
    """The worker loop: prepare each workload once (checking its result), then time it."""
    import importlib

    from tensorlib._bench.registry import workloads
    module = importlib.import_module(library)
    threads = int(os.environ["OMP_NUM_THREADS"])
    module.set_num_threads(threads)
    clock = time.thread_time if threads == 1 else time.perf_counter
    by_name = {w.name: w for w in workloads()}
    steps = {}
    print("ready", flush=True)
    for line in sys.stdin:
        name, reps = line.split()
        try:
            if name not in steps:
                step, check = by_name[name].prepare(library, module, module.device("cpu"))
                wrong = check()
                if wrong:
                    raise RuntimeError(wrong)
                steps[name] = step
            step, calls = steps[name], _calls_per_sample(steps[name], clock)
            best = float("inf")
            for _ in range(int(reps)):
                start = clock()
                for _ in range(calls):
                    step()
                best = min(best, (clock() - start) / calls)
            print(json.dumps(best), flush=True)
        except Exception as exc:   # the driver reports it and stops
            print(json.dumps(f"{type(exc).__name__}: {exc}"), flush=True)


def _table(best):
    lines = []
    for name, sides in best.items():
        ref = sides.get("torch")
        cells = []
        for label, seconds in sides.items():
            ratio = f" ({ref / seconds:.2f}x)" if ref and label != "torch" else ""
            cells.append(f"{label} {seconds * 1e6:.1f} us{ratio}")
        lines.append(f"{name:30s} " + "  ".join(cells))
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m tensorlib._bench.ab", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", help="workload names or families (gemm, bmm, conv2d, ...)")
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--reps", type=int, default=5, help="samples per turn (the best is kept)")
    p.add_argument("--threads", type=int, help="threads per library (default: the cores)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME=VALUE[,...]",
                   help="another tensorlib worker with these environment settings")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--serve", metavar="LIBRARY", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.serve:
        serve(args.serve)
        return 0
    from tensorlib._bench.registry import workloads
    wanted = set((args.only or "").split(","))
    needed = {"tensorlib"} if args.no_torch else {"tensorlib", "torch"}
    # compiled rows match only their own names or "compiled" (torch.compile's warm-up in
    # the worker takes minutes), so without --only the eager rows run
    names = [w.name for w in workloads() if needed <= set(w.libraries)
             and (any(w.matches(x) for x in wanted) if args.only else w.mode == "eager")]
    if not names:
        p.error(f"no workload matches --only {args.only!r}")
    best = alternate(names, args.rounds, args.reps, args.threads, args.variant,
                     not args.no_torch)
    threads = args.threads or len(os.sched_getaffinity(0))
    clock = "thread CPU time" if threads == 1 else "wall time"
    print(f"{threads} thread(s), {clock}, best of {args.rounds} rounds x {args.reps} samples "
          f"(a sample: one call, or back-to-back calls filling {MIN_SAMPLE_SECONDS * 1e3:g} ms)")
    print(_table(best))
    return 0


if __name__ == "__main__":
    sys.exit(main())
