"""Regenerate the README's benchmark table: several `tensorlib-bench` runs, one table.

One run on a shared machine is noise; the README states, per workload, the median time of
each library over the runs and the range of the same-run ratios (torch time / tensorlib
time), with the machine, the date, the load average and the command that made it.

    python benchmarks/readme_table.py                 # 3 runs, print the block
    python benchmarks/readme_table.py --runs 5 --write-readme
    python benchmarks/readme_table.py --keep reports/      # and each run's JSON report

`--write-readme` replaces what lies between the README's `<!-- bench-table:start -->` and
`<!-- bench-table:end -->` markers. Needs PyTorch installed (the ratios are against it)."""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

from tensorlib._info import _cpu_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
START, END = "<!-- bench-table:start -->", "<!-- bench-table:end -->"


def load_average():
    try:
        return "{:.2f}".format(os.getloadavg()[0])
    except OSError:
        return "unknown"


def run_bench(device, only, keep=None):
    """One `tensorlib-bench` run; returns its JSON (also left at `keep` when given). It runs
    in a temporary folder: `python -m` puts the working folder first on sys.path, and in a
    clone installed with `pip install .` the unbuilt package there hid the installed one."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.abspath(keep) if keep else os.path.join(tmp, "bench.json")
        cmd = [sys.executable, "-m", "tensorlib._bench.cli", "--device", device, "--json", out]
        if only:
            cmd += ["--only", only]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=tmp)
        with open(out) as f:
            return json.load(f)


def summarize(runs, device):
    """Rows (workload, tensorlib median s, torch median s, lowest ratio, highest ratio) in
    the order of the first run, for workloads every run timed on both libraries."""
    times, ratios, order = {}, {}, []
    for data in runs:
        for r in data["results"]:
            if r["device"] != device or r.get("seconds") is None:
                continue
            key = r["workload"]
            if key not in order:
                order.append(key)
            times.setdefault((key, r["library"]), []).append(r["seconds"])
        for r in data["ratios"]:
            if r["device"] == device and r.get("vs_torch"):
                ratios.setdefault(r["workload"], []).append(r["vs_torch"])
    rows = []
    for key in order:
        mine, theirs = times.get((key, "tensorlib")), times.get((key, "torch"))
        got = ratios.get(key, [])
        if mine and theirs and len(got) == len(runs):
            rows.append((key, statistics.median(mine), statistics.median(theirs), min(got),
                         max(got)))
    return rows


def human(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if seconds >= scale:
            return "{:.3g} {}".format(seconds / scale, unit)
    return "{:.3g} ns".format(seconds / 1e-9)


def render(rows, runs, device, command, machine, when, loads):
    width = max(len("workload"), *(len(r[0]) for r in rows)) if rows else 8
    lines = [f"{runs} runs of `tensorlib-bench --device {device}` on {machine}, {when}, load "
             f"average {loads[0]} before and {loads[1]} after; regenerate with "
             f"`{command}`. Times are medians over the runs; the last column is the range of "
             f"the same-run ratios (PyTorch time / tensorlib time, above 1: tensorlib faster).",
             "", "```",
             f"{'workload'.ljust(width)} | {'tensorlib':>10} | {'torch':>10} | vs torch",
             f"{'-' * width}-+-{'-' * 10}-+-{'-' * 10}-+-{'-' * 12}"]
    for name, mine, theirs, low, high in rows:
        spread = f"{low:.2f}x" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}-{high:.2f}x"
        lines.append(f"{name.ljust(width)} | {human(mine):>10} | {human(theirs):>10} | {spread}")
    lines.append("```")
    return "\n".join(lines)


def write_readme(block):
    with open(README) as f:
        text = f.read()
    if START not in text or END not in text:
        raise SystemExit(f"{README} has no {START} ... {END} markers")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    with open(README, "w") as f:
        f.write(f"{head}{START}\n{block}\n{END}{tail}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="tensorlib-bench runs (default 3)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--only", default="", help="passed to tensorlib-bench --only")
    parser.add_argument("--write-readme", action="store_true",
                        help="replace the table between the README's markers")
    parser.add_argument("--keep", metavar="DIR",
                        help="also keep each run's JSON report as DIR/run-N.json")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    try:
        import torch  # noqa: F401  (only to say early that the ratios need it)
    except ImportError:
        raise SystemExit("readme_table: PyTorch is not installed (pip install torch): the "
                         "table's ratios are against it")
    before = load_average()
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    runs = [run_bench(args.device, args.only,
                      os.path.join(args.keep, f"run-{i + 1}.json") if args.keep else None)
            for i in range(args.runs)]
    after = load_average()
    command = "python benchmarks/readme_table.py" + (
        f" --runs {args.runs}" if args.runs != 3 else "") + " --write-readme"
    when = datetime.date.today().isoformat()
    block = render(summarize(runs, args.device), args.runs, args.device, command,
                   f"{_cpu_model()} ({os.cpu_count()} logical cores)", when, (before, after))
    print(block)
    if args.write_readme:
        write_readme(block)


if __name__ == "__main__":
    main()
