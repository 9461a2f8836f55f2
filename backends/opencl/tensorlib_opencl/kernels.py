"""The OpenCL backend's kernels: every primitive from `tensorlib.codegen.primitives` (written
once for the GPU backends), run through this device adapter on the device's in-order queue."""

from tensorlib.codegen import composites as C
from tensorlib.codegen import primitives as P
from tensorlib.codegen.primitives import copy  # noqa: F401  (the backend's strided copies)
from tensorlib.codegen.device_adapter import DeviceAdapter

from tensorlib_opencl.dialect import DIALECT

LOCAL = 256            # work-group size of the 1-D kernels


class DeviceKernels(DeviceAdapter):
    """The OpenCL device adapter: programs built by the device's compiler, meta buffers as
    read-only cl.Buffers, launches on the in-order queue."""

    D = DIALECT

    def __init__(self, dev, compiler, label):
        super().__init__(dev, compiler, label)
        self.cl = dev.cl
        self.queue = dev.queue
        self.local = min(LOCAL, 1 << (dev.max_wg.bit_length() - 1))
        self.compute_units = dev.compute_units
        self.is_cpu = dev.is_cpu
        self.dummy = self.meta((0,))

    def _check_key(self, key):
        if "float64" in P.key_dtypes(key) and not self.dev.fp64:
            raise TypeError(f"float64 is not supported on {self.label} ({self.dev.name}): "
                            f"the device lacks cl_khr_fp64. Use float32 on this device.")

    def _upload(self, host):
        cl = self.cl
        return cl.Buffer(self.dev.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                         hostbuf=host)

    def launch1d(self, kernel, n, *args):
        """Enqueue; returns the launch's event (the profiler reads its times)."""
        groups = max(1, -(-n // self.local))
        return kernel(self.queue, (groups * self.local,), (self.local,), *args)

    def launch(self, kernel, global_size, local_size, *args):
        return kernel(self.queue, global_size, local_size, *args)


def register(table, backend):
    table.update(P.KERNELS)
    # the gather-form max-pool backward: without it, the scatter-add fallback is owner-computes
    # over the whole flat gradient, quadratic in the batch
    table["max_pool_backward"] = C.max_pool_backward
    # one launch per parameter instead of about ten (MLP's Adam step on PoCL: 29 -> 7 ms), and
    # layer_norm in one kernel each way (inference at 1024x1024 on PoCL: 111 -> 23 ms)
    table["adam_update_multi"] = C.adam_update_multi
    table["layer_norm"] = C.layer_norm_kernel
    table["layer_norm_train"] = C.layer_norm_train_kernel
    table["layer_norm_backward"] = C.layer_norm_backward_kernel
    # cross entropy of class targets in one kernel each way (the path CUDA takes, so the
    # suite exercises it on PoCL)
    table["cross_entropy"] = C.cross_entropy_kernel
    table["cross_entropy_backward"] = C.cross_entropy_backward_kernel
