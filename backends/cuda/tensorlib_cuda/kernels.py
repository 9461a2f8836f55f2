"""The CUDA backend's kernels: every primitive from `tensorlib.codegen.primitives` and the
composites of `tensorlib.codegen.composites` (written once for the GPU backends), run through
this device adapter on the current stream; float GEMMs go to cuBLAS when it loads."""
import numpy as np

from tensorlib.codegen import composites as C
from tensorlib.codegen import primitives as P

from tensorlib_cuda.dialect import DIALECT

LOCAL = 256            # threads per block of the 1-D kernels
_MAX_GRID_YZ = 65535


class DeviceKernels:
    """Per device: compiled kernels by program key, cached layout (meta) buffers, launching
    (the adapter `tensorlib.codegen.primitives` documents)."""

    D = DIALECT
    is_cpu = False

    def __init__(self, dev, compiler, label):
        import pycuda.driver as drv
        self.drv, self.dev, self.compiler, self.label = drv, dev, compiler, label
        self.local = LOCAL
        self.compute_units = dev.props.multi_processor_count
        self._programs = {}
        self._meta = {}
        self.dummy = self.meta((0,))

    def kernels(self, key):
        found = self._programs.get(key)
        if found is None:
            source, names = P.source(self.D, key)
            found = self._programs[key] = self.compiler.kernels(source, names)
        return found

    def meta(self, values):
        key = tuple(values)
        buf = self._meta.get(key)
        if buf is None:
            if len(self._meta) > 4096:
                self.dev.stream.synchronize()     # launches queued may still read old ones
                self._meta.clear()
            self.dev.activate()
            buf = self._meta[key] = self.drv.to_device(np.array(key, dtype=np.int64))
        return int(buf)

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
