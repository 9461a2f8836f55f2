"""User kernels in source form for custom ops, written once for the GPU backends: checking
the source names the kernel, the `#define T` prefix, allocating the outputs, and the launch
through the backend contract (`build_source_kernels`, and `launch1d`, which launches as every
generated kernel starts, so the profiler times these too). A subclass says which backend, how it reads the
kernels and argument types from the source, and how a tensor is passed.

The launch convention (docs/custom_ops.md has worked examples):
  * the source is prefixed with `#define T <ctype>`, the C type of the op's first tensor
    argument (float for float32, double for float64, ...), so one source serves every dtype;
  * the kernel's parameters are: each output buffer, then the op's arguments in order
    (tensors as device pointers, numbers as scalars of the declared C type), then the
    element count n of the first output (`const long n` in OpenCL C, `const long long n` in
    CUDA C);
  * it is launched over n work items (threads) in 1-D, rounded up to whole groups (blocks):
    the kernel checks its index < n; tensors arrive contiguous, from element 0."""
import tensorlib
from tensorlib._C.tensor_impl import TensorImpl


def _contiguous(t):
    return t if t.is_contiguous() and t._offset == 0 else t.contiguous().clone()


class SourceKernel:
    """Base of OpenCLKernel and CUDAKernel: `op.register_kernel(device_type, Kernel(source,
    name, outputs=...))`. outputs(*args) allocates the outputs (default: one tensor like
    the first tensor input); the op returns them (one tensor, or a tuple for several)."""

    device_type = None
    language = None            # "OpenCL C", "CUDA C": for messages
    declaration = None         # how the source declares a kernel: for messages
    CTYPES = {}                # dtype name -> C type of T

    def __init__(self, source, name=None, outputs=None):
        kernels = list(self.kernel_signatures(source))
        kind = type(self).__name__
        if not kernels:
            raise ValueError(f"{kind}: the source defines no {self.declaration} function")
        if name is None and len(kernels) > 1:
            raise ValueError(f"{kind}: the source defines {kernels}; pass name=")
        self.name = name or kernels[0]
        if self.name not in kernels:
            raise ValueError(f"{kind}: no {self.declaration} named {self.name} in the source "
                             f"(found {kernels})")
        self.source = source
        self.outputs = outputs

    @staticmethod
    def kernel_signatures(source):
        """{kernel name: argument types} as the backend's compiler reads them."""
        raise NotImplementedError

    def source_for(self, dtype):
        """The program built for tensors of `dtype`: the source with T defined."""
        ctype = self.CTYPES.get(dtype.name if hasattr(dtype, "name") else str(dtype))
        if ctype is None:
            raise TypeError(f"{type(self).__name__} {self.name}: no {self.language} type for "
                            f"{dtype} (supported: {sorted(self.CTYPES)})")
        return f"#define T {ctype}\n" + self.source

    def pointer(self, t):
        """What a tensor is passed as: the buffer (OpenCL), the device address (CUDA)."""
        return t._storage.handle

    def __call__(self, *args):
        tensors = [a for a in args if isinstance(a, TensorImpl)]
        dev = tensors[0]._device
        for t in tensors:
            if t._device is not dev:
                raise RuntimeError(f"Expected all tensors to be on the same device, but found "
                                   f"at least two devices, {dev} and {t._device}!")
        source = self.source_for(tensors[0].dtype)
        made = self.outputs(*args) if self.outputs else tensorlib.empty_like(tensors[0])
        outs = made if isinstance(made, tuple) else (made,)
        backend = tensorlib.backends.get(self.device_type)
        kernel = backend.build_source_kernels(dev.index, source, [self.name])[self.name]
        call = [self.pointer(o) for o in outs]
        for a in args:
            call.append(self.pointer(_contiguous(a)) if isinstance(a, TensorImpl) else a)
        n = outs[0].numel()
        if n:
            backend.launch1d(dev.index, kernel, n, *call, n)
        return made
