"""Capture: record kernel calls instead of running them (lazy tensors, as in PyTorch/XLA and
tinygrad). While a compiled call runs, the kernel tables of the devices it touches hold
recorders, so every op runs its usual Python (argument checks, shape and dtype inference,
allocation of outputs, autograd recording) but its kernels only append a `Node`. Whatever
needs real values -- `item()`, `tolist()`, `numpy()`, printing, a copy to another backend --
ends the segment: the recorded kernels are planned (fused), compiled or found in the cache,
and run, and recording goes on (a graph break). The end of the call ends the last segment.

Buffers are real: outputs are allocated as in eager mode, so a graph break needs nothing but
running the pending kernels. What fusion removes is the memory traffic and the kernel calls,
not the allocations: an intermediate that nothing outside the segment can see is never
written (see `plan.live_storages`).
"""
import os
import sys
from threading import Lock, get_ident

import numpy as np

from tensorlib import _capture_state
from tensorlib._C.device import canonical
from tensorlib._C.tensor_impl import TensorImpl


class GraphBreakError(RuntimeError):
    """Raised under `fullgraph=True` where the graph would break; names the file and line."""


class Node:
    """One recorded kernel call: `kernel(*args, **kwargs)` of primitive or composite `op`."""
    __slots__ = ("op", "kernel", "args", "kwargs", "device")

    def __init__(self, op, kernel, args, kwargs, device):
        self.op, self.kernel, self.args, self.kwargs, self.device = op, kernel, args, kwargs, device

    def tensors(self):
        for a in self.args:
            if isinstance(a, TensorImpl):
                yield a
            elif isinstance(a, (list, tuple)):
                for t in a:
                    if isinstance(t, TensorImpl):
                        yield t
        for a in self.kwargs.values():
            if isinstance(a, TensorImpl):
                yield a

    def __repr__(self):
        return f"Node({self.op})"


# Kernels that answer whether they took the call (a fused fast path for some layouts): the op
# falls back to a decomposition when they say no. "relu" answers no while recording (its
# fallback, maximum, fuses; so do sigmoid's and the fused backwards' decompositions); the
# others run at once, after the pending nodes. "addmm_bias" (a Linear's forward) runs at once
# rather than declining: its fallback is a bias copy pass and then the product, and a
# replayed LSTM sequence spent a tenth of its time in those copies (500 per call). So does
# "mm_pair" (a Linear's input and weight gradients side by side): recorded as two plain mm
# nodes, each split over all the threads, a replayed MLP step's SGD update that followed took
# 360 instead of 150 us at 2 threads (Intel Xeon), and the compiled step was slower than eager.
_DECLINE = {"relu", "sigmoid", "sigmoid_backward", "tanh_backward", "gelu", "gelu_backward",
            "silu", "silu_backward", "hardtanh", "hardtanh_backward", "leaky_relu",
            "leaky_relu_backward", "hardsigmoid", "hardsigmoid_backward", "hardswish",
            "hardswish_backward", "elu", "elu_backward", "softplus", "softplus_backward",
            "log_sigmoid", "log_sigmoid_backward", "mish", "mish_backward", "clamp",
            "float_sign", "nan_to_num", "lerp", "addcmul", "addcdiv", "tri", "mask_positions",
            "nonzero", "linear_resample"}
_RUN_NOW = {"max_pool", "max_pool_backward", "lstm_cell", "lstm_cell_backward", "sgd_update",
            "sgd_update_multi", "adam_update_multi", "adam_update_multi_capturable", "mm_pair",
            "addmm_bias"}


class _Recorder:
    """Stands in for a kernel in its device's table while a capture is active."""
    __slots__ = ("capture", "op", "kernel", "device_type")

    def __init__(self, capture, op, kernel, device_type):
        self.capture, self.op, self.kernel, self.device_type = capture, op, kernel, device_type

    def __getattr__(self, name):
        # what a kernel says about itself (cross_entropy's `checks_targets`: it raises on a
        # bad target when it runs, so the op need not read the targets into Python, which
        # would break the graph)
        return getattr(self.kernel, name)

    def __call__(self, *args, **kwargs):
        if get_ident() != self.capture.thread:     # another thread's eager op: run it
            return self.kernel(*args, **kwargs)
        op = self.op
        if op in _DECLINE:
            return False
        if "::" in op:
            return self._custom(args, kwargs)
        node = Node(op, self.kernel, args, kwargs, self.device_type)
        if op in _RUN_NOW:
            return self.capture.run_now(node)
        self.capture.nodes.append(node)


    def _custom(self, args, kwargs):
        """A custom op's kernel (tensorlib.library: a C++ extension function, an OpenCL or
        CUDA C kernel, Python) returns its outputs, which no recorder can stand for: it runs
        where it is called, after the pending kernels, as a graph break."""
        cap = self.capture
        cap.graph_break(f"the custom op {self.op}")
        cap.uninstall()
        try:
            return self.kernel(*args, **kwargs)
        finally:
            cap.install()


