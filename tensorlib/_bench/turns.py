"""The libraries' worker processes (`worker.py`), taken in turns: every worker prepares a
workload, then each gives one timed repeat in turn until all have their repeats.

Timing one library's process after the other let a spell of load from another process
land on one side only: on the shared 2-core AMD EPYC, `sum(-1)` of a 64 MB matrix read
0.54x in one run and 0.98-1.02x in the next two, and the compiled chain 0.78x then
1.23-1.65x. In turns, each library's median is taken over the same spells.

Only one worker runs at a time: the others wait on their pipe. A worker's threads may go
on spinning after its turn (OpenBLAS's, under numpy, for about 0.1 s: tensorlib's turn
after numpy's found a core taken and ran its GEMMs on one thread), so each turn waits
until the last worker's threads have gone idle (`_settle`)."""
import glob
import json
import subprocess
import sys
import tempfile
import time

__all__ = ["run_in_turns"]

POLL, QUIET, LONGEST = 0.01, 0.001, 1.0   # seconds: see _settle


def _cpu_seconds(pid):
    """CPU time of all of a process's threads (schedstat: nanoseconds, not 10 ms ticks);
    None where /proc cannot say."""
    total = 0
    try:
        for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
            with open(path) as f:
                total += int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total * 1e-9


def _settle(pid):
    """Wait until the process used under QUIET CPU seconds in a POLL (its threads asleep),
    at most LONGEST seconds; where /proc cannot say, one POLL."""
    before = _cpu_seconds(pid)
    waited = 0.0
    while waited < LONGEST:
        time.sleep(POLL)
        waited += POLL
        now = _cpu_seconds(pid)
        if before is None or now is None or now - before < QUIET:
            return
        before = now


class _Worker:
    """One library on one device in its own process, spoken to in JSON lines."""

    def __init__(self, library, device, quick, env):
        self.library, self.device = library, device
        self.err = tempfile.TemporaryFile("w+")
        cmd = [sys.executable, "-m", "tensorlib._bench.worker", library, device]
        self.proc = subprocess.Popen(cmd + (["--quick"] if quick else []), env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err, text=True)
        self.failure = None
        first = self._read()
        if first is not None and "failed" in first:
            self.failure = first["failed"]

    def _read(self):
        line = self.proc.stdout.readline()
        if line:
            return json.loads(line)
        self.proc.wait()
        self.err.seek(0)
        lines = self.err.read().strip().splitlines()
        self.failure = (f"worker process failed: "
                        f"{lines[-1] if lines else f'exit code {self.proc.returncode}'}")
        return None

    def ask(self, verb, name):
        """The answer to one command, or None once the process has failed."""
        if self.failure:
            return None
        try:
            self.proc.stdin.write(json.dumps({verb: name}) + "\n")
            self.proc.stdin.flush()
        except OSError:
            pass                # it died: reading says why
        return self._read()

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()
        self.err.close()


def _failed_row(worker, name):
    return {"workload": name, "library": worker.library, "device": worker.device,
            "seconds": None, "best": None, "median": None, "throughput": None,
            "unit": None, "error": worker.failure}


class _Turns:
    """The workers, spoken to one at a time; before a worker is asked anything, the one
    asked last has settled (its calibration and finishing are timed too)."""

    def __init__(self):
        self.last = None

    def ask(self, worker, verb, name):
        if self.last is not None and self.last is not worker and not self.last.failure:
            _settle(self.last.proc.pid)
        self.last = worker
        return worker.ask(verb, name)

    def time_one(self, workers, name):
        """{worker: row} for one workload, the repeats taken in turns."""
        rows, pending = {}, []
        for w in workers:
            answer = self.ask(w, "prepare", name)
            if answer is None:
                rows[w] = _failed_row(w, name)
            elif answer["row"] is not None:
                rows[w] = answer["row"]
            else:
                pending.append(w)
        sampling = list(pending)
        while sampling:
            for w in list(sampling):
                answer = self.ask(w, "repeat", name)
                if answer is None or answer["done"]:
                    sampling.remove(w)
        for w in pending:
            answer = self.ask(w, "finish", name)
            rows[w] = _failed_row(w, name) if answer is None else answer["row"]
        return rows


def run_in_turns(jobs, quick, env, progress):
    """Rows for {(library, device): [workload names]}: one worker process per job, each
    workload timed in all of its jobs' workers before the next begins."""
    workers = {}
    try:
        for (library, device) in jobs:
            workers[library, device] = _Worker(library, device, quick, env)
        order = []
        for names in jobs.values():
            order += [n for n in names if n not in order]
        rows, turns = {}, _Turns()
        for name in order:
            having = [workers[key] for key, names in jobs.items() if name in names]
            for w, row in turns.time_one(having, name).items():
                rows[w.library, w.device, name] = row
                progress.step(f"{w.library} {w.device} {name}")
        return [rows[key + (name,)] for key, names in jobs.items() for name in names]
    finally:
        for w in workers.values():
            w.close()
