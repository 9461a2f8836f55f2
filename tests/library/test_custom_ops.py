"""Custom ops: a CPU kernel, an OpenCL C and a CUDA C kernel for one op, each through the
dispatch table and autograd, pass gradcheck on their devices (cuda where a GPU is)."""
import numpy as np
import pytest

import tensorlib
from tensorlib._C import dispatch
from tensorlib.library import CUDAKernel, OpenCLKernel, custom_op

OPENCL_SOURCE = r"""
__kernel void softsign_scale(__global T *out, __global const T *x, const float alpha,
                             const long n) {
    long i = get_global_id(0);
    if (i < n) out[i] = (T)alpha * x[i] / ((T)1 + fabs(x[i]));
}
"""

CUDA_SOURCE = r"""
extern "C" __global__ void softsign_scale(T *out, const T *x, const float alpha,
                                          const long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = (T)alpha * x[i] / ((T)1 + fabs(x[i]));
}
"""


@custom_op("testlib::softsign_scale", mutates_args=(), device_types="cpu")
def softsign_scale(x, alpha):
    """alpha * x / (1 + |x|), by numpy on the CPU."""
    a = x.numpy()
    return tensorlib.from_numpy(alpha * a / (1 + np.abs(a)))


softsign_scale.register_kernel("opencl", OpenCLKernel(OPENCL_SOURCE))
softsign_scale.register_kernel("cuda", CUDAKernel(CUDA_SOURCE))


@softsign_scale.register_fake
def _(x, alpha):
    return tensorlib.empty_like(x)


def _setup(ctx, inputs, output):
    x, alpha = inputs
    ctx.save_for_backward(x)
    ctx.alpha = alpha


def _backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * ctx.alpha / (1 + x.abs()) ** 2, None


softsign_scale.register_autograd(_backward, setup_context=_setup)


def test_forward_and_gradcheck(device):
    x = tensorlib.randn(7, 3, dtype=tensorlib.float64, device=device, requires_grad=True)
    out = tensorlib.ops.testlib.softsign_scale(x, 1.5)
    a = x.detach().cpu().numpy()
    np.testing.assert_allclose(out.detach().cpu().numpy(), 1.5 * a / (1 + np.abs(a)),
                               rtol=1e-6)
    assert out.grad_fn is not None and out.device == x.device
    assert tensorlib.autograd.gradcheck(lambda t: softsign_scale(t, 1.5), (x,))
    strided = x.detach()[:, 1:].t()               # a non-contiguous input with an offset
    b = strided.cpu().numpy()
    np.testing.assert_allclose(softsign_scale(strided, 2.0).cpu().numpy(),
                               2.0 * b / (1 + np.abs(b)), rtol=1e-6)


def test_float32_on_opencl_uses_its_own_build():
    if tensorlib.backends.why_unavailable("opencl"):
        pytest.skip("opencl unavailable")
    x = tensorlib.randn(1000, device="opencl")
    out = softsign_scale(x, 0.5)
    a = x.cpu().numpy()
    assert out.dtype is tensorlib.float32
    np.testing.assert_allclose(out.cpu().numpy(), 0.5 * a / (1 + np.abs(a)), rtol=1e-6)
    state = tensorlib.backends.get("opencl").state(x.device.index)
    hits = state.compiler.memory_hits
    softsign_scale(x, 0.5)
    assert state.compiler.memory_hits == hits + 1          # compiled once, then cached


def test_dispatch_table_profiler_and_errors():
    assert dispatch.devices_with("testlib::softsign_scale")[:1] == ["cpu"]
    with tensorlib.profiler.profile() as prof:
        softsign_scale(tensorlib.randn(3), 1.0)
    assert "testlib::softsign_scale" in {e.name for e in prof.events()}

    @custom_op("testlib::twice", mutates_args=(), device_types=["cpu"])
    def twice(x):
        return x * 2
    if not tensorlib.backends.why_unavailable("opencl"):
        with pytest.raises(NotImplementedError, match="testlib::twice has no kernel for the "
                                                      "'opencl' backend"):
            twice(tensorlib.ones(2, device="opencl"))
    y = twice(tensorlib.ones(2, requires_grad=True))
    with pytest.raises(RuntimeError, match="no autograd formula was registered"):
        y.sum().backward()
    with pytest.raises(AttributeError):
        tensorlib.ops.testlib.missing
    with pytest.raises(ValueError, match="namespace::name"):
        custom_op("no_namespace", mutates_args=())(lambda x: x)
    with pytest.raises(ValueError, match="not parameters"):
        custom_op("testlib::bad", mutates_args=("y",))(lambda x: x)


def test_default_kernel_mutation_and_module_level_registration():
    @custom_op("testlib::add_into", mutates_args=("out",))
    def add_into(out, x):
        out.add_(x)

    out = tensorlib.zeros(3)
    before = out._storage.version
    tensorlib.ops.testlib.add_into(out, tensorlib.ones(3))
    assert out.tolist() == [1.0, 1.0, 1.0] and out._storage.version > before

    @custom_op("testlib::cube", mutates_args=())
    def cube(x):
        return x * x * x
    tensorlib.library.register_autograd("testlib::cube", lambda ctx, g: g * 3 * ctx.x ** 2,
                                        setup_context=lambda ctx, i, o: setattr(ctx, "x",
                                                                                 i[0]))
    tensorlib.library.register_kernel("testlib::cube", "cpu", lambda x: x ** 3)
    x = tensorlib.randn(4, dtype=tensorlib.float64, requires_grad=True)
    assert tensorlib.autograd.gradcheck(cube, (x,))


def test_load_library_refuses_libtorch_operator_libraries_with_oserror(tmp_path):
    """torch.ops.load_library's callers (torchvision's extension loader) catch OSError and
    go on without the library."""
    with pytest.raises(OSError, match="libtorch"):
        tensorlib.ops.load_library(tmp_path / "_C.so")
