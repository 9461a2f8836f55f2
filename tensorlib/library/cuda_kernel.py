"""User CUDA C kernels for custom ops, compiled and cached by the CUDA backend's own compiler
(NVRTC or nvcc to a cubin for the device's architecture, per device in memory and on disk by
content: tensorlib_cuda/compiler.py), launched on the current stream. The launch convention
is source_kernel.py's; docs/custom_ops.md has a worked example."""
from tensorlib.library.source_kernel import SourceKernel


class CUDAKernel(SourceKernel):
    """`op.register_kernel("cuda", CUDAKernel(source, name, outputs=...))`; the kernel is an
    `extern "C" __global__ void name(...)` whose last parameter is `const long long n`."""

    device_type = "cuda"
    language = "CUDA C"
    declaration = 'extern "C" __global__'
    CTYPES = {"float32": "float", "float64": "double", "int32": "int", "int64": "long long",
              "int16": "short", "int8": "signed char", "uint8": "unsigned char",
              "bool": "unsigned char"}

    @staticmethod
    def kernel_signatures(source):
        from tensorlib_cuda.compiler import arg_formats
        return arg_formats(source)

    def pointer(self, t):
        return int(t._storage.handle) + t._offset * t._dtype.itemsize

    def compile(self, dtype, arch, target="cubin"):
        """The program for `dtype` compiled by the backend's compiler for `arch` ("sm_80"),
        to a "cubin" or "ptx", with no GPU needed: a check that the source builds."""
        from tensorlib_cuda import compiler
        source = self.source_for(dtype)
        nvcc, nvrtc = compiler.pick_compilers()
        if target == "cubin" and nvrtc is not None:
            return nvrtc.compile(source, arch, where=self.name)
        if nvcc is None:
            raise RuntimeError(f"CUDAKernel.compile to {target} needs nvcc; none was found")
        return compiler.nvcc_compile(nvcc, source, arch, target=target, where=self.name)
