#!/usr/bin/env bash
# The one-call GPU check of the CUDA backend, for a machine with an NVIDIA GPU, its driver,
# nvcc and a Python (3.12 here) that has numpy and torch, but no network and no pycuda:
#
#     benchmarks/gpu_check.sh [WHEEL_DIR] [OUT_DIR]
#
# WHEEL_DIR (default gpu_wheels/) is what benchmarks/gpu_prepare.sh filled; OUT_DIR (default
# $OUT, else gpu_check_out/) gets gpu_check.json and the logs. Steps, each time-boxed so the
# whole stays under 8 minutes (about 10 at the very worst; the run tool allows 10): a virtual
# environment over the system's packages, pycuda (its wheel, or built from the archive with
# cuRAND off), tensorlib built and installed, `tensorlib info`, the conformance suite and the
# per-device tests on cuda (the tests' LeNet among them), one C++/CUDA extension built by nvcc
# and run, then benchmarks/cuda_bench.py beside torch. Exit status: the tests'.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
wheels=$(cd "${1:-gpu_wheels}" && pwd) || { echo "no wheel folder: run gpu_prepare.sh"; exit 2; }
out=${2:-${OUT:-$repo/gpu_check_out}}
mkdir -p "$out"
cuda_root=${CUDA_ROOT:-/usr/local/cuda}
export PATH="$cuda_root/bin:$PATH" CUDA_ROOT="$cuda_root"
export TENSORLIB_KERNEL_CACHE_DIR="$out/kernel_cache"
jobs=$(nproc)
start=$(date +%s)
say() { echo "[gpu_check +$(( $(date +%s) - start ))s] $*"; }

say "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'nvidia-smi not found')"
say "nvcc: $(nvcc --version 2>/dev/null | tail -1)"
python3 -m venv --system-site-packages /tmp/tensorlib-gpu-venv
. /tmp/tensorlib-gpu-venv/bin/activate
python -c "import numpy, torch; print('numpy', numpy.__version__, 'torch', torch.__version__, 'cuda', torch.version.cuda)"
pip_local() { python -m pip install -q --no-index --find-links "$wheels" "$@"; }
pip_local pytools platformdirs mako setuptools wheel "Cython>=3.0" pytest hypothesis pybind11 \
    || say "some build/test dependencies did not install"
python -c "import scipy, ml_dtypes" 2>/dev/null || pip_local scipy ml_dtypes

# -- pycuda ---------------------------------------------------------------------------------
build_pycuda() {
    say "building pycuda from the archive (cuRAND off, $jobs jobs)"
    local build
    build=$(mktemp -d)
    tar xzf "$wheels"/pycuda-*.tar.gz -C "$build"
    # the linker wants libcuda.so; a driver may ship only libcuda.so.1
    local libdir
    libdir=$(dirname "$(ldconfig -p | awk '/libcuda\.so(\.1)? /{print $NF; exit}')")
    mkdir -p "$build/libcuda"
    ln -sf "$libdir/libcuda.so.1" "$build/libcuda/libcuda.so"
    (cd "$build"/pycuda-*/ \
        && python configure.py --cuda-root="$cuda_root" --no-cuda-enable-curand \
            --cudadrv-lib-dir="$build/libcuda" > "$out/pycuda_configure.log" \
        && timeout 300 python setup.py build_ext -j "$jobs" > "$out/pycuda_build.log" 2>&1 \
        && python -m pip install -q --no-deps --no-build-isolation . >> "$out/pycuda_build.log" 2>&1) \
        || { say "pycuda build failed: see $out/pycuda_build.log"; tail -20 "$out/pycuda_build.log"; }
}
if ! python -c "import pycuda.driver" 2>/dev/null; then
    if ls "$wheels"/pycuda-*-cp*.whl >/dev/null 2>&1; then
        say "installing the prebuilt pycuda wheel"
        pip_local --no-deps pycuda
        if ! python -c "import pycuda.driver" 2> "$out/pycuda_import.log"; then
            say "the prebuilt wheel does not load here ($(tail -1 "$out/pycuda_import.log")): building"
            python -m pip uninstall -q -y pycuda
            build_pycuda
        fi
    else
        build_pycuda
    fi
fi
python -c "import pycuda.driver as d; d.init(); print('pycuda', __import__('pycuda').VERSION, 'devices', d.Device.count())" \
    || say "pycuda does not import: the cuda backend will be unavailable"

# -- tensorlib --------------------------------------------------------------------------------
say "building tensorlib ($jobs jobs) and installing it"
(timeout 300 python setup.py build_ext --inplace -j "$jobs" > "$out/tensorlib_build.log" 2>&1 \
    && python -m pip install -q --no-deps --no-build-isolation -e . >> "$out/tensorlib_build.log" 2>&1) \
    || { say "tensorlib build failed"; tail -20 "$out/tensorlib_build.log"; exit 2; }
(cd /tmp && python -m tensorlib info --ops)

# -- every kernel compiled once, in parallel, into the kernel cache the tests then read -------
say "prebuilding every generated kernel ($jobs at a time)"
(cd /tmp && timeout 90 python -c "
import tensorlib
from tensorlib._C.device import canonical
from tensorlib_cuda import sources
n, took = sources.prebuild(0, jobs=$jobs)
st = canonical('cuda')._backend.state(0)
print(f'{n} programs in {took:.1f} s with {st.compiler.tool}')") || say "prebuild failed (kernels compile on first use)"

# -- tests on cuda ----------------------------------------------------------------------------
per_device=$(grep -rl "def test_[a-z_0-9]*([^)]*\bdevice\b" tests --include='test_*.py' | sort)
run_tests() {   # name, time limit, test paths...
    local name=$1 limit=$2
    shift 2
    TENSORLIB_TEST_DEVICES=cuda timeout "$limit" python -m pytest -q -p no:cacheprovider "$@" \
        --junitxml="$out/$name.xml" > "$out/$name.log" 2>&1
    local rc=$?
    tail -25 "$out/$name.log"
    say "$name: exit status $rc"
    return $rc
}
say "conformance suite and CUDA backend tests"
run_tests backend_tests 120 tests/backends/test_cuda.py tests/cuda tests/codegen \
    tests/backends/test_cuda_allocator.py
tests_rc=$?
say "$(echo "$per_device" | wc -l) per-device test files on cuda (the tests' LeNet among them)"
run_tests per_device_tests 150 $per_device || tests_rc=$?
say "a C++/CUDA extension (nvcc, <<<blocks, threads>>>) on cuda tensors"
TENSORLIB_EXTENSIONS_DIR="$out/extensions" run_tests cpp_extension_cuda 60 \
    tests/utils/test_cpp_extension_cuda.py || tests_rc=$?

# -- beside torch -------------------------------------------------------------------------------
say "timing beside torch"
timeout 90 python benchmarks/cuda_bench.py --json "$out/gpu_check.json" --repeats 10 \
    2>&1 | tee "$out/bench.log"
say "done; results in $out"
exit "$tests_rc"
