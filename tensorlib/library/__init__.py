"""tensorlib.library: custom ops (torch.library's custom_op API) with kernels per device type,
user OpenCL C and CUDA C kernels among them."""
from tensorlib.library.custom_ops import (CustomOpDef, custom_op, register_autograd,
                                          register_fake, register_kernel)
from tensorlib.library.cuda_kernel import CUDAKernel
from tensorlib.library.opencl_kernel import OpenCLKernel

__all__ = ["custom_op", "register_kernel", "register_fake", "register_autograd",
           "CustomOpDef", "OpenCLKernel", "CUDAKernel"]
