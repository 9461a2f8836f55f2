"""`tensorlib-bench`: time tensorlib, PyTorch and numpy side by side in one run.

These machines are noisy, so only ratios taken within the same run mean anything:
`vs torch` = torch_time / tensorlib_time (above 1 = tensorlib faster), `vs numpy` likewise."""
import argparse
import json
import os
import platform
import sys

import numpy as np

from tensorlib._bench.ops import LIBRARIES, workloads
from tensorlib._bench.timer import measure

__all__ = ["main", "run"]


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _parse(argv):
    p = argparse.ArgumentParser(prog="tensorlib-bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cpu", help="tensorlib device type (default cpu)")
    p.add_argument("--only", metavar="NAME[,NAME]",
                   help="workload names or families to run (e.g. matmul,add_1M)")
    p.add_argument("--quick", action="store_true", help="tiny sizes and few repeats (tests)")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch comparison")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    return p.parse_args(argv)


def _libraries(args, tl):
    """Per library: how to turn a numpy array into its input, and how to read a result back."""
    libs = {}
    if args.device == "cpu":
        libs["tensorlib"] = (tl.from_numpy, lambda r: r.numpy())
    else:
        libs["tensorlib"] = (lambda a: tl.from_numpy(a).to(args.device),
                             lambda r: r.cpu().numpy())
    if not args.no_torch and args.device == "cpu":   # torch comparisons only for cpu
        try:
            import torch
        except ImportError:
            torch = None
        if torch is not None:
            torch.set_num_threads(_cores())
            libs["torch"] = (torch.from_numpy, lambda r: r.numpy())
    libs["numpy"] = (lambda a: a, np.asarray)
    return libs


def _error(exc):
    return f"{type(exc).__name__}: {exc}"


def _bench_one(w, lib, arrays, convert, to_numpy, ref, sync, quick):
    """One (workload, library) row: check the result against numpy, then time it."""
    row = {"workload": w.name, "library": lib, "seconds": None, "median": None,
           "throughput": None, "unit": w.unit}
    try:
        fn = w.op(lib, *[convert(a) for a in arrays])
        got = np.asarray(to_numpy(fn()))
        if got.shape != ref.shape or not np.allclose(got, ref, rtol=w.rtol, atol=w.atol):
            diff = (np.max(np.abs(got.astype(np.float64) - ref)) if got.shape == ref.shape
                    else f"shape {got.shape} != {ref.shape}")
            row["error"] = f"wrong result vs numpy (max abs diff {diff})"
        t = measure(fn, sync=sync if lib == "tensorlib" else None,
                    target=0.01 if quick else 0.1, repeats=2 if quick else 5,
                    budget=0.1 if quick else 3.0)
    except Exception as exc:  # a failing op is a result to report, not a crash
        row["error"] = _error(exc)
        return row
    row.update(seconds=t.best, median=t.median, throughput=w.throughput(t.best),
               iterations=t.number, repeats=t.repeats)
    return row


def _ratio(rows, other):
    mine, theirs = rows.get("tensorlib"), rows.get(other)
    if not mine or not theirs or not mine["seconds"] or not theirs["seconds"]:
        return None
    return theirs["seconds"] / mine["seconds"]


def run(args):
    """Run the selected workloads; returns the JSON-ready report."""
    import tensorlib as tl

    sync = None
    if args.device != "cpu":
        sync = tl.backends.get(args.device).synchronize
    libs = _libraries(args, tl)
    chosen = workloads(quick=args.quick)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if not any(w.matches(n) for w in chosen)]
        if unknown:
            raise SystemExit(f"tensorlib-bench: unknown workload(s) {', '.join(unknown)}; "
                             f"see --list")
        chosen = [w for w in chosen if any(w.matches(n) for n in names)]
    results, ratios = [], []
    for w in chosen:
        arrays = w.inputs()
        ref = np.asarray(w.op("numpy", *arrays)(), dtype=np.float64)
        by_lib = {}
        for lib, (convert, to_numpy) in libs.items():
            row = _bench_one(w, lib, arrays, convert, to_numpy, ref, sync, args.quick)
            results.append(row)
            by_lib[lib] = row
        ratios.append({"workload": w.name, "description": w.description,
                       "vs_torch": _ratio(by_lib, "torch"), "vs_numpy": _ratio(by_lib, "numpy")})
    meta = {"device": args.device, "quick": args.quick, "cores": _cores(),
            "libraries": list(libs), "python": platform.python_version(),
            "numpy": np.__version__, "tensorlib": getattr(tl, "__version__", None)}
    if "torch" in libs:
        import torch
        meta.update(torch=torch.__version__, torch_threads=torch.get_num_threads())
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
    if row["throughput"] is not None:
        text += f" ({row['throughput']:.3g} {row['unit']})"
    return text + (" !" if row.get("error") else "")


def format_table(report):
    """The stdout table: workload | tensorlib | torch | numpy | vs torch | vs numpy."""
    header = ["workload", "tensorlib", "torch", "numpy", "vs torch", "vs numpy"]
    lines = [header]
    for r in report["ratios"]:
        rows = {x["library"]: x for x in report["results"] if x["workload"] == r["workload"]}
        lines.append([r["workload"]] + [_cell(rows.get(lib)) for lib in LIBRARIES] +
                     [f"{v:.2f}x" if v else "-" for v in (r["vs_torch"], r["vs_numpy"])])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = [" | ".join(c.ljust(wd) if i == 0 else c.rjust(wd)
                      for i, (c, wd) in enumerate(zip(line, widths))) for line in lines]
    out.insert(1, "-+-".join("-" * wd for wd in widths))
    return "\n".join(out)


def main(argv=None):
    args = _parse(argv)
    if args.list:
        for w in workloads(quick=args.quick):
            print(f"{w.name:<22} {w.family:<18} {w.description}")
        return 0
    try:
        report = run(args)
    except RuntimeError as exc:   # e.g. the requested device's backend is unavailable
        print(f"tensorlib-bench: {exc}", file=sys.stderr)
        return 2
    m = report["meta"]
    print(f"tensorlib {m['tensorlib']} | numpy {m['numpy']} | torch {m.get('torch', 'n/a')}"
          f" (threads {m.get('torch_threads', '-')}) | device {m['device']} | cores {m['cores']}"
          f"{' | quick' if m['quick'] else ''}")
    print("time per call, best of repeats; vs X = X time / tensorlib time (>1: tensorlib faster)")
    print(format_table(report))
    errors = [r for r in report["results"] if r.get("error")]
    for r in errors:
        print(f"{r['library']} {r['workload']}: {r['error']}", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
