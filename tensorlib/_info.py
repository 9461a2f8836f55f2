"""What `tensorlib info` reports: versions, the libraries doing the heavy work, every backend
found through the entry points (status, devices, why not, what to install) and the kernel cache.

`collect()` gathers plain data (also what a bug report should carry); `format_report()`
turns it into the text the command prints."""
import os
import platform
import sys


def _numpy_blas():
    """The BLAS numpy was built against, e.g. "scipy-openblas 0.3.31" (None if unknown)."""
    import numpy as np
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]
        blas = deps["blas"]
        return f"{blas['name']} {blas.get('version', '')}".strip()
    except Exception:   # numpy < 1.25 has no dict mode; the report just says less
        return None


def _cpu_libraries():
    """Which BLAS the CPU backend's GEMM calls and how its convolutions run."""
    try:
        from tensorlib_cpu import gemm, onednn_conv
    except ImportError as exc:
        return {"gemm": f"unknown ({exc})", "conv2d": "unknown"}
    return {"gemm": gemm.describe(),
            "gemm_low_precision": (
                f"{gemm.LOW_PRECISION} for {', '.join(sorted(gemm.LOW_PRECISION_DTYPES))}"
                if gemm.LOW_PRECISION_DTYPES else "float32 copies through that BLAS"),
            "conv2d": onednn_conv.describe()}


def _speedups():
    """What to install to make the CPU backend faster, one line per absent optional wheel
    (x86-64 Linux only: the mkl and onednn-cpu-gomp wheels exist nowhere else)."""
    if not (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")):
        return []
    try:
        from tensorlib_cpu import blas_choice, onednn
    except ImportError:
        return []
    hints = []
    # blas_choice.requested() picks MKL for these CPUs once the wheel is there; oneDNN's
    # sgemm (a default dependency) is as fast on Intel and faster on Zen 4, so MKL is only
    # hinted without it
    intel = blas_choice.cpu_vendor() == "GenuineIntel"
    wants_mkl = onednn.find() is None and (intel or blas_choice.split_width_avx512())
    if wants_mkl and blas_choice.find_mkl() is None and not os.environ.get(blas_choice.ENV):
        hints.append("matmul, linear and conv GEMMs: install mkl (pip install "
                     "\"tensorlib[mkl]\") for MKL (on Intel Xeons 0.9-1.1x PyTorch, against "
                     "0.6-0.94x on OpenBLAS)")
    if onednn.find() is None:
        hints.append("conv2d forward and backward and, on Intel and AMD Zen 4, float32 GEMMs: "
                     "install onednn-cpu-gomp (a default dependency on x86-64 Linux; "
                     "pip install onednn-cpu-gomp) for oneDNN (else im2col + OpenBLAS)")
    return hints


def _opencl_details():
    """Per usable OpenCL device: what it is and whether it is really the host CPU (PoCL);
    plus the listed devices that were skipped, with the reason."""
    from tensorlib_opencl import device
    usable = [f"{d.describe()}{' [CPU device]' if d.is_cpu else ''}" for d in device.devices()]
    return usable, [f"{name}: {why}" for name, why in device.skipped()]


def _cpu_model():
    """The processor's marketing name (Linux), else what `platform` knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _devices(record):
    """(device descriptions, skipped devices) of an available backend."""
    backend = record.backend
    if record.name == "opencl":
        return _opencl_details()
    if record.name == "cpu":
        return [f"{_cpu_model()}, {os.cpu_count()} logical cores"], []
    names = []
    for index in range(backend.device_count()):
        try:
            names.append(backend.device_name(index))
        except Exception as exc:  # a plugin's naming bug must not hide the rest
            names.append(f"(name unavailable: {exc})")
    return names, []


def _backends():
    import tensorlib
    out = []
    for record in tensorlib.backends.list():
        entry = {"name": record.name, "status": record.status,
                 "origin": "first-party" if record.first_party else "third-party",
                 "entry_point": record.entry_point.value, "reason": record.reason,
                 "install_hint": record.install_hint if record.status != "available" else None,
                 "traceback": record.traceback, "devices": [], "skipped_devices": []}
        if record.status == "available":
            entry["devices"], entry["skipped_devices"] = _devices(record)
            if hasattr(record.backend, "info"):          # e.g. cuda: compiler, GEMM library
                entry["details"] = list(record.backend.info())
        out.append(entry)
    return out


def _kernel_cache():
    from tensorlib.codegen import cache
    directory = cache.default_dir()
    files = size = 0
    for root, _, names in os.walk(directory):
        for name in names:
            if name.endswith(".bin"):
                files += 1
                try:
                    size += os.path.getsize(os.path.join(root, name))
                except OSError:
                    pass
    return {"directory": directory, "enabled": not cache.disabled(), "entries": files,
            "bytes": size}


def collect():
    import numpy as np
    import tensorlib
    return {"tensorlib": tensorlib.__version__, "plugin_api": tensorlib.backends.API_VERSION,
            "python": f"{platform.python_version()} ({sys.executable})",
            "platform": platform.platform(), "numpy": np.__version__,
            "numpy_blas": _numpy_blas(), "cpu_threads": tensorlib.get_num_threads(),
            "cpu_libraries": _cpu_libraries(), "faster_with": _speedups(),
            "backends": _backends(),
            "kernel_cache": _kernel_cache()}


def _size(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def format_report(info, tracebacks=False):
    lines = [f"tensorlib {info['tensorlib']} (plugin API {info['plugin_api']})",
             f"python    {info['python']}",
             f"platform  {info['platform']}",
             f"numpy     {info['numpy']}" + (f", BLAS {info['numpy_blas']}"
                                              if info["numpy_blas"] else ""),
             f"cpu       {info['cpu_threads']} kernel threads",
             f"  GEMM    {info['cpu_libraries']['gemm']}",
             f"  bf16/fp16 GEMM  {info['cpu_libraries'].get('gemm_low_precision', 'unknown')}",
             f"  conv2d  {info['cpu_libraries']['conv2d']}"]
    lines += [f"  faster  {hint}" for hint in info.get("faster_with", ())]
    lines.append("backends (entry point group tensorlib.backends):")
    for b in info["backends"]:
        lines.append(f"  {b['name']:<10} {b['status']:<12} {b['origin']:<12} {b['entry_point']}")
        for i, dev in enumerate(b["devices"]):
            lines.append(f"{'':15}{b['name']}:{i}  {dev}")
        for dev in b["skipped_devices"]:
            lines.append(f"{'':15}skipped: {dev}")
        for extra in b.get("details", ()):
            lines.append(f"{'':15}{extra}")
        if b["reason"]:
            lines.append(f"{'':15}reason: {b['reason']}")
        if b["install_hint"]:
            lines.append(f"{'':15}to use it: {b['install_hint']}")
        if tracebacks and b["traceback"]:
            lines.append(b["traceback"])
    cache = info["kernel_cache"]
    lines.append(f"kernel cache  {cache['directory']}: {cache['entries']} entries, "
                 f"{_size(cache['bytes'])}" + ("" if cache["enabled"] else
                                              " (disabled: TENSORLIB_DISABLE_KERNEL_CACHE)"))
    return "\n".join(lines)
