"""Which libraries do the heavy work on each side of a `tensorlib-bench` run: tensorlib's GEMM
and convolution paths and its OpenMP settings, and PyTorch's build (BLAS, oneDNN, CPU
capability). Read from what is loaded, installing nothing, so a table's ratios can be traced
to the libraries behind them. Each side is read in its own process, as the timings are."""
import json
import os
import subprocess
import sys

_TORCH_PROBE = r"""
import json, re, torch
config = torch.__config__.show()

def line(pattern):
    found = re.search(pattern, config)
    return found.group(1).strip() if found else None

blas, mkl = line(r"BLAS_INFO=([^,]+)"), line(r"- (Intel\(R\) oneAPI Math Kernel Library Version [\d.]+)")
onednn = line(r"- (Intel\(R\) MKL-DNN v[\d.]+)")
print(json.dumps({
    "version": torch.__version__,
    "gemm": f"{blas} ({mkl})" if mkl else blas,
    "conv2d": onednn if onednn and torch.backends.mkldnn.is_available() else "its own kernels",
    "cpu_capability": line(r"CPU capability usage: (\w+)"),
    "threads": torch.get_num_threads()}))
"""


def tensorlib_libraries():
    """tensorlib's CPU paths in this process (plus the OpenMP wait settings it started with)."""
    import tensorlib
    from tensorlib._info import _cpu_libraries, _cpu_model
    found = {"version": tensorlib.__version__, "cpu": _cpu_model(),
             "threads": tensorlib.get_num_threads()}
    found.update(_cpu_libraries())
    found["openmp_wait"] = ", ".join(f"{k}={os.environ[k]}" for k in
                                     ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT") if k in os.environ)
    return found


def torch_libraries(python=sys.executable):
    """PyTorch's build as its own process reports it; None when torch is not importable."""
    proc = subprocess.run([python, "-c", _TORCH_PROBE], capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def format_libraries(ours, theirs):
    lines = [f"tensorlib {ours['version']} on {ours['cpu']}, {ours['threads']} threads",
             f"  gemm:   {ours['gemm']}",
             f"  low precision gemm: {ours.get('gemm_low_precision')}",
             f"  conv2d: {ours['conv2d']}"]
    if ours.get("openmp_wait"):
        lines.append(f"  OpenMP: {ours['openmp_wait']}")
    if theirs is None:
        lines.append("torch: not run (not installed, or --no-torch)")
    else:
        lines += [f"torch {theirs['version']}, {theirs['threads']} threads, CPU capability "
                  f"{theirs['cpu_capability']}",
                  f"  gemm:   {theirs['gemm']}",
                  f"  conv2d: {theirs['conv2d']}"]
    return "\n".join(lines)
