"""The plugin host: which backends exist, their status, and why one is unavailable.

``tensorlib.backends.list()`` loads every backend found and returns its records;
``why_unavailable(name)`` gives the reason (and traceback for a broken plugin).

The submodules cpu, cudnn, cuda, mps, mkldnn, mkl and openmp answer what PyTorch programs ask of
``torch.backends`` (switches and availability); they are not plugins."""
from tensorlib.backends._loader import LOADER, GROUP
from tensorlib.backends._fallback import set_cpu_fallback, cpu_fallback_enabled
from tensorlib.backends.interface import API_VERSION, Backend, COMPOSITES, PRIMITIVES
from tensorlib.backends import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp  # noqa: F401


def list():  # noqa: A001 - the name users expect
    """Every backend found through the entry points, loaded, with status and reason."""
    return [record for record in LOADER.all_records().values()]


def available():
    """Names of the device types that can compute now (not `meta`, which holds no data)."""
    return [r.name for r in list() if r.status == "available" and r.name != "meta"]


def why_unavailable(name):
    record = LOADER.record(name)
    if record.status == "available":
        return None
    text = record.reason or record.status
    if record.traceback:
        text += "\n" + record.traceback
    return text


def get(name):
    """The backend object of a device type (RuntimeError when it can't be used)."""
    return LOADER.load(name)


def rediscover():
    """Read the entry points again (after installing a plugin into a running process)."""
    LOADER.discover()


def op_coverage(name):
    """(implemented, missing) primitive names for a backend: what `tensorlib info --ops` shows."""
    table = LOADER.kernel_table(name)
    have = sorted(op for op in PRIMITIVES if op in table)
    missing = sorted(op for op in PRIMITIVES if op not in table)
    return have, missing


def composite_coverage(name):
    """(implemented, not implemented) names of the optional COMPOSITES for a backend: which
    one-call kernels it brings; the others take the framework's reference path."""
    table = LOADER.kernel_table(name)
    have = sorted(op for op in COMPOSITES if op in table)
    return have, sorted(op for op in COMPOSITES if op not in table)


__all__ = ["API_VERSION", "Backend", "PRIMITIVES", "GROUP", "list", "available",
           "why_unavailable", "get", "rediscover", "op_coverage", "composite_coverage", "set_cpu_fallback",
           "cpu_fallback_enabled"]
