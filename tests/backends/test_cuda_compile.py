"""Compile-only checks of the CUDA backend (no GPU needed): every CUDA C program the backend
can generate -- each primitive x dtype combination (every layout class is a kernel of its
program) and each composite -- compiled by nvcc to PTX for sm_80 and sm_90, and the
backend's compile path (cubin, CompileError, argument formats)."""
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from tensorlib_cuda import compiler, sources
from tensorlib_cuda.dialect import DIALECT

NVCC = compiler.find_nvcc()
pytestmark = pytest.mark.skipif(NVCC is None, reason="nvcc not found (PATH, /usr/local/cuda/bin)")
# type and syntax errors are the frontend's; the optimiser adds minutes and finds none
_FAST = ("-std=c++17", "-diag-suppress", "177,514", "-Xcicc", "-O0")


def _ptx(source, arch, tmp_path):
    src, out = tmp_path / f"all_{arch}.cu", tmp_path / f"all_{arch}.ptx"
    src.write_text(source)
    done = subprocess.run([NVCC, "--ptx", f"-arch={arch}", *_FAST, "-o", str(out), str(src)],
                          capture_output=True, text=True)
    return done, out


def test_every_generated_kernel_compiles_for_sm80_and_sm90(tmp_path):
    programs = sources.programs()
    families = {key[0] for key, _, _ in programs}
    assert {"u", "b", "copy", "fill", "where", "red", "arg", "scan", "gemm", "gather",
            "scatter_add", "sort", "rand", "softmax", "softmax_bwd", "max_pool2d",
            "max_pool_bwd", "sgd"} <= families
    source = sources.batch([src for _, src, _ in programs])
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda arch: (arch, *_ptx(source, arch, tmp_path)),
                                ("sm_80", "sm_90")))
    for arch, done, out in results:
        errors = [line for line in done.stderr.splitlines() if "error" in line]
        assert done.returncode == 0, f"nvcc {arch}: {len(errors)} errors, first: {errors[:5]}"
        ptx = out.read_text()
        for _, _, names in programs[:: max(1, len(programs) // 50)]:
            for name in names:
                assert f".entry {name}(" in ptx, f"{name} missing from the {arch} PTX"


def test_backend_compile_path_makes_a_cubin():
    from tensorlib.codegen import primitives as P
    src, names = P.source(DIALECT, ("b", "add", "bfloat16", "bfloat16", "bfloat16"))
    cubin = compiler.nvcc_compile(NVCC, src, "sm_80")
    assert cubin[:4] == b"\x7fELF"
    formats = compiler.arg_formats(src)
    assert set(formats) == set(names)
    # (n, meta, out, out offset, a, a offset, b, b offset)
    assert formats[names[0]] == "qPPqPqPq"


def test_compile_error_shows_log_and_numbered_source():
    bad = 'extern "C" __global__ void broken(float* p) { p[0] = undefined_name; }\n'
    with pytest.raises(compiler.CompileError) as info:
        compiler.nvcc_compile(NVCC, bad, "sm_80", where="test")
    text = str(info.value)
    assert "undefined_name" in info.value.log
    assert "   1 | extern" in text and "--- compiler log ---" in text


def test_fill_scalar_format_follows_the_compute_type():
    from tensorlib.codegen import primitives as P
    src, names = P.source(DIALECT, ("fill", "float16"))
    assert compiler.arg_formats(src)[names[0]].endswith("f")      # half fills take a float
    src, names = P.source(DIALECT, ("fill", "int8"))
    assert compiler.arg_formats(src)[names[0]].endswith("b")


def test_find_nvcc_honours_the_override(monkeypatch, tmp_path):
    fake = tmp_path / "nvcc"
    fake.write_text("#!/bin/sh\n")
    os.chmod(fake, 0o755)
    monkeypatch.setenv("TENSORLIB_NVCC", str(fake))
    assert compiler.find_nvcc() == str(fake)
