"""Build the Cython extensions of the core and of the CPU backend; metadata is in pyproject."""
import glob
import os
import platform
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup

OPENMP = ["-fopenmp"] if os.name != "nt" else ["/openmp"]
# glibc's vector math library: gcc turns exp/log in `omp simd` loops into its SIMD versions
VECTOR_MATH = ["-lmvec"] if sys.platform.startswith("linux") else []
# The CPU kernels are built for the machine that builds them (AVX2/AVX-512 and FMA where it
# has them: 2x and more on the direct convolution loops than the SSE2 baseline).
# TENSORLIB_PORTABLE=1 builds for any x86-64, e.g. a wheel to copy to other machines. No
# fused multiply-add contraction: the vector body and scalar tail of a loop would round
# differently, so an element's result would depend on its position (and on thread splits).
# A portable build keeps -ffp-contract=off too: the loops compiled for AVX2/AVX-512 by a
# function attribute and chosen at import (grid_kernels, norm_kernels, direct_conv.h) have
# FMA there.
X86_GCC = platform.machine() in ("x86_64", "AMD64") and os.name != "nt"
NATIVE = ((["-march=native"] if os.environ.get("TENSORLIB_PORTABLE") != "1" else [])
          + ["-ffp-contract=off"] if X86_GCC else [])


def _builds_for_avx512():
    """Whether the x86 build targets AVX-512: a native build on a CPU that has it."""
    if not NATIVE or "-march=native" not in NATIVE:
        return False
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " avx512f" in line for line in f)
    except OSError:
        return False


# Under -ffast-math gcc divides (and takes square roots of) float vectors by an estimate and
# one Newton step: with AVX-512's 14-bit estimates that rounds as division does, with
# SSE/AVX2's 12-bit ones it did not (on an AMD EPYC Zen 3 sigmoid(0) came out 0.49999997):
# true division and square roots there (-mno-recip; -mrecip=none left the estimates in).
FAST_MATH = ["-ffast-math"] + ([] if not X86_GCC or _builds_for_avx512() else ["-mno-recip"])

# Kernels built without -ffast-math: those whose every element must round the same way
# wherever it sits (an optimizer step on one parameter or on all of them flattened; fast-math
# reassociates a loop's vector body and its scalar tail differently) and those that test for
# NaN (fast-math folds x != x to false). layer_norm: its streamed and cached stores must
# give one result (NOTE [ layer_norm streaming stores ] in norm_kernels.pyx). copy_kernels:
# its dtype conversions keep subnormals and NaN payloads as PyTorch's do. scan_kernels: each
# running sum rounds in scan order. vector_norm_kernels: its gradient rounds as PyTorch's.
EXACT_MATH = {"arith_kernels", "clamp_kernels", "grid_kernels", "norm_kernels", "optim_kernels",
              "pool_kernels", "select_kernels", "small_binary", "index_kernels", "philox_kernels",
              "quant_kernels", "regression_loss_kernels", "resample_kernels", "piecewise_kernels",
              "copy_kernels", "scan_kernels", "vector_norm_kernels", "mt19937_kernels"}


def extensions():
    exts = []
    for pyx in sorted(glob.glob("tensorlib/_C/*.pyx") + glob.glob("tensorlib/compiler/*.pyx")):
        name = pyx[:-4].replace(os.sep, ".")
        exts.append(Extension(name, [pyx], include_dirs=[numpy.get_include()],
                              extra_compile_args=["-O2"]))
    for pyx in sorted(glob.glob("backends/cpu/tensorlib_cpu/*.pyx")):
        module = os.path.basename(pyx)[:-4]
        # errno-free sqrt and trap-free comparisons change no result (nothing here reads
        # errno or unmasks a floating-point trap) but let the loops vectorize
        fast = (["-fno-math-errno", "-fno-trapping-math"] if module in EXACT_MATH
                else FAST_MATH)
        exts.append(Extension(f"tensorlib_cpu.{module}", [pyx],
                              include_dirs=[numpy.get_include()],
                              extra_compile_args=["-O3"] + fast + NATIVE + OPENMP,
                              extra_link_args=OPENMP + VECTOR_MATH))
    return cythonize(exts, language_level=3, include_path=["."],
                     compiler_directives={"embedsignature": True,
                                          "linetrace": os.environ.get("TENSORLIB_COVERAGE") == "1"})


setup(
    packages=find_packages(include=["tensorlib", "tensorlib.*"]) + [
        "tensorlib_cpu", "tensorlib_cpu.kernels", "tensorlib_opencl", "tensorlib_cuda"],
    package_dir={"tensorlib_cpu": "backends/cpu/tensorlib_cpu",
                 "tensorlib_opencl": "backends/opencl/tensorlib_opencl",
                 "tensorlib_cuda": "backends/cuda/tensorlib_cuda"},
    # torch_compat's _child_path is a folder for PYTHONPATH (a `torch` package and its
    # dist-info), not a tensorlib subpackage: shipped as data
    # vexp.h: the compiled kernels (codegen.py) embed it in the C they build at run time
    package_data={"tensorlib._C": ["*.pxd"], "tensorlib_cpu": ["vexp.h"],
                  "tensorlib": ["include/*/*.h"],
                  "tensorlib.torch_compat": ["_child_path/torch/*.py",
                                             "_child_path/*.dist-info/METADATA"]},
    ext_modules=extensions(),
)
