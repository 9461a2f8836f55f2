"""One library on one device, in its own process: `python -m tensorlib._bench.worker LIBRARY
DEVICE [--quick] --only NAME,NAME`. Prints one JSON line per workload as it finishes (the
CLI reads them for its progress bar), timing rows with `timer.measure`."""
import argparse
import importlib
import json
import os
import sys
import time

from tensorlib._bench.registry import workloads
from tensorlib._bench.timer import Timing, measure

__all__ = ["cores", "run"]


def cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _load(library, device):
    """(the library's module, its device argument, a synchronize function or None)."""
    if library == "numpy":
        return importlib.import_module("numpy"), None, None
    module = importlib.import_module(library)
    kind = device.split(":")[0]
    if library == "torch":
        module.set_num_threads(cores())
        sync = module.cuda.synchronize if kind == "cuda" else None
        return module, module.device(device), sync
    module.set_num_threads(cores())     # as torch: the cores this process may run on
    sync = None if kind == "cpu" else module.backends.get(kind).synchronize
    return module, module.device(device), sync


# Seconds after which a warm-up call marks a workload as too slow for repeats (e.g. a
# primitive with a slow fallback on one device): it is timed once, so a run still ends.
SLOW, SLOW_QUICK = 20.0, 3.0


def _one_call(step, sync):
    start = time.perf_counter()
    step()
    if sync is not None:
        sync()
    elapsed = time.perf_counter() - start
    return Timing(elapsed, elapsed, 1, 1)


def _error(exc):
    return f"{type(exc).__name__}: {exc}"


def _row(w, library, device, module, device_arg, sync, quick):
    row = {"workload": w.name, "kind": w.kind, "mode": w.mode, "library": library,
           "device": device, "seconds": None, "best": None, "median": None,
           "throughput": None, "unit": w.unit}
    try:
        step, check = w.prepare(library, module, device_arg)
        start = time.perf_counter()
        wrong = check()                       # also the warm-up: kernels built, caches hot
        if time.perf_counter() - start > (SLOW_QUICK if quick else SLOW):
            timing = _one_call(step, sync)
            row["note"] = "slow: one timed call after the warm-up"
        else:
            timing = measure(step, sync=sync, target=0.01 if quick else 0.1, warmup=False,
                             repeats=3 if quick else 5, budget=0.15 if quick else 3.0)
    except Exception as exc:  # a failing workload is a result to report, not a crash
        row["error"] = _error(exc)
        return row
    per = getattr(w, "per_step", 1)
    row.update(seconds=timing.median / per, best=timing.best / per,
               median=timing.median / per, throughput=w.throughput(timing.median / per),
               iterations=timing.number, repeats=timing.repeats)
    if wrong:
        row["error"] = wrong
    return row


def run(library, device, names, quick, emit):
    """Time the named workloads; `emit(row)` is called once per workload."""
    chosen = [w for w in workloads(quick) if w.name in names]
    try:
        module, device_arg, sync = _load(library, device)
    except Exception as exc:
        for w in chosen:
            emit({"workload": w.name, "kind": w.kind, "mode": w.mode, "library": library,
                  "device": device, "seconds": None, "best": None, "median": None,
                  "throughput": None, "unit": w.unit, "error": _error(exc)})
        return
    for w in chosen:
        emit(_row(w, library, device, module, device_arg, sync, quick))


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m tensorlib._bench.worker")
    p.add_argument("library")
    p.add_argument("device")
    p.add_argument("--only", required=True)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)

    def emit(row):
        print(json.dumps(row), flush=True)
    run(args.library, args.device, set(args.only.split(",")), args.quick, emit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
