"""User OpenCL C kernels for custom ops, built and cached by the OpenCL backend's own
compiler (per device in memory, on disk by content: tensorlib_opencl/compiler.py).

The launch convention (docs/custom_ops.md has a worked example):
  * the source is prefixed with `#define T <ctype>`, the C type of the op's first tensor
    argument (float for float32, double for float64, int, long, ...), so one source serves
    every dtype;
  * the kernel's parameters are: each output buffer, then the op's arguments in order
    (tensors as `__global` buffers, numbers as scalars of the declared C type), then
    `const long n`, the number of elements of the first output;
  * it is launched over n work items in 1-D (rounded up to whole work groups: the kernel
    checks `get_global_id(0) < n`); tensors arrive contiguous, from element 0."""
import tensorlib
from tensorlib._C.tensor_impl import TensorImpl

_CTYPES = {"float32": "float", "float64": "double", "int32": "int", "int64": "long",
           "int16": "short", "int8": "char", "uint8": "uchar", "bool": "uchar"}


def _contiguous(t):
    return t if t.is_contiguous() and t._offset == 0 else t.contiguous().clone()


class OpenCLKernel:
    """`op.register_kernel("opencl", OpenCLKernel(source, name, outputs=...))`.
    outputs(*args) allocates the outputs (default: one tensor like the first tensor input);
    the op returns them (one tensor, or a tuple when outputs returns several)."""

    def __init__(self, source, name=None, outputs=None):
        from tensorlib_opencl.compiler import arg_dtypes
        kernels = list(arg_dtypes(source))
        if not kernels:
            raise ValueError("OpenCLKernel: the source defines no __kernel function")
        if name is None and len(kernels) > 1:
            raise ValueError(f"OpenCLKernel: the source defines {kernels}; pass name=")
        self.name = name or kernels[0]
        if self.name not in kernels:
            raise ValueError(f"OpenCLKernel: no __kernel named {self.name} in the source "
                             f"(found {kernels})")
        self.source = source
        self.outputs = outputs

    def __call__(self, *args):
        tensors = [a for a in args if isinstance(a, TensorImpl)]
        dev = tensors[0]._device
        for t in tensors:
            if t._device is not dev:
                raise RuntimeError(f"Expected all tensors to be on the same device, but found "
                                   f"at least two devices, {dev} and {t._device}!")
        ctype = _CTYPES.get(tensors[0].dtype.name)
        if ctype is None:
            raise TypeError(f"OpenCLKernel {self.name}: no OpenCL C type for "
                            f"{tensors[0].dtype}")
        made = self.outputs(*args) if self.outputs else tensorlib.empty_like(tensors[0])
        outs = made if isinstance(made, tuple) else (made,)
        state = tensorlib.backends.get("opencl").state(dev.index)
        source = f"#define T {ctype}\n" + self.source
        kernel = state.compiler.kernels(source, [self.name])[self.name]
        call = [o._storage.handle for o in outs]
        for a in args:
            call.append(_contiguous(a)._storage.handle if isinstance(a, TensorImpl) else a)
        n = outs[0].numel()
        if n:
            state.kernels.launch1d(kernel, n, *call, n)
        return made
