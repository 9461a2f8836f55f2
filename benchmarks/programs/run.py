"""Run the corpus of real PyTorch programs (corpus.py) unchanged on tensorlib, and on PyTorch
where it is installed, and print a table: program, what it exercises, the result (passes, or
the last error line), both times.

    python benchmarks/programs/run.py --mirrors /work/.mirror [--only NAME ...] [--no-torch]
        [--markdown docs/programs.md] [--json results.json]

Mirrors are git repositories named `owner+name` in the mirrors folder (the `fetch` tool's
layout: `owner+name/repo`, a bare or a working-tree repository). Each program is extracted from
its mirror's HEAD into a fresh folder per library, so the two runs share nothing. tensorlib runs
a program through `python -m tensorlib.torch_compat`; PyTorch runs it with plain `python`."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import PROGRAMS, Program  # noqa: E402,F401 - Program: for callers building a corpus


def git_dir(mirrors, repo):
    """The mirror's git directory, or None when the repository was not fetched."""
    root = Path(mirrors) / repo.replace("/", "+") / "repo"
    for candidate in (root / ".git", root):
        if (candidate / "HEAD").exists():
            return candidate
    return None


def extract(mirrors, program, dest):
    """The program's folder from its mirror's HEAD, plus its data files, under dest. A blob the
    mirror lacks (mirrors may leave out their largest files) is skipped; a data entry can stand
    in for it."""
    source = git_dir(mirrors, program.repo)
    listing = subprocess.run(["git", f"--git-dir={source}", "ls-tree", "-r", "-z", "HEAD"]
                             + ([program.folder] if program.folder else []),
                             check=True, capture_output=True).stdout.decode()
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind != "blob" or mode == "120000":
            continue
        blob = subprocess.run(["git", f"--git-dir={source}", "cat-file", "blob", sha],
                              capture_output=True)
        if blob.returncode == 0:
            out = dest / path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(blob.stdout)
            if mode == "100755":
                out.chmod(0o755)
    for repo, path, target, *made_by in program.data:
        blob = subprocess.run(["git", f"--git-dir={git_dir(mirrors, repo)}", "show",
                               f"HEAD:{path}"], check=True, capture_output=True).stdout
        if made_by:                 # a stand-in made from the mirror's file (corpus.py)
            blob = made_by[0](blob)
        out = dest / program.folder / target
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(blob)
    return dest / program.folder


def has_blob(mirrors, repo, path):
    return subprocess.run(["git", f"--git-dir={git_dir(mirrors, repo)}", "cat-file", "-e",
                           f"HEAD:{path}"], capture_output=True).returncode == 0


def notebook_script(workdir, notebook):
    """A Jupyter notebook's code cells, in order, as one script beside it (IPython's `%` magics
    and `!` shell lines left out: they are not Python); returns the script's name."""
    cells = json.loads((workdir / notebook).read_text())["cells"]
    lines = []
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"]).splitlines()
        lines += [line for line in source if not line.lstrip().startswith(("%", "!"))] + [""]
    script = notebook.replace("/", "_").replace(".ipynb", "_cells.py")
    (workdir / script).write_text("\n".join(lines))
    return script


def interpreter_args(library, command):
    if library == "tensorlib":
        return [sys.executable, "-m", "tensorlib.torch_compat"] + command
    return [sys.executable] + command


