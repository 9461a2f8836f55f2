"""`tensorlib-bench`: time tensorlib, PyTorch and numpy side by side in one run.

Op workloads (elementwise, reductions, matmul) and model workloads (MLP, CNN, Transformer
layer: inference forward and training step; autograd overhead) on every requested device.
Each library runs in its own process; the processes take turns, one timed repeat each, so
a spell of load from elsewhere lands on every library alike. Each figure is the median of
repeats after a warm-up, with device work synchronised before the clock stops. These
machines are noisy, so only ratios taken within the same run mean anything:
`vs torch` = torch_time / tensorlib_time (above 1 = tensorlib faster), `vs numpy` likewise.
PyTorch runs on the same device type where it can (cuda), else on the CPU."""
import argparse
import importlib.util
import json
import os
import platform
import sys

import numpy as np

from tensorlib._bench.libraries import format_libraries, tensorlib_libraries, torch_libraries
from tensorlib._bench.ops import LIBRARIES
from tensorlib._bench.progress import Progress
from tensorlib._bench.registry import workloads
from tensorlib._bench.turns import run_in_turns
from tensorlib._bench.worker import cores

__all__ = ["main", "run", "format_table"]


def _parse(argv):
    p = argparse.ArgumentParser(prog="tensorlib-bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", metavar="TYPE[,TYPE]",
                   help="tensorlib devices, e.g. cpu,opencl,cuda (default: every available)")
    p.add_argument("--only", metavar="NAME[,NAME]",
                   help="workload names, families (matmul, mlp), kinds (op, model) or 'compiled' "
                        "(tensorlib.compile beside torch.compile; not run by default)")
    p.add_argument("--quick", action="store_true",
                   help="small sizes and few repeats: a smoke test, under a minute")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--plot", metavar="PATH.png", help="also draw the ratios (needs matplotlib)")
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch comparison")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    p.add_argument("--libraries", action="store_true",
                   help="print which libraries do the work on each side (GEMM, convolution, "
                        "threads) and exit; every run also records them")
    return p.parse_args(argv)


def _devices(spec):
    """The requested tensorlib devices; RuntimeError naming why one cannot be used."""
    import tensorlib
    available = tensorlib.backends.available()
    if spec is None:
        return [d for d in ("cpu", "opencl", "cuda") if d in available] + sorted(
            d for d in available if d not in ("cpu", "opencl", "cuda"))
    devices = [d.strip() for d in spec.split(",") if d.strip()]
    for d in devices:
        kind = d.split(":")[0]
        if kind not in available:
            why = tensorlib.backends.why_unavailable(kind) if kind in {
                r.name for r in tensorlib.backends.list()} else "no such backend"
            raise RuntimeError(f"device {d!r} is unavailable: {why}")
    return devices


def _torch_device(device):
    """Where PyTorch runs beside a tensorlib device: the same CUDA device, else the CPU."""
    return device if device.split(":")[0] == "cuda" else "cpu"


def _select(args):
    chosen = workloads(quick=args.quick)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if not any(w.matches(n) for w in chosen)]
        if unknown:
            raise SystemExit(f"tensorlib-bench: unknown workload(s) {', '.join(unknown)}; "
                             f"see --list")
        chosen = [w for w in chosen if any(w.matches(n) for n in names)]
    else:       # compiled workloads compile first (torch.compile: many seconds): asked for only
        chosen = [w for w in chosen if getattr(w, "mode", "eager") != "compiled"]
    return chosen


def _runs_on(workload, device):
    """Whether a workload applies to a tensorlib device (`devices`, when it names some:
    e.g. quantized inference is CPU-only, as in PyTorch)."""
    kinds = getattr(workload, "devices", None)
    return kinds is None or device.split(":")[0] in kinds


def _jobs(chosen, devices, with_torch):
    """{(library, device): [workload names]}, in run order; each job is one process."""
    jobs = {}
    for device in devices:
        chosen_here = [w for w in chosen if _runs_on(w, device)]
        runs = [("tensorlib", device)]
        if with_torch:
            runs.append(("torch", _torch_device(device)))
        runs.append(("numpy", "cpu"))
        for library, where in runs:
            names = [w.name for w in chosen_here if library in w.libraries]
            if names and (library, where) not in jobs:
                jobs[library, where] = names
    return jobs


