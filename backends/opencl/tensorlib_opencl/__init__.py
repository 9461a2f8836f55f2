"""The OpenCL backend (PyOpenCL): AMD/Intel/NVIDIA GPUs, and CPUs through PoCL.

Every primitive runs on the device as OpenCL C generated at run time by `tensorlib.codegen`
(the dialect is `tensorlib_opencl.dialect`), built once per (op, dtypes) and cached in memory
and on disk. Memory comes from PyOpenCL's MemoryPool (`allocator`); kernels are enqueued on one
in-order queue per device and only reading values back waits. PyOpenCL is imported inside the
methods, so a missing package makes the backend unavailable with a reason, never broken.
"""
import numpy as np

from tensorlib.backends.interface import Backend


class _DeviceState:
    """What the backend keeps per device: the device, its allocator, compiler and kernels."""

    def __init__(self, index):
        from tensorlib_opencl import device as _device
        from tensorlib_opencl.allocator import DeviceAllocator
        from tensorlib_opencl.compiler import Compiler
        from tensorlib_opencl.kernels import DeviceKernels
        self.dev = _device.get(index)
        label = f"opencl:{index}"
        self.allocator = DeviceAllocator(self.dev, label)
        self.compiler = Compiler(self.dev, label)
        self.kernels = DeviceKernels(self.dev, self.compiler, label)


class OpenCLBackend(Backend):
    device_type = "opencl"

    def __init__(self):
        self._states = {}

    @property
    def install_hint(self):
        """What to install -- shown only while pyopencl itself is missing."""
        try:
            import pyopencl  # noqa: F401
        except ImportError:
            return ('pip install "tensorlib[opencl-cpu]" for the PoCL CPU driver, or '
                    '"tensorlib[opencl]" with your GPU vendor\'s OpenCL driver')
        return None

    def unavailable_reason(self):
        try:
            import pyopencl  # noqa: F401
        except ImportError:
            return "pyopencl is not installed"
        from tensorlib_opencl import device as _device
        try:
            found = _device.devices()
        except Exception as exc:
            return f"OpenCL platforms could not be listed: {exc}"
        if not found:
            why = "; ".join(f"{name}: {reason}" for name, reason in _device.skipped())
            return "no usable OpenCL device was found" + (f" ({why})" if why else "")
        return None

    def device_count(self):
        try:
            from tensorlib_opencl import device as _device
            return len(_device.devices())
        except Exception:
            return 0

    def device_name(self, index):
        from tensorlib_opencl import device as _device
        return _device.get(index).name

    def runs_on_host(self, index):
        """An OpenCL CPU device (PoCL) computes on the host CPU."""
        from tensorlib_opencl import device as _device
        return _device.get(index).is_cpu

    def state(self, index):
        st = self._states.get(index or 0)
        if st is None:
            st = self._states[index or 0] = _DeviceState(index or 0)
        return st

    def build_source_kernels(self, index, source, names):
        return self.state(index).compiler.kernels(source, list(names))

    def launch1d(self, index, kernel, n, *args):
        return self.state(index).kernels.launch1d(kernel, n, *args)

    # -- memory ----------------------------------------------------------------------------
    def allocate(self, nbytes, index):
        return self.state(index).allocator.allocate(nbytes)

    def release(self, handle, nbytes):
        states = self._states
        if len(states) == 1:
            for st in states.values():
                st.allocator.release(handle, nbytes)
            return
        for st in list(states.values()):
            if getattr(handle, "context", None) == st.dev.context:
                st.allocator.release(handle, nbytes)
                return
        try:
            handle.release()
        except Exception:
            pass

    def _temp_like(self, t, dtype=None):
        from tensorlib._C.factory import empty
        return empty(t._sizes, dtype or t._dtype, t._device)

    def copy_from_host(self, dst, array):
        from tensorlib._C.tensor_impl import is_contiguous
        st = self.state(dst._device.index)
        host = np.ascontiguousarray(np.asarray(array).astype(dst._dtype.np, copy=False))
        if host.size == 0:
            return
        if is_contiguous(dst):
            st.dev.cl.enqueue_copy(st.dev.queue, dst._storage.handle, host,
                                   dst_offset=dst._offset * dst._dtype.itemsize, is_blocking=True)
            return
        tmp = self._temp_like(dst)
        self.copy_from_host(tmp, host)
        from tensorlib_opencl.kernels import copy
        copy(dst, tmp)

    def copy_to_host(self, src):
        from tensorlib._C.tensor_impl import is_contiguous
        st = self.state(src._device.index)
        out = np.empty(src._sizes, dtype=src._dtype.np)
        if out.size == 0:
            return out
        if not is_contiguous(src):
            from tensorlib_opencl.kernels import copy
            tmp = self._temp_like(src)
            copy(tmp, src)
            src = tmp
        st.dev.cl.enqueue_copy(st.dev.queue, out, src._storage.handle,
                               src_offset=src._offset * src._dtype.itemsize, is_blocking=True)
        return out

    def copy_between_devices(self, dst, src):
        self.copy_from_host(dst, self.copy_to_host(src))

    def synchronize(self, index=None):
        indices = list(self._states) if index is None else [index]
        for i in indices:
            if i in self._states:
                self._states[i].dev.queue.finish()

    # -- statistics (tensorlib.opencl) -----------------------------------------------------
    def memory_stats(self, index=0):
        return self.state(index).allocator.stats()

    def empty_cache(self, index=None):
        for i, st in self._states.items():
            if index is None or i == index:
                st.allocator.empty_cache()

    def device_timers(self):
        """Kernel timers for the profiler: the devices in use, or opencl:0 (profiling.py)."""
        from tensorlib_opencl.profiling import DeviceTimer
        if not self._states:
            self.state(0)
        return [DeviceTimer(st, i) for i, st in sorted(self._states.items())]

    def fused_kernel(self, spec, sizes, strides):
        """tensorlib.compile's fused elementwise kernels (tensorlib_opencl.fused)."""
        from tensorlib_opencl.fused import FusedKernel
        return FusedKernel(spec, sizes, strides)

    def register(self, table):
        from tensorlib_opencl.kernels import register
        register(table, self)


backend = OpenCLBackend()
