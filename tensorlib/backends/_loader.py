"""Finds backends through the entry point group ``tensorlib.backends`` and imports each one
lazily, on first use of its device type or when the backends are listed. A backend that is
missing a dependency or raises while loading is recorded (reason and traceback), never fatal.

Environment:
  TENSORLIB_BACKEND_AUTOLOAD=0       ignore third-party backends (first-party ones stay)
  TENSORLIB_DISABLE_BACKENDS=a,b     ignore the named backends
"""
import importlib.metadata
import os
import traceback

from tensorlib._C import device as _device_mod
from tensorlib._C import dispatch
from tensorlib.backends.interface import API_VERSION

FIRST_PARTY = ("cpu", "opencl", "cuda")
GROUP = "tensorlib.backends"
BUILT_IN = {"meta": "tensorlib._meta:backend"}     # part of tensorlib itself, no entry point


class _BuiltIn:
    """The entry-point face of a built-in backend (name, value, load)."""

    def __init__(self, name, value):
        self.name, self.value = name, value

    def load(self):
        module, attr = self.value.split(":")
        return getattr(importlib.import_module(module), attr)


class BackendRecord:
    """One entry point and what became of it: status is 'not loaded', 'available',
    'unavailable', 'broken' or 'disabled'."""

    def __init__(self, name, entry_point, first_party):
        self.name = name
        self.entry_point = entry_point
        self.first_party = first_party
        self.status = "not loaded"
        self.reason = None
        self.traceback = None
        self.backend = None
        self.install_hint = None

    @property
    def value(self):
        return self.entry_point.value if self.entry_point is not None else None

    def __repr__(self):
        why = f", reason={self.reason!r}" if self.reason else ""
        return f"<backend {self.name!r}: {self.status}{why}>"


class Loader:
    def __init__(self):
        self.records = {}
        self._registered = set()
        self.discover()

    def discover(self):
        """Read the entry points (no backend module is imported here)."""
        self.records = {}
        self._registered = set()
        autoload = os.environ.get("TENSORLIB_BACKEND_AUTOLOAD", "1") != "0"
        disabled = {n.strip() for n in os.environ.get("TENSORLIB_DISABLE_BACKENDS", "").split(",")
                    if n.strip()}
        for ep in importlib.metadata.entry_points(group=GROUP):
            if ep.name in self.records:
                continue                       # first installation wins, like sys.path
            dist = getattr(ep, "dist", None)
            first_party = ep.name in FIRST_PARTY and (dist is None or dist.name == "tensorlib")
            record = BackendRecord(ep.name, ep, first_party)
            if ep.name in disabled:
                record.status, record.reason = "disabled", "TENSORLIB_DISABLE_BACKENDS names it"
            elif not autoload and not first_party:
                record.status = "disabled"
                record.reason = "TENSORLIB_BACKEND_AUTOLOAD=0 turns third-party backends off"
            self.records[ep.name] = record
        for name, value in BUILT_IN.items():
            self.records.setdefault(name, BackendRecord(name, _BuiltIn(name, value), True))

    def check_known(self, kind):
        if kind not in self.records:
            known = ", ".join(sorted(self.records)) or "none"
            raise RuntimeError(f"Unknown device type '{kind}'. Known device types: {known}. "
                               f"Backends register through the '{GROUP}' entry point group.")

    def _import(self, record):
        try:
            backend = record.entry_point.load()
        except Exception as exc:            # a plugin's failure is data, never fatal
            record.status = "broken"
            record.reason = f"{type(exc).__name__}: {exc}"
            record.traceback = traceback.format_exc()
            return
        record.backend = backend
        record.install_hint = getattr(backend, "install_hint", None)
        if getattr(backend, "device_type", None) != record.name:
            record.status = "broken"
            record.reason = (f"entry point '{record.name}' gives a backend whose device_type "
                             f"is {getattr(backend, 'device_type', None)!r}")
            return
        version = getattr(backend, "api_version", None)
        if version != API_VERSION:
            record.status = "broken"
            record.reason = (f"targets plugin API version {version}; this tensorlib provides "
                             f"version {API_VERSION}")
            return
        try:
            reason = backend.unavailable_reason()
        except Exception as exc:
            record.status = "broken"
            record.reason = f"unavailable_reason() raised {type(exc).__name__}: {exc}"
            record.traceback = traceback.format_exc()
            return
        record.status = "available" if reason is None else "unavailable"
        record.reason = reason

    def record(self, kind):
        self.check_known(kind)
        record = self.records[kind]
        if record.status == "not loaded":
            self._import(record)
        return record

    def load(self, kind):
        """The backend object of `kind`, or RuntimeError saying why it can't be used."""
        record = self.record(kind)
        if record.status == "available":
            return record.backend
        msg = f"The '{kind}' backend is {record.status}: {record.reason}"
        if record.install_hint:
            msg += f". To use it: {record.install_hint}"
        raise RuntimeError(msg)

    def kernel_table(self, kind):
        """The dispatch table of `kind`, filled by the backend's register() the first time."""
        table = dispatch.table(kind)
        if kind not in self._registered:
            self.load(kind).register(table)
            self._registered.add(kind)
        return table

    def all_records(self):
        for name in self.records:
            self.record(name)
        return dict(self.records)


LOADER = Loader()
_device_mod.set_loader(LOADER)
