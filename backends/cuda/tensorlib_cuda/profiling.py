"""Kernel times on a CUDA device for tensorlib.profiler (the timer that
tensorlib/profiler/_device.py describes; the OpenCL one runs the same path on every CI
machine): each launch is bracketed by two CUDA events recorded on the current stream, and a
reference event recorded at start, when the host clock is read, places them on
time.perf_counter_ns's clock (Event.time_since is in milliseconds)."""
import time


class DeviceTimer:
    def __init__(self, state, index):
        import pycuda.driver as drv
        self.drv, self.state = drv, state
        self.adapter = state.kernels
        self.device = f"cuda:{index}"
        self.track = 0                  # the stream's handle, once start() has looked
        self._reference, self._host_ns = None, 0

    def start(self):
        dev = self.state.dev
        dev.activate()
        self.track = int(dev.stream.handle) & 0x7FFFFFFF
        self._reference = self.drv.Event()
        self._reference.record(dev.stream)
        self._reference.synchronize()
        self._host_ns = time.perf_counter_ns()

    def launch(self, plain_launch, kernel, *args):
        stream = self.state.dev.stream
        begin, end = self.drv.Event(), self.drv.Event()
        begin.record(stream)
        plain_launch(kernel, *args)
        end.record(stream)
        return begin, end

    def stop(self):
        self.state.dev.activate()
        self.drv.Context.synchronize()

    def span_ns(self, token):
        begin, end = token
        start = self._host_ns + int(begin.time_since(self._reference) * 1e6)
        return start, start + int(end.time_since(begin) * 1e6)

    def kernel_name(self, kernel):
        return self.state.compiler.names.get(id(kernel), "cuda_kernel")
