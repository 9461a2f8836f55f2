"""The contract's source-kernel methods: a backend without a kernel compiler says so, and
tensorlib.library's source kernels go through the contract, not a backend's internals."""
import pytest

import tensorlib
from tensorlib.backends.interface import Backend


class _NoCompiler(Backend):
    device_type = "nocompiler"


def test_default_backend_builds_no_source_kernels():
    with pytest.raises(NotImplementedError, match="does not build kernels from source"):
        _NoCompiler().build_source_kernels(0, "kernel void k() {}", ["k"])
    with pytest.raises(NotImplementedError, match="does not launch source kernels"):
        _NoCompiler().launch1d(0, object(), 4)


def test_opencl_source_kernel_runs_through_the_contract():
    if "opencl" not in tensorlib.backends.available():
        pytest.skip("needs the opencl backend")
    backend = tensorlib.backends.get("opencl")
    kernels = backend.build_source_kernels(0, "#define T float\n__kernel void twice("
                                           "__global T* out, __global const T* x, const long n)"
                                           " { long i = get_global_id(0); "
                                           "if (i < n) out[i] = 2 * x[i]; }", ["twice"])
    x = tensorlib.arange(5.0, device="opencl")
    out = tensorlib.empty(5, device="opencl")
    backend.launch1d(0, kernels["twice"], 5, out._storage.handle, x._storage.handle, 5)
    assert out.cpu().tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