def _child_env():
    """The children import the same tensorlib as this process (a checkout run by path too)."""
    import tensorlib
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(tensorlib.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def _ratio(mine, theirs):
    if not mine or not theirs or not mine["seconds"] or not theirs["seconds"]:
        return None
    return theirs["seconds"] / mine["seconds"]


def _version(package):
    try:
        from importlib.metadata import version
        return version(package)
    except Exception:
        return None


def run(args):
    """Run the selected workloads; returns the JSON-ready report."""
    import tensorlib
    devices = _devices(args.device)
    chosen = _select(args)
    with_torch = not args.no_torch and importlib.util.find_spec("torch") is not None
    jobs = _jobs(chosen, devices, with_torch)
    progress = Progress(sum(len(names) for names in jobs.values()))
    try:
        results = run_in_turns(jobs, args.quick, _child_env(), progress)
    finally:
        progress.close()
    by_key = {(r["library"], r["device"], r["workload"]): r for r in results}
    ratios = []
    for device in devices:
        for w in (w for w in chosen if _runs_on(w, device)):
            mine = by_key.get(("tensorlib", device, w.name))
            ratios.append({"workload": w.name, "kind": w.kind, "mode": w.mode,
                           "device": device, "description": w.description,
                           "torch_device": _torch_device(device) if with_torch else None,
                           "vs_torch": _ratio(mine, by_key.get(("torch", _torch_device(device),
                                                                 w.name))),
                           "vs_numpy": _ratio(mine, by_key.get(("numpy", "cpu", w.name)))})
    libraries = [lib for lib in LIBRARIES if any(lib == k[0] for k in jobs)]
    meta = {"devices": devices, "quick": args.quick, "cores": cores(), "libraries": libraries,
            "python": platform.python_version(), "numpy": np.__version__,
            "tensorlib": tensorlib.__version__, "statistic": "median"}
    if with_torch:
        meta["torch"] = _version("torch")
    meta["libraries_in_use"] = {"tensorlib": tensorlib_libraries(),
                                "torch": torch_libraries() if with_torch else None}
    return {"meta": meta, "results": results, "ratios": ratios}


def _fmt_time(s):
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def _cell(row):
    if row is None:
        return "-"
    if row["seconds"] is None:
        return "ERROR"
    text = _fmt_time(row["seconds"])
    if row.get("throughput") is not None:
        text += f" ({row['throughput']:.3g} {row['unit']})"
    return text + (" !" if row.get("error") else "")


def format_table(report, device):
    """One device's table: workload | tensorlib | torch | numpy | vs torch | vs numpy."""
    header = ["workload", "tensorlib", "torch", "numpy", "vs torch", "vs numpy"]
    lines = [header]
    rows = {(x["library"], x["device"], x["workload"]): x for x in report["results"]}
    for r in report["ratios"]:
        if r["device"] != device:
            continue
        where = {"tensorlib": device, "torch": r["torch_device"], "numpy": "cpu"}
        lines.append([r["workload"]] +
                     [_cell(rows.get((lib, where[lib], r["workload"]))) for lib in LIBRARIES] +
                     [f"{v:.2f}x" if v else "-" for v in (r["vs_torch"], r["vs_numpy"])])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = [" | ".join(c.ljust(wd) if i == 0 else c.rjust(wd)
                      for i, (c, wd) in enumerate(zip(line, widths))) for line in lines]
    out.insert(1, "-+-".join("-" * wd for wd in widths))
    return "\n".join(out)


def _print_report(report):
    m = report["meta"]
    print(f"tensorlib {m['tensorlib']} | numpy {m['numpy']} | torch {m.get('torch') or 'n/a'}"
          f" | cores {m['cores']}{' | quick' if m['quick'] else ''}")
    in_use = m.get("libraries_in_use")
    if in_use:
        print(format_libraries(in_use["tensorlib"], in_use["torch"]))
    print("time per call, median of repeats; vs X = X time / tensorlib time "
          "(>1: tensorlib faster)")
    for device in m["devices"]:
        torch_on = (f"torch on {_torch_device(device)}, " if "torch" in m["libraries"]
                    else "")
        print(f"\n== device {device} ({torch_on}numpy on the host) ==")
        print(format_table(report, device))


def main(argv=None):
    args = _parse(argv)
    if args.libraries:
        print(format_libraries(tensorlib_libraries(), torch_libraries()
                               if importlib.util.find_spec("torch") and not args.no_torch
                               else None))
        return 0
    if args.list:
        for w in workloads(quick=args.quick):
            print(f"{w.name:<22} {w.kind:<8} {w.family:<18} {w.description}")
        return 0
    try:
        report = run(args)
    except RuntimeError as exc:   # e.g. the requested device's backend is unavailable
        print(f"tensorlib-bench: {exc}", file=sys.stderr)
        return 2
    _print_report(report)
    errors = [r for r in report["results"] if r.get("error")]
    for r in errors:
        print(f"{r['library']} on {r['device']}, {r['workload']}: {r['error']}",
              file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    if args.plot:
        from tensorlib._bench.plot import plot_ratios
        plot_ratios(report, args.plot)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
