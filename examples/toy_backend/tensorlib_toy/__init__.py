"""tensorlib-toy: the smallest complete third-party backend, as an example to copy.

Two "toy" devices (toy:0, toy:1) whose memory is host numpy buffers, an allocator that
counts bytes per device, and a kernel for every primitive written in plain numpy
(tensorlib_toy.kernels) -- nothing borrowed from the CPU backend. tensorlib finds it
through the entry point in pyproject.toml and imports it on first use of "toy"."""
import numpy as np

from tensorlib._C.tensor_impl import host_array
from tensorlib.backends.interface import API_VERSION, Backend

__version__ = "0.1.0"


class CountingAllocator:
    """Host buffers, with the bytes in use per device (what a real allocator would pool)."""

    def __init__(self, count):
        self.in_use = [0] * count
        self._owner = {}                  # id(buffer) -> device index

    def allocate(self, nbytes, index):
        buffer = np.empty(nbytes, np.uint8)
        self.in_use[index] += nbytes
        self._owner[id(buffer)] = index
        return buffer

    def release(self, buffer, nbytes):
        index = self._owner.pop(id(buffer), None)
        if index is not None:
            self.in_use[index] -= nbytes


class ToyBackend(Backend):
    device_type = "toy"
    api_version = API_VERSION
    install_hint = "pip install tensorlib-toy"
    count = 2

    def __init__(self):
        self.allocator = CountingAllocator(self.count)
        self.allocate = self.allocator.allocate
        self.release = self.allocator.release

    def device_count(self):
        return self.count

    def device_name(self, index):
        return f"Toy device {index} (host memory)"

    def memory_allocated(self, index=0):
        return self.allocator.in_use[index]

    def copy_from_host(self, dst, array):
        host_array(dst)[...] = array

    def copy_to_host(self, src):
        return np.ascontiguousarray(host_array(src)).copy()

    def copy_between_devices(self, dst, src):
        host_array(dst)[...] = host_array(src)

    def synchronize(self, index=None):
        """Toy kernels run synchronously: nothing is ever queued."""

    def register(self, table):
        from tensorlib_toy.kernels import COMPOSITE_KERNELS, KERNELS
        table.update(KERNELS)
        table.update(COMPOSITE_KERNELS)


backend = ToyBackend()