class _HostCopyRecorder:
    """Stands in for a backend's `copy_from_host` while a capture is active. Host data written
    into a tensor (`tensor([...])`, `arange`, `linspace`) is no kernel of the table, but it is
    part of the program: a replay that skipped it would read a buffer never written. So it is
    recorded in order with the kernels, its array copied now (the caller may reuse it); the
    copy's bytes are part of the program's key, so different data makes a different
    program."""
    __slots__ = ("capture", "copy", "own")

    def __init__(self, capture, copy, own):
        # own: the backend object itself held `copy` (not its class), so uninstall puts it back
        self.capture, self.copy, self.own = capture, copy, own

    def __call__(self, dst, array, **kwargs):
        if get_ident() != self.capture.thread:
            return self.copy(dst, array, **kwargs)
        snapshot = np.array(array, copy=True)
        self.capture.nodes.append(Node("copy_from_host", self.copy, (dst, snapshot), kwargs,
                                       dst._device.type))


_HOST_COPIES = {}               # id(backend) -> its copy_from_host, one object for every call


def _host_copy(backend):
    """The backend's copy_from_host as the same object in every capture: a kernel's identity
    is part of a program's key, and a new bound method per call would never match."""
    copy = _HOST_COPIES.get(id(backend))
    if copy is None or getattr(copy, "__self__", None) is not backend:
        copy = _HOST_COPIES[id(backend)] = backend.copy_from_host
    return copy


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_INSIDE = {}                    # file name -> whether it is tensorlib's


def user_frame():
    """(file, line, function) of the innermost frame outside tensorlib: where a break is.
    (Frames, not `traceback`: this runs at every break and must not read source files.)"""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        inside = _INSIDE.get(code.co_filename)
        if inside is None:
            inside = _INSIDE[code.co_filename] = \
                os.path.abspath(code.co_filename).startswith(_PACKAGE)
        if not inside:
            return code.co_filename, frame.f_lineno, code.co_name
        frame = frame.f_back
    return "<tensorlib>", 0, "?"


