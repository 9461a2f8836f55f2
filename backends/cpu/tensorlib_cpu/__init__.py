"""The CPU backend: numpy (BLAS for GEMM) over strided views, plus our own OpenMP kernels
where numpy is far behind. Registered through the `tensorlib.backends` entry point like any
third-party plugin."""
import os

# OpenMP threads that spin after a parallel region steal the cores BLAS needs next (on two
# cores a matmul after a reduction ran 10x slower): idle OpenMP threads sleep instead. libgomp
# reads this when it loads, i.e. when our first extension is imported below.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402

from tensorlib._C.tensor_impl import host_array  # noqa: E402
from tensorlib.backends.interface import Backend  # noqa: E402

from tensorlib_cpu.hostmem import HostAllocator  # noqa: E402


class CPUBackend(Backend):
    device_type = "cpu"

    def __init__(self):
        self.allocator = HostAllocator()
        self.allocate = self.allocator.allocate
        self.release = self.allocator.release

    def device_count(self):
        return 1

    def device_name(self, index):
        import platform
        return platform.processor() or platform.machine()

    def copy_from_host(self, dst, array):
        np.copyto(host_array(dst), array, casting="unsafe")

    def copy_to_host(self, src):
        return np.array(host_array(src), order="C", copy=True)

    def set_num_threads(self, n):
        """Threads for the CPU kernels (OpenMP reductions and the elementwise pool)."""
        from tensorlib_cpu import fastreduce
        fastreduce.set_num_threads(n)

    def get_num_threads(self):
        from tensorlib_cpu import fastreduce
        return fastreduce.get_num_threads()

    def register(self, table):
        from tensorlib_cpu.kernels import register
        register(table)


backend = CPUBackend()
