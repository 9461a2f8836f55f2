"""User OpenCL C kernels for custom ops, built and cached by the OpenCL backend's own
compiler (per device in memory, on disk by content: tensorlib_opencl/compiler.py). The launch
convention is source_kernel.py's; docs/custom_ops.md has a worked example."""
from tensorlib.library.source_kernel import SourceKernel


class OpenCLKernel(SourceKernel):
    """`op.register_kernel("opencl", OpenCLKernel(source, name, outputs=...))`; the kernel is
    a `__kernel void name(...)` whose last parameter is `const long n`."""

    device_type = "opencl"
    language = "OpenCL C"
    declaration = "__kernel"
    CTYPES = {"float32": "float", "float64": "double", "int32": "int", "int64": "long",
              "int16": "short", "int8": "char", "uint8": "uchar", "bool": "uchar"}

    @staticmethod
    def kernel_signatures(source):
        from tensorlib_opencl.compiler import arg_dtypes
        return arg_dtypes(source)
