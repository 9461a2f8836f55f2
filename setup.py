"""Build the Cython extensions of the core and of the CPU backend; metadata is in pyproject."""
import glob
import os
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup

OPENMP = ["-fopenmp"] if os.name != "nt" else ["/openmp"]
# glibc's vector math library: gcc turns exp/log in `omp simd` loops into its SIMD versions
VECTOR_MATH = ["-lmvec"] if sys.platform.startswith("linux") else []


def extensions():
    exts = []
    for pyx in sorted(glob.glob("tensorlib/_C/*.pyx")):
        name = pyx[:-4].replace(os.sep, ".")
        exts.append(Extension(name, [pyx], include_dirs=[numpy.get_include()],
                              extra_compile_args=["-O2"]))
    for pyx in sorted(glob.glob("backends/cpu/tensorlib_cpu/*.pyx")):
        module = os.path.basename(pyx)[:-4]
        exts.append(Extension(f"tensorlib_cpu.{module}", [pyx],
                              include_dirs=[numpy.get_include()],
                              extra_compile_args=["-O3", "-ffast-math"] + OPENMP,
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
    package_data={"tensorlib._C": ["*.pxd"]},
    ext_modules=extensions(),
)
