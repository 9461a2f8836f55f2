"""Fake `pycuda.driver` for the CUDA backend's glue test: one device, memory in a bytearray,
copies that really copy, and Functions that check their packed arguments (with `struct`,
as pycuda packs them) and record each launch."""
import enum
import os
import struct

import numpy as np

HEAP = bytearray(int(os.environ.get("FAKE_CUDA_HEAP_MB", "64")) << 20)
_BASE = 1 << 20                  # device pointers start here (0 stays invalid)
_next = [_BASE]
LAUNCHES = []
STREAMS = []
EVENTS_DONE = [True]      # what Event.query answers (a test holds work "in flight" with False)


class Error(Exception):
    pass


class MemoryError(Error):  # noqa: A001 - pycuda's name
    pass


class device_attribute(enum.IntEnum):  # noqa: N801
    MULTIPROCESSOR_COUNT = 1
    MAX_THREADS_PER_MULTIPROCESSOR = 2
    WARP_SIZE = 3
    MAX_THREADS_PER_BLOCK = 4
    MAX_SHARED_MEMORY_PER_BLOCK = 5
    L2_CACHE_SIZE = 6
    INTEGRATED = 7


class event_flags(enum.IntFlag):  # noqa: N801
    DEFAULT = 0
    BLOCKING_SYNC = 1
    DISABLE_TIMING = 2
    INTERPROCESS = 4


def init():
    pass


def get_driver_version():
    return 13000


class Context:
    stack = []

    def push(self):
        Context.stack.append(self)

    @staticmethod
    def pop():
        Context.stack.pop()

    @staticmethod
    def synchronize():
        pass


class Device:
    @staticmethod
    def count():
        return 1

    def __init__(self, index):
        assert index == 0

    def name(self):
        return "Fake H200"

    def compute_capability(self):
        return (9, 0)

    def total_memory(self):
        return len(HEAP)

    def pci_bus_id(self):
        return "0000:00:00.0"

    def get_attributes(self):
        return {device_attribute.MULTIPROCESSOR_COUNT: 132,
                device_attribute.MAX_THREADS_PER_MULTIPROCESSOR: 2048,
                device_attribute.WARP_SIZE: 32, device_attribute.MAX_THREADS_PER_BLOCK: 1024,
                device_attribute.MAX_SHARED_MEMORY_PER_BLOCK: 49152,
                device_attribute.L2_CACHE_SIZE: 50 << 20, device_attribute.INTEGRATED: 0}

    def retain_primary_context(self):
        return Context()


def _check_context():
    if not Context.stack:
        raise Error("no current context")


class Stream:
    def __init__(self, flags=0):
        _check_context()
        STREAMS.append(self)
        self.handle = 0x1000 + len(STREAMS)

    def synchronize(self):
        pass

    def is_done(self):
        return True

    def wait_for_event(self, event):
        assert isinstance(event, Event)


class Event:
    """Recording stamps a fake device clock that advances 1 us per record (time_since: ms)."""
    clock = [0]

    def __init__(self, flags=0):
        self.flags = flags
        self.stamp = None

    def record(self, stream=None):
        assert stream is None or isinstance(stream, Stream)
        Event.clock[0] += 1
        self.stamp = Event.clock[0]

    def query(self):
        return EVENTS_DONE[0]

    def synchronize(self):
        pass

    def time_since(self, other):
        assert self.stamp is not None and other.stamp is not None, "an event never recorded"
        return (self.stamp - other.stamp) / 1000.0


class DeviceAllocation:
    def __init__(self, ptr):
        self.ptr = ptr

    def __int__(self):
        return self.ptr

    __index__ = __int__

    def free(self):
        pass


def mem_alloc(n):
    _check_context()
    ptr = _next[0]
    if ptr + n > len(HEAP):
        raise MemoryError("cuMemAlloc failed: out of memory")
    _next[0] = ptr + -(-n // 256) * 256
    return DeviceAllocation(ptr)


def mem_get_info():
    return len(HEAP) - _next[0], len(HEAP)


def _view(ptr, nbytes):
    assert _BASE <= ptr and ptr + nbytes <= len(HEAP), "copy outside allocated memory"
    return memoryview(HEAP)[ptr:ptr + nbytes]


def memcpy_htod_async(dst, src, stream=None):
    data = np.ascontiguousarray(src).reshape(-1).view(np.uint8)
    _view(int(dst), data.size)[:] = data.tobytes()


def memcpy_dtoh_async(dst, src, stream=None):
    out = dst.reshape(-1).view(np.uint8)
    out[:] = np.frombuffer(_view(int(src), out.size), np.uint8)


def pagelocked_empty(shape, dtype):
    _check_context()
    return np.empty(shape, dtype)


def to_device(array):
    alloc = mem_alloc(array.nbytes)
    memcpy_htod_async(alloc, array)
    return alloc


class Function:
    def __init__(self, name):
        self.name = name

    def prepare(self, fmt):
        self.arg_format = fmt

    def prepared_async_call(self, grid, block, stream, *args):
        _check_context()
        assert len(grid) == 3 and len(block) == 3 and all(g >= 1 for g in grid)
        assert block[0] * block[1] * block[2] <= 1024
        assert stream is None or isinstance(stream, Stream)
        struct.pack(self.arg_format, *args)        # wrong count or type raises here
        LAUNCHES.append((self.name, grid, block, args))


class Module:
    def get_function(self, name):
        return Function(name)


def module_from_buffer(binary):
    assert binary[:4] == b"\x7fELF"
    return Module()
