"""One library on one device, in its own process: `python -m tensorlib._bench.worker LIBRARY
DEVICE [--quick]` answers the driver's commands (`turns.py`), one JSON line each way:
prepare a workload (build it, check its result, calibrate), run one timed repeat of it,
finish it (its row). The driver asks each library's worker for a repeat in turn, so a
burst of load from another process lands on every library alike. With `--only NAME,...`
it times those workloads itself, repeats back to back, and prints their rows
(`benchmarks/oversubscription.py`: each library alone beside busy processes)."""
import argparse
import importlib
import json
import os
import sys
import time

from tensorlib._bench.registry import workloads
from tensorlib._bench.timer import Sampler, Timing

__all__ = ["Session", "cores", "run", "serve"]


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


def error_row(w, library, device, message):
    """The row of a workload that could not be timed."""
    return {"workload": w.name, "kind": w.kind, "mode": w.mode, "library": library,
            "device": device, "seconds": None, "best": None, "median": None,
            "throughput": None, "unit": w.unit, "error": message}


class Session:
    """The workloads of one library on one device: each prepared, sampled repeat by repeat,
    then finished into its row."""

    def __init__(self, library, device, quick):
        self.library, self.device, self.quick = library, device, quick
        self.by_name = {w.name: w for w in workloads(quick)}
        self.module, self.device_arg, self.sync = _load(library, device)
        self._open = {}          # name -> [sampler or None, wrong-result message, timing]

    def prepare(self, name):
        """Build, check (also the warm-up) and calibrate; the finished row when there is
        nothing to repeat (an error, or a call too slow for repeats), else None."""
        w = self.by_name[name]
        try:
            step, check = w.prepare(self.library, self.module, self.device_arg)
            start = time.perf_counter()
            wrong = check()                   # also the warm-up: kernels built, caches hot
            if time.perf_counter() - start > (SLOW_QUICK if self.quick else SLOW):
                self._open[name] = [None, wrong, _one_call(step, self.sync)]
                return self.finish(name, note="slow: one timed call after the warm-up")
            sampler = Sampler(step, sync=self.sync, target=0.01 if self.quick else 0.1,
                              repeats=3 if self.quick else 5,
                              budget=0.15 if self.quick else 3.0)
            sampler.calibrate()
        except Exception as exc:  # a failing workload is a result to report, not a crash
            return error_row(w, self.library, self.device, _error(exc))
        self._open[name] = [sampler, wrong, None]
        return None

    def repeat(self, name):
        """One timed repeat; whether the workload has all its repeats."""
        sampler = self._open[name][0]
        try:
            sampler.repeat()
        except Exception as exc:
            self._open[name][1] = _error(exc)
            return True
        return sampler.done

    def finish(self, name, note=None):
        w = self.by_name[name]
        sampler, wrong, timing = self._open.pop(name)
        if timing is None:
            if not sampler.times:
                return error_row(w, self.library, self.device, wrong)
            timing = sampler.timing()
        per = getattr(w, "per_step", 1)
        row = error_row(w, self.library, self.device, wrong)
        if not wrong:
            del row["error"]
        if note:
            row["note"] = note
        row.update(seconds=timing.median / per, best=timing.best / per,
                   median=timing.median / per, throughput=w.throughput(timing.median / per),
                   iterations=timing.number, repeats=timing.repeats)
        return row


def run(library, device, names, quick, emit):
    """Time the named workloads in this process, repeats back to back; `emit(row)` is
    called once per workload."""
    chosen = [w for w in workloads(quick) if w.name in names]
    try:
        session = Session(library, device, quick)
    except Exception as exc:
        for w in chosen:
            emit(error_row(w, library, device, _error(exc)))
        return
    for w in chosen:
        row = session.prepare(w.name)
        if row is None:
            while not session.repeat(w.name):
                pass
            row = session.finish(w.name)
        emit(row)


def _turn_hook(session):
    """What to do as each command begins: tensorlib's CPU kernels size their thread team by
    the load others put on our cores over the last 0.1 s (cpu_load.py), so the time this
    process waited for its turn is left out (counted, the other library's turn read as
    load, and GEMMs ran on one thread of two: 0.19-0.76x PyTorch instead of 1.1-1.3x)."""
    if session.library == "tensorlib":
        hook = getattr(session.module.backends.get("cpu"), "start_load_interval", None)
        if hook is not None:
            return hook
    return lambda: None


def serve(library, device, quick, commands=sys.stdin, answers=sys.stdout):
    """The worker loop: one JSON command per line ({"prepare"|"repeat"|"finish": name}),
    one JSON answer per line ({"row": ...} or {"done": bool}); "ready" first, or the
    reason the library cannot load."""
    def answer(obj):
        answers.write(json.dumps(obj) + "\n")
        answers.flush()
    try:
        session = Session(library, device, quick)
    except Exception as exc:
        answer({"failed": _error(exc)})
        return
    answer({"ready": True})
    turn_begins = _turn_hook(session)
    for line in commands:
        turn_begins()
        (verb, name), = json.loads(line).items()
        if verb == "prepare":
            answer({"row": session.prepare(name)})
        elif verb == "repeat":
            answer({"done": session.repeat(name)})
        else:
            answer({"row": session.finish(name)})


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m tensorlib._bench.worker")
    p.add_argument("library")
    p.add_argument("device")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", help="time these workloads, print their rows and exit")
    args = p.parse_args(argv)
    if args.only:
        run(args.library, args.device, set(args.only.split(",")), args.quick,
            lambda row: print(json.dumps(row), flush=True))
    else:
        serve(args.library, args.device, args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