def run_one(program, library, workdir, timeout, log):
    """(ok, seconds, last error line) for one program under one library."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", MPLBACKEND="Agg", **program.env)
    extra = [str(workdir / p) for p in program.pythonpath]
    if extra:
        env["PYTHONPATH"] = os.pathsep.join(extra + [p for p in [env.get("PYTHONPATH")] if p])
    start = time.perf_counter()
    for command in program.setup + [program.command]:
        if command[0].endswith(".ipynb"):
            command = [notebook_script(workdir, command[0])] + command[1:]
        with open(log, "a") as out:
            out.write(f"$ {' '.join(command)}\n")
            out.flush()
            try:
                proc = subprocess.run(interpreter_args(library, command), cwd=workdir, env=env,
                                      stdin=subprocess.DEVNULL, stdout=out,
                                      stderr=subprocess.STDOUT,
                                      timeout=max(1, timeout - (time.perf_counter() - start)))
            except subprocess.TimeoutExpired:
                return False, time.perf_counter() - start, f"timed out after {timeout} s"
        if proc.returncode != 0:
            return False, time.perf_counter() - start, last_error(log, proc.returncode)
    return True, time.perf_counter() - start, ""


def last_error(log, returncode):
    lines = [line.strip() for line in Path(log).read_text(errors="replace").splitlines()
             if line.strip()]
    for line in reversed(lines):
        if "Error" in line or "Exception" in line or "error:" in line:
            return line[:300]
    return (lines[-1][:300] if lines else "") + f" (exit status {returncode})"


def missing_packages(program):
    import importlib.util
    return [p for p in program.packages if importlib.util.find_spec(p) is None]


def run_corpus(programs, mirrors, names, with_torch, timeout, logs):
    import importlib.util
    with_torch = with_torch and importlib.util.find_spec("torch") is not None
    results = []
    for program in programs:
        if names and not any(n in program.name for n in names):
            continue
        row = {"name": program.name, "repo": program.repo, "exercises": program.exercises}
        absent = [r for r in {program.repo, *(d[0] for d in program.data)}
                  if git_dir(mirrors, r) is None]
        if absent:
            row.update(result=f"not run: mirror missing ({', '.join(absent)})")
            results.append(row)
            print(format_row(row), flush=True)
            continue
        lacking = [d[1] for d in program.data if not has_blob(mirrors, d[0], d[1])]
        if lacking:
            row.update(result=f"not run: needs a download ({', '.join(lacking)} is not in "
                              "the mirror)")
            results.append(row)
            print(format_row(row), flush=True)
            continue
        if program.needs:
            row.update(result=f"not run: needs {program.needs}")
            results.append(row)
            print(format_row(row), flush=True)
            continue
        if missing_packages(program):
            row.update(result=f"not run: needs {', '.join(missing_packages(program))}")
            results.append(row)
            print(format_row(row), flush=True)
            continue
        for library in ["tensorlib"] + (["torch"] if with_torch else []):
            root = Path(tempfile.mkdtemp(prefix=f"{library}-"))
            log = Path(logs) / f"{program.name.replace('/', '_').replace(' ', '_')}.{library}.log"
            log.write_text("")
            ok, seconds, error = run_one(program, library, extract(mirrors, program, root),
                                         program.timeout if timeout is None else timeout, log)
            row[library] = {"ok": ok, "seconds": round(seconds, 1), "error": error}
            shutil.rmtree(root, ignore_errors=True)
        row["result"] = "passes" if row["tensorlib"]["ok"] else row["tensorlib"]["error"]
        results.append(row)
        print(format_row(row), flush=True)
    return results


def format_row(row):
    times = ""
    if "tensorlib" in row:
        times = f"{row['tensorlib']['seconds']:.1f} s"
        if "torch" in row:
            times += f" (torch {row['torch']['seconds']:.1f} s" \
                     + ("" if row["torch"]["ok"] else ", failed") + ")"
    return f"{row['name']:<42} {row['result'][:90]:<90} {times}"


def markdown(results):
    lines = ["| program | source | exercises | result | tensorlib | PyTorch |",
             "|---|---|---|---|---|---|"]
    for row in results:
        ours = f"{row['tensorlib']['seconds']:.1f} s" if "tensorlib" in row else ""
        theirs = (f"{row['torch']['seconds']:.1f} s" + ("" if row["torch"]["ok"] else " (failed)")
                  if "torch" in row else "")
        result = row["result"].replace("|", "\\|")
        lines.append(f"| {row['name']} | {row['repo']} | {row['exercises']} | {result} | "
                     f"{ours} | {theirs} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", default=os.environ.get("TENSORLIB_MIRRORS", "/work/.mirror"))
    parser.add_argument("--only", nargs="*", default=[], help="substrings of program names")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch runs")
    parser.add_argument("--timeout", type=int, default=None, help="seconds per program")
    parser.add_argument("--logs", default="programs-logs", help="folder for each run's output")
    parser.add_argument("--json", help="write the results as JSON")
    parser.add_argument("--markdown", help="write the table as markdown")
    args = parser.parse_args(argv)
    Path(args.logs).mkdir(parents=True, exist_ok=True)
    results = run_corpus(PROGRAMS, args.mirrors, args.only, not args.no_torch, args.timeout, args.logs)
    passed = sum(row["result"] == "passes" for row in results)
    print(f"{passed} of {len(results)} programs pass on tensorlib")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    if args.markdown:
        Path(args.markdown).write_text(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
