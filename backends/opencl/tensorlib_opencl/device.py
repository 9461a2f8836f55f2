"""OpenCL devices: discovery in a stable order, selection by environment, one context and one
in-order queue per device.

`opencl:N` numbers the usable devices of all platforms in the ICD loader's platform order, then
each platform's device order. A device is usable when a one-line kernel builds on it (some
drivers list devices they cannot compile for: e.g. a PoCL whose LLVM does not know the host
CPU fails with "unknown target CPU 'generic'"); the others are listed in `skipped()` with the
reason. TENSORLIB_OPENCL_DEVICE picks devices: a comma-separated list of `P:D` (platform P's
device D), `P` (all devices of platform P), or text matched (case-insensitively) against
"<platform name> <platform version> <device name>".
"""
import os
import threading

_PROBE = "__kernel void tl_probe(__global int* x) { x[get_global_id(0)] += 1; }"
_lock = threading.Lock()
_state = None


class Device:
    """One OpenCL device with its context, queue and capabilities."""

    def __init__(self, cl, platform, device, where):
        self.cl = cl
        self.platform = platform
        self.device = device
        self.where = where                        # (platform index, device index)
        self.name = device.name.strip()
        extensions = device.extensions.split()
        self.fp64 = "cl_khr_fp64" in extensions or device.double_fp_config != 0
        self.fp16 = "cl_khr_fp16" in extensions
        self.max_wg = device.max_work_group_size
        self.compute_units = max(1, device.max_compute_units)
        self.global_mem = device.global_mem_size
        self.max_alloc = device.max_mem_alloc_size
        self.is_cpu = bool(device.type & cl.device_type.CPU)
        self.identity = "|".join([platform.name, platform.version, device.name, device.version,
                                  device.driver_version])
        self._context = None
        self._queue = None

    @property
    def context(self):
        if self._context is None:
            self._context = self.cl.Context([self.device])
        return self._context

    @property
    def queue(self):
        if self._queue is None:
            self._queue = self.cl.CommandQueue(self.context, self.device)
        return self._queue

    def describe(self):
        return f"{self.name} ({self.platform.name}, {self.platform.version.strip()})"


def _selected(entries, spec):
    """Filter [(p, d, platform, device)] by a TENSORLIB_OPENCL_DEVICE spec."""
    chosen = []
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        for e in entries:
            p, d, platform, device = e
            label = f"{platform.name} {platform.version} {device.name}".lower()
            if item.replace(":", "").isdigit():
                parts = [int(v) for v in item.split(":")]
                hit = parts[0] == p and (len(parts) == 1 or parts[1] == d)
            else:
                hit = item.lower() in label
            if hit and e not in chosen:
                chosen.append(e)
    return chosen


def _discover():
    import pyopencl as cl
    entries = []
    for p, platform in enumerate(cl.get_platforms()):
        try:
            devices = platform.get_devices()
        except cl.Error:
            continue
        entries.extend((p, d, platform, device) for d, device in enumerate(devices))
    spec = os.environ.get("TENSORLIB_OPENCL_DEVICE", "").strip()
    if spec:
        entries = _selected(entries, spec)
    usable, skipped = [], []
    for p, d, platform, device in entries:
        dev = Device(cl, platform, device, (p, d))
        try:
            cl._cl._Program(dev.context, _PROBE).build(b"", [device])
        except Exception as exc:
            text = str(exc).strip().splitlines()
            log = [line for line in text if "error" in line.lower()] or text[-1:]
            skipped.append((dev.describe(), "cannot build kernels: " + " / ".join(log)[:300]))
            continue
        usable.append(dev)
    return usable, skipped


def _get():
    global _state
    if _state is None:
        with _lock:
            if _state is None:
                _state = _discover()
    return _state


def devices():
    """The usable devices, in `opencl:N` order."""
    return _get()[0]


def skipped():
    """[(device description, why it is not used)] for listed devices that cannot be used."""
    return _get()[1]


def get(index):
    found = devices()
    if index is None:
        index = 0
    if not 0 <= index < len(found):
        raise RuntimeError(f"opencl:{index} does not exist: {len(found)} OpenCL device(s)")
    return found[index]
