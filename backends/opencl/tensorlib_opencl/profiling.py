"""Kernel times on an OpenCL device for tensorlib.profiler (the timer that
tensorlib/profiler/_device.py describes).

Events carry start/end times only on a queue made with PROFILING_ENABLE, which may cost a
little on every command, so the device's queue is a plain one and a profiling queue stands in
for it only while a profile with the device activity records: start() finishes the plain
queue and puts the profiling queue in its place (the device, its kernel adapter); stop()
finishes it and puts the plain one back. The pool allocator keeps enqueueing its
allocate-now migration on the plain queue, so while the swap lasts a fresh buffer waits for
that queue before a kernel can touch it.

Device timestamps are on the device's clock: a marker enqueued at start gives the offset to
time.perf_counter_ns (the midpoint of enqueue and completion, so within that round trip)."""
import time


class DeviceTimer:
    def __init__(self, state, index):
        self.state = state
        self.adapter = state.kernels
        self.device = f"opencl:{index}"
        self.track = 0                          # one in-order queue per device
        self._plain = self._allocate = None
        self.offset_ns = 0

    def _profiling_queue(self):
        dev = self.state.dev
        queue = getattr(dev, "profiling_queue", None)
        if queue is None:
            cl = dev.cl
            queue = dev.profiling_queue = cl.CommandQueue(
                dev.context, dev.device, properties=cl.command_queue_properties.PROFILING_ENABLE)
        return queue

    def start(self):
        dev, allocator = self.state.dev, self.state.allocator
        queue = self._profiling_queue()
        self._plain = dev.queue
        self._plain.finish()
        dev._queue = self.adapter.queue = queue
        plain, allocate = self._plain, allocator.allocate

        def allocate_in_order(nbytes):
            held = allocator.pool.managed_bytes
            handle = allocate(nbytes)
            if allocator.pool.managed_bytes != held:        # a new buffer, migrated on plain
                plain.finish()
            return handle
        allocator.allocate = allocate_in_order
        before = time.perf_counter_ns()
        marker = dev.cl.enqueue_marker(queue)
        marker.wait()
        after = time.perf_counter_ns()
        self.offset_ns = (before + after) // 2 - marker.profile.end

    def launch(self, plain_launch, kernel, *args):
        return plain_launch(kernel, *args)          # the event, with profiling info

    def stop(self):
        dev = self.state.dev
        dev.queue.finish()
        dev._queue = self.adapter.queue = self._plain
        del self.state.allocator.allocate
        self._plain = None

    def span_ns(self, event):
        return event.profile.start + self.offset_ns, event.profile.end + self.offset_ns

    def kernel_name(self, kernel):
        return kernel.function_name