class Capture:
    """One compiled call's recording: the pending nodes, the storages allocated during it
    (all others are external: inputs, parameters, globals), and the breaks seen."""

    def __init__(self, devices, runner, fullgraph=False, on_break=None):
        self.devices = devices          # canonical devices whose kernels record
        self.runner = runner            # callable(nodes, capture): plans and runs a segment
        self.fullgraph = fullgraph
        self.on_break = on_break        # callable(reason, frame) for logging
        self.nodes = []
        self.fresh = {}                 # id(handle) -> handle allocated during the capture
        self.breaks = []                # (reason, (file, line, name))
        self.segments = []              # the structural key of each segment run
        self._installed = None          # (tables: (dict, real, recorders), allocators)
        self.program = None             # a list to log what runs into, for `replay`
        self.opaque = False             # kernels ran outside the recording (compiler.disable)
        self.internal_reads = 0         # inside a tensorlib op's own host read (no user break)
        # the tables are the process's: other threads' kernels pass through the recorders
        self.thread = get_ident()

    # -- installing the recorders ----------------------------------------------------------
    def _tables(self):
        seen = {}
        for d in self.devices:
            seen.setdefault(id(d._kernels), d)
        return list(seen.values())

    def install(self):
        if self._installed is None:         # built once per capture, swapped in and out
            tables = []
            for d in self._tables():
                real = dict(d._kernels)
                recorders = {op: _Recorder(self, op, k, d.type) for op, k in real.items()}
                tables.append((d._kernels, real, recorders))
            allocs = [(d, d._allocate, self._tracking(d._allocate)) for d in self.devices]
            backends = {id(d._backend): d._backend for d in self.devices}
            hosts = [(b, _HostCopyRecorder(self, _host_copy(b), "copy_from_host" in vars(b)))
                     for b in backends.values()]
            self._installed = (tables, allocs, hosts)
        tables, allocs, hosts = self._installed
        for table, _, recorders in tables:
            table.update(recorders)
        for d, _, tracked in allocs:
            d._allocate = tracked
        for backend, recorder in hosts:
            backend.copy_from_host = recorder
        self._outer = _capture_state.current
        _capture_state.current = self

    def uninstall(self):
        tables, allocs, hosts = self._installed
        for table, real, _ in tables:
            table.update(real)
        for d, real_alloc, _ in allocs:
            d._allocate = real_alloc
        for backend, recorder in hosts:
            if recorder.own:
                backend.copy_from_host = recorder.copy
            else:
                del backend.copy_from_host          # the class's method again
        _capture_state.current = self._outer

    def _tracking(self, allocate):
        fresh, thread = self.fresh, self.thread

        def tracked(nbytes, index):
            handle = allocate(nbytes, index)
            if get_ident() == thread:       # another thread's buffers are no part of it
                fresh[id(handle)] = handle
            return handle
        return tracked

    def is_fresh(self, storage):
        handle = storage.handle
        return self.fresh.get(id(handle)) is handle

    # -- running what was recorded ---------------------------------------------------------
    def flush(self):
        """Run the pending nodes with the real kernels installed."""
        nodes = self.nodes
        if not nodes:
            return
        self.nodes = []
        self.uninstall()
        try:
            self.segments.append(self.runner(nodes, self))
        finally:
            self.install()

    def run_now(self, node):
        """Run the pending nodes and then `node`, returning the kernel's answer."""
        self.flush()
        if self.program is not None:
            self.program.append(("node", node))
        self.uninstall()
        try:
            return node.kernel(*node.args, **node.kwargs)
        finally:
            self.install()

    def outside(self, fn, *args):
        """fn(*args) run now with the real kernels and allocator, so that what it makes is no
        part of the recording (a cached scalar operand: a constant of every call). Nothing
        pending reads what it makes, so it need not wait for them. Another thread's call
        (its eager op while this capture records) runs as it is: the recorders pass it on."""
        if get_ident() != self.thread:
            return fn(*args)
        self.uninstall()
        try:
            return fn(*args)
        finally:
            self.install()

    def graph_break(self, reason):
        frame = user_frame()
        self.breaks.append((reason, frame))
        if self.on_break is not None:
            self.on_break(reason, frame)
        self.flush()
        if self.fullgraph and not self.internal_reads:
            file, line, name = frame
            raise GraphBreakError(
                f"tensorlib.compile(fullgraph=True): the graph breaks at {file}:{line} (in "
                f"{name}): {reason} needs a tensor's value in Python. Remove the data-dependent "
                f"step or compile with fullgraph=False.")


def capture_devices(tensors):
    """The devices a call records on: the cpu and those of its tensors."""
    devices = [canonical("cpu")]
    for t in tensors:
        d = t._device
        if all(d is not e for e in devices):
            devices.append(d)
    return devices


_ONE_CAPTURE = Lock()          # held by the thread whose capture is in progress


def run_captured(fn, args, kwargs, devices, runner, fullgraph=False, on_break=None,
                 program=None):
    """Call fn(*args, **kwargs) under a capture; every recorded kernel has run when it
    returns (or raises: the kernels recorded before an exception run first, as in eager).
    `program`, a list, receives what ran (for `replay`)."""
    # A nested compiled call is part of the outer one; another thread's call while one records
    # runs eagerly, its kernels passing through the recorders. The recorders are the process's
    # and a capture takes them out at every flush, so only one capture may exist at a time:
    # two threads installing and removing them in turn left recorders or a stale capture.
    if not _ONE_CAPTURE.acquire(blocking=False):
        return fn(*args, **kwargs), None
    try:
        cap = Capture(devices, runner, fullgraph, on_break)
        cap.program = program
        cap.install()
        try:
            try:
                result = fn(*args, **kwargs)
            except BaseException:
                exc = sys.exc_info()[1]
                try:
                    cap.flush()
                except Exception:
                    pass
                raise exc
            cap.flush()
        finally:
            cap.uninstall()
    finally:
        _ONE_CAPTURE.release()
    return result, cap
