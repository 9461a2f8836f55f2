"""The registry of benchmark workloads: the one place `tensorlib-bench` learns what to run.

A *suite* is a function `suite(quick) -> [workload]` registered with `@register_suite`; the
op workloads (`ops.py`), the model workloads (`models.py`) and the compiled ones
(`compiled.py`, `mode = "compiled"`) are suites. To add one, register it and import its module
in `_load_builtin_suites` (each library runs in a worker process, which loads the suites from
there): the CLI, the JSON, the table and the plot pick it up with no other change.

A workload is any object with
- `name`, `family` (what `--only` also accepts, e.g. all sizes of matmul), `kind` ("op" or
  "model", also accepted by `--only`), `mode` ("eager" unless told otherwise), `description`;
- `libraries`: the library names that can run it ("tensorlib", "torch", "numpy");
- `unit` and `throughput(seconds)` (None when only time per call matters); optionally
  `per_step`, the number of operations in one step when the figure is time per operation;
- `prepare(library, module, device)`: build inputs/models on `device` with `module` (the
  imported library) and return `(step, check)`: `step()` is what is timed, `check()` runs it
  once and returns None or a message saying why the result is wrong.
"""

__all__ = ["register_suite", "workloads", "SUITES"]

SUITES = []


def register_suite(suite):
    """Add `suite(quick) -> [workload]` to what the CLI runs (in registration order)."""
    if suite not in SUITES:
        SUITES.append(suite)
    return suite


def workloads(quick=False):
    """Every registered workload in run order; `quick` gives the same names' small sizes
    (op workloads' sizes are part of their names, so those names differ)."""
    _load_builtin_suites()
    return [w for suite in SUITES for w in suite(quick)]


def _load_builtin_suites():
    from tensorlib._bench import compiled, models, ops  # noqa: F401 - importing registers them
    from tensorlib._bench import attention, vision  # noqa: F401
