"""The CPU backend: numpy (BLAS for GEMM) over strided views, plus our own OpenMP kernels
where numpy is far behind. Registered through the `tensorlib.backends` entry point like any
third-party plugin."""
import os

# Every parallel region of this backend, GEMM included (tensorlib_cpu.gemm), runs on one OpenMP
# team, so idle threads may spin briefly: waking sleeping ones cost ~50 us per region here
# (OMP_WAIT_POLICY=PASSIVE), more than a 1M-element add. The spin is bounded so an idle
# process gives its cores back within a millisecond or two. libgomp reads this when it loads,
# i.e. when our first extension is imported below.
os.environ.setdefault("GOMP_SPINCOUNT", "100000")

import numpy as np  # noqa: E402

from tensorlib._C.tensor_impl import host_array  # noqa: E402
from tensorlib.backends.interface import Backend  # noqa: E402

from tensorlib import _global_flags  # noqa: E402
from tensorlib_cpu import fastreduce  # noqa: E402
from tensorlib_cpu.hostmem import HostAllocator  # noqa: E402


def _single_threaded_after_fork():
    """libgomp's thread team does not survive fork (a forked child, e.g. a DataLoader worker,
    would wait forever on it): children run the kernels on one thread."""
    fastreduce.set_num_threads(1)


os.register_at_fork(after_in_child=_single_threaded_after_fork)
# deterministic algorithms keep the thread count fixed (NOTE [ oversubscription ], cpu_load.py)
_global_flags.on_deterministic_algorithms(fastreduce.pin_threads)


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
        """Threads of the CPU kernels' one OpenMP team (GEMM, elementwise, reductions)."""
        fastreduce.set_num_threads(n)

    def get_num_threads(self):
        return fastreduce.get_num_threads()

    def start_load_interval(self):
        """Measure the load on our cores from now on (NOTE [ oversubscription ],
        cpu_load.py), e.g. after a pause in which other processes ran and are now idle."""
        fastreduce.start_load_interval()

    def fused_kernel(self, spec, sizes, strides):
        from tensorlib_cpu.codegen import fused_kernel
        return fused_kernel(spec, sizes, strides)

    def vendor_library(self, name):
        """"mkldnn": oneDNN is installed and loads (TENSORLIB_ONEDNN=0 says no), whether or
        not it is switched off now, as torch's is_available() answers whether it is built."""
        if name != "mkldnn":
            return False
        from tensorlib_cpu import onednn
        return not onednn._off_by_environment() and onednn._load()[0] is not None

    def set_vendor_library(self, name, enabled):
        """"mkldnn": oneDNN for convolutions and float32 GEMM (dnnl_sgemm)."""
        if name != "mkldnn":
            return False
        from tensorlib_cpu import onednn_switch
        return onednn_switch.use(enabled)

    def register(self, table):
        from tensorlib_cpu.kernels import register
        register(table)


backend = CPUBackend()
