"""Which BLAS the CPU backend's GEMM runs on, found at run time (no build-time dependency).

The candidates: MKL from the `mkl` wheel (`libmkl_rt`), oneDNN's `dnnl_sgemm` for float32
(the `onednn-cpu-gomp` wheel, a default dependency on x86-64 Linux; float64 then runs on
OpenBLAS), numpy's own OpenBLAS, OpenBLAS with MKL for its slow float32 form
("openblas+mkl", below), and scipy's (`scipy.linalg.cython_blas`, the fallback).
`TENSORLIB_BLAS=mkl|onednn|openblas|openblas+mkl|scipy` chooses; otherwise MKL on Intel CPUs
when the wheel is installed; else oneDNN when it is installed (and not switched off by
TENSORLIB_ONEDNN=0) on Intel CPUs and on AMD ones that run AVX-512 on split 512-bit units
(Zen 4); "openblas+mkl" on Zen 4 with MKL but no oneDNN; plain OpenBLAS elsewhere.

- On an Intel Xeon (Emerald Rapids, 2 cores) oneDNN's sgemm ran the benchmark's float32
  products at 0.88-1.08x PyTorch (256^3 1.01, 1024^3 1.00, 128x784x512 with B transposed
  0.96, 64x128^3 batched 0.94) where OpenBLAS ran them at 0.60-0.95x.
- On Intel Xeons MKL reached 0.9-1.1x PyTorch where OpenBLAS reached 0.6-0.94x.
- On the AMD EPYC Zen 3 (AVX2: OpenBLAS's Haswell kernels) MKL and OpenBLAS ran the issue-16
  shapes at the same speed on one thread (85-93 GFLOP/s each), so OpenBLAS, which every
  install has, stays the default there.
- On the AMD EPYC Zen 4 (AVX-512: OpenBLAS's SkylakeX kernels; 2 threads, best of 100)
  OpenBLAS ran float32 products whose B is read transposed (`x @ W.T`, a Linear's forward)
  14-40% slower than with B as it is (128x512x256: 252 against 181 us; 128x784x512: 723
  against 558), where MKL took the same time for every form (179 and 560 us) and OpenBLAS
  was as fast or faster than MKL in the others and in float64 (1080 against 1420 us). Hence
  "openblas+mkl": those products on MKL, all else on OpenBLAS, where oneDNN is absent.
  oneDNN's sgemm beat both there (AMD EPYC family 25 model 17, 2 threads, 2026-12-06,
  `python -m tensorlib._bench.ab --variant TENSORLIB_BLAS=onednn`, best of 4-5 rounds):
  128x784x512 with B transposed 474 us against OpenBLAS's 544, openblas+mkl's 555 and
  PyTorch's 631; 128x512x256 157 against 182 / 178; 1024^3 9.9 ms against 10.7 / 10.7;
  64x128^3 batched 1.22 ms against 1.50 / 1.58; the MLP training step 1.87 ms against 2.23 /
  2.17 (PyTorch 2.29-2.81). So oneDNN is the default there.
- On the AMD EPYC Zen 5 (full-width AVX-512) OpenBLAS's SkylakeX kernels ran the same
  products at twice MKL's speed (2 threads: 128x784x512 296 us with B as it is and 377 us
  transposed, MKL 540-568 us either way; 128x512x256 95/134 against 180), so plain
  OpenBLAS there. (OPENBLAS_CORETYPE=Haswell, which some machines set, takes its AVX2
  kernels: then 480/499 against MKL's 548-582 us.)"""
import ctypes
import glob
import os
import sys
import sysconfig
import warnings

__all__ = ["CHOICES", "ENV", "cpu_family", "cpu_flags", "cpu_vendor", "find_mkl",
           "full_width_avx512", "low_precision_dtypes", "numpy_openblas_paths", "openblas_core",
           "requested", "split_width_avx512"]

ENV = "TENSORLIB_BLAS"
CHOICES = ("mkl", "onednn", "openblas", "openblas+mkl", "scipy")
# OpenBLAS's names for its AVX-512 kernel sets (what openblas_get_corename says)
_AVX512_CORES = ("SkylakeX", "Cooperlake", "SapphireRapids")


def cpu_vendor():
    """"GenuineIntel", "AuthenticAMD", ... from /proc/cpuinfo; None where unknown."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_family():
    """The "cpu family" number of /proc/cpuinfo (AMD: 23 Zen 1-2, 25 Zen 3-4, 26 Zen 5);
    None where unknown."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu family"):
                    return int(line.split(":", 1)[1])
    except (OSError, ValueError):
        pass
    return None


