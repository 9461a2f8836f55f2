"""tensorlib.library: custom ops (torch.library's custom_op API) with kernels per device type,
user OpenCL C and CUDA C kernels among them; `Library` registers them per PyTorch dispatch
key, whose names (torch._C.DispatchKey, DispatchKeySet) are in `dispatch_keys`."""
from tensorlib.library.custom_ops import (CustomOpDef, custom_op, get_ctx, register_autograd,
                                          register_fake, register_kernel)
from tensorlib.library.cuda_kernel import CUDAKernel
from tensorlib.library.dispatch_keys import DispatchKey, DispatchKeySet
from tensorlib.library.opencl_kernel import OpenCLKernel
from tensorlib.library.registration import Library

__all__ = ["custom_op", "register_kernel", "register_fake", "register_autograd", "get_ctx",
           "CustomOpDef", "Library", "OpenCLKernel", "CUDAKernel", "DispatchKey",
           "DispatchKeySet"]
