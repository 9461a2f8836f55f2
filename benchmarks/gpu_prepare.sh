#!/usr/bin/env bash
# Fill a folder with what benchmarks/gpu_check.sh installs on a GPU machine that has no
# network: the pycuda source archive, and wheels for the target Python (3.12 by default) of
# pycuda's pure-Python dependencies and of what tensorlib and its tests need beyond numpy and
# torch. Run on a machine that reaches the package index:
#
#     benchmarks/gpu_prepare.sh [DIR]          (default: gpu_wheels/ at the repository root)
#
# Where this machine has the target Python and a CUDA toolkit, it also builds the pycuda wheel
# (cuRAND off, linked -- with --no-as-needed, or the linker drops it -- against an empty
# stand-in libcuda.so.1 that the GPU's driver provides at run time), so
# the GPU machine only installs it; otherwise gpu_check.sh builds pycuda from the archive.
# TARGET_PY=3.12 and CUDA_ROOT=/usr/local/cuda can be changed; BUILD_PYCUDA=0 skips the wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mkdir -p "${1:-gpu_wheels}" && cd "${1:-gpu_wheels}" && pwd)
py=${TARGET_PY:-3.12}
cuda_root=${CUDA_ROOT:-/usr/local/cuda}
abi="cp${py/./}"

# 1. the pycuda source archive (no build isolation: its metadata step needs numpy here)
python3 -m pip download -q --no-deps --no-build-isolation --no-binary :all: pycuda -d "$dir"

# 2. wheels for the target Python: pycuda's dependencies, the Cython build of tensorlib,
#    tensorlib's own dependencies and the test runner (numpy and torch are on the GPU machine)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$py" \
    --implementation cp --abi "$abi" --platform manylinux2014_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 -d "$dir" \
    pytools platformdirs mako markupsafe typing_extensions siphash24 "Cython>=3.0" \
    setuptools wheel "ml_dtypes>=0.3" "scipy>=1.10" "pytest>=7" iniconfig packaging pluggy \
    pygments "hypothesis>=6" sortedcontainers pybind11

# 3. optionally, the pycuda wheel itself
target_python=$(command -v "python$py" || true)
if [ "${BUILD_PYCUDA:-1}" != 0 ] && [ -n "$target_python" ] && [ -x "$cuda_root/bin/nvcc" ]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    "$target_python" -m venv "$work/venv"
    "$work/venv/bin/pip" install -q --no-index --find-links "$dir" setuptools wheel \
        || "$work/venv/bin/pip" install -q setuptools wheel
    "$work/venv/bin/pip" install -q numpy
    mkdir -p "$work/stub"
    echo "" > "$work/stub/stub.c"
    gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$work/stub/libcuda.so" "$work/stub/stub.c"
    tar xzf "$dir"/pycuda-*.tar.gz -C "$work"
    (cd "$work"/pycuda-*/ \
        && "$work/venv/bin/python" configure.py --cuda-root="$cuda_root" \
            --no-cuda-enable-curand --cudadrv-lib-dir="$work/stub" > /dev/null \
        && PATH="$cuda_root/bin:$PATH" LDFLAGS="-Wl,--no-as-needed" \
            "$work/venv/bin/pip" wheel -q --no-deps \
            --no-build-isolation -w "$dir" .) \
        || echo "pycuda wheel not built here: gpu_check.sh will build it from the archive"
else
    echo "pycuda wheel not built here (BUILD_PYCUDA=0, or no python$py / $cuda_root/bin/nvcc): gpu_check.sh builds it from the archive"
fi
ls -1 "$dir"
du -sh "$dir"