def full_width_avx512():
    """Whether the CPU runs AVX-512 on 512-bit units (Intel's, AMD's from Zen 5), where
    oneDNN's AVX-512 kernels do twice the work per cycle of AVX2 ones; Zen 4 splits each
    512-bit instruction in two."""
    if "avx512f" not in cpu_flags():
        return False
    vendor = cpu_vendor()
    return vendor == "GenuineIntel" or (vendor == "AuthenticAMD" and (cpu_family() or 0) >= 26)


def cpu_flags():
    """The instruction-set flags of /proc/cpuinfo (empty where unknown)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


# The instructions that make MKL's bf16/fp16 GEMMs faster than float32 copies: without them
# (AVX2 on the AMD EPYC measured) cblas_gemm_bf16bf16f32 ran at 0.85-1.0x the copies + sgemm
_NATIVE = {"bfloat16": ("avx512_bf16", "amx_bf16"), "float16": ("avx512_fp16", "amx_fp16")}


def low_precision_dtypes(library):
    """The 16-bit float dtypes whose products go to MKL's low-precision GEMMs: those the CPU
    multiplies natively, or both when MKL was asked for by name (`TENSORLIB_BLAS=mkl`)."""
    if library != "mkl" and find_mkl() is None:
        return frozenset()
    if os.environ.get(ENV, "").strip().lower() == "mkl":
        return frozenset(_NATIVE)
    flags = cpu_flags()
    return frozenset(name for name, needs in _NATIVE.items() if flags.intersection(needs))


def _library_dirs():
    """Where pip puts the `mkl` wheel's shared libraries: <prefix>/lib (the wheel's data
    files), also for a --user or virtual-environment install."""
    dirs = [os.path.join(sys.prefix, "lib"), os.path.join(sys.base_prefix, "lib"),
            os.path.join(sysconfig.get_path("data"), "lib")]
    for site in (sysconfig.get_path("purelib"), sysconfig.get_path("platlib")):
        dirs.append(os.path.normpath(os.path.join(site, os.pardir, os.pardir)))
    try:
        import site as site_module
        dirs.append(os.path.normpath(os.path.join(site_module.getuserbase(), "lib")))
    except Exception:   # no user site (embedded interpreters): just fewer places to look
        pass
    seen = []
    for d in dirs:
        if d not in seen and os.path.isdir(d):
            seen.append(d)
    return seen


def find_mkl():
    """The path of `libmkl_rt` (newest soname first), or None when the wheel is absent."""
    for d in _library_dirs():
        found = sorted(glob.glob(os.path.join(d, "libmkl_rt.so*")), reverse=True)
        if found:
            return found[0]
    return None


def numpy_openblas_paths():
    """The shared libraries of numpy's own OpenBLAS (in its wheel's numpy.libs)."""
    import numpy as np
    base = os.path.dirname(np.__file__)
    return sorted(glob.glob(os.path.join(base, os.pardir, "numpy.libs", "*openblas*")))


def openblas_core():
    """The kernel set numpy's OpenBLAS picked for this CPU ("SkylakeX", "Haswell", "Zen",
    ...), or None where it cannot say."""
    for path in numpy_openblas_paths():
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_corename64_", "openblas_get_corename64_",
                     "openblas_get_corename"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode(errors="replace")
    return None


def _onednn_present():
    """Whether oneDNN's library is installed and not switched off (TENSORLIB_ONEDNN=0)."""
    from tensorlib_cpu import onednn
    return onednn.library() is not None


def requested():
    """The library to bind: `TENSORLIB_BLAS` if set (an unknown value or a missing MKL warns
    and falls back), else the per-CPU default."""
    choice = os.environ.get(ENV, "").strip().lower()
    if choice:
        if choice not in CHOICES:
            warnings.warn(f"{ENV}={choice!r} is not one of {', '.join(CHOICES)}; using the "
                          f"default", RuntimeWarning, stacklevel=2)
        elif choice in ("mkl", "openblas+mkl") and find_mkl() is None:
            warnings.warn(f"{ENV}={choice} but libmkl_rt was not found (pip install mkl); "
                          f"using OpenBLAS", RuntimeWarning, stacklevel=2)
            return "openblas"
        else:
            return choice
    intel = cpu_vendor() == "GenuineIntel"
    split_avx512 = not intel and split_width_avx512()
    if intel and find_mkl() is not None:
        return "mkl"
    if (intel or split_avx512) and _onednn_present():
        return "onednn"
    if split_avx512 and find_mkl() is not None:
        return "openblas+mkl"
    return "openblas"


def split_width_avx512():
    """Whether numpy's OpenBLAS runs its AVX-512 kernels on a CPU that splits each 512-bit
    instruction in two (Zen 4), where those kernels are slow with B transposed."""
    return openblas_core() in _AVX512_CORES and not full_width_avx512()
