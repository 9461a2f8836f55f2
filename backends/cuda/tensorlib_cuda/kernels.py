"""The CUDA backend's kernels: every primitive from `tensorlib.codegen.primitives` and the
composites of `tensorlib.codegen.composites` (written once for the GPU backends), run through
this device adapter on the current stream; float GEMMs go to cuBLAS when it loads."""

from tensorlib.codegen import composites as C
from tensorlib.codegen import primitives as P
from tensorlib.codegen.device_adapter import DeviceAdapter

from tensorlib_cuda.dialect import DIALECT

LOCAL = 256            # threads per block of the 1-D kernels
_MAX_GRID_YZ = 65535


class DeviceKernels(DeviceAdapter):
    """The CUDA device adapter: programs built by NVRTC/nvcc through the device's compiler,
    meta buffers copied to device memory, launches on the device's current stream."""

    D = DIALECT

    def __init__(self, dev, compiler, label):
        import pycuda.driver as drv
        super().__init__(dev, compiler, label)
        self.drv = drv
        self.local = LOCAL
        self.compute_units = dev.props.multi_processor_count
        self.dummy = self.meta((0,))

    def meta(self, values):
        return int(super().meta(values))        # kernels take device pointers as integers

    def _before_clearing_meta(self):
        self.dev.stream.synchronize()

    def _upload(self, host):
        self.dev.activate()
        return self.drv.to_device(host)

    def launch1d(self, kernel, n, *args):
        self.dev.activate()
        blocks = max(1, -(-n // self.local))
        kernel.prepared_async_call((blocks, 1, 1), (self.local, 1, 1), self.dev.stream, *args)

    def launch(self, kernel, global_size, local_size, *args):
        self.dev.activate()
        gs = tuple(global_size) + (1,) * (3 - len(global_size))
        ls = tuple(local_size) + (1,) * (3 - len(local_size))
        grid = tuple(g // l for g, l in zip(gs, ls))
        if grid[1] > _MAX_GRID_YZ or grid[2] > _MAX_GRID_YZ:
            raise RuntimeError(f"{self.label}: a launch of {grid} blocks exceeds CUDA's "
                               f"{_MAX_GRID_YZ} blocks in y and z")
        kernel.prepared_async_call(grid, ls, self.dev.stream, *args)


_cublas = None         # (CuBLAS or None, why not) once loaded


def cublas_status():
    """(the CuBLAS wrapper or None, a line for `tensorlib info`)."""
    global _cublas
    if _cublas is None:
        from tensorlib_cuda import cublas
        lib, where = cublas.load()
        _cublas = (cublas.CuBLAS(lib), f"cuBLAS ({where})") if lib is not None else \
            (None, f"the generator's tiled GEMM ({where})")
    return _cublas


def matmul(out, a, b):
    """cuBLAS for float dtypes and layouts it takes, else the generated tiled GEMM."""
    blas = cublas_status()[0]
    if blas is not None and a._device is out._device and b._device is out._device:
        dev = out._device._backend.state(out._device.index).dev
        if blas.gemm(dev, out, a, b):
            return
    P.matmul(out, a, b)


def register(table, backend):
    table.update(P.KERNELS)
    table.update(C.KERNELS)
    table["matmul"] = matmul
