"""CUDA devices through pycuda: discovery, the primary context of each device (the one the
CUDA runtime and cuBLAS use too), the current device, and per device a default stream and
the current stream (per thread, as in torch).

The default stream is a blocking stream the backend creates, so the legacy NULL stream
(which some driver calls use) still orders itself after it."""
import threading

_lock = threading.Lock()
_devices = None
_local = threading.local()


def driver():
    import pycuda.driver as drv
    return drv


def probe():
    """None when at least one GPU can be used, else why not."""
    try:
        drv = driver()
    except ModuleNotFoundError as exc:
        if exc.name in ("pycuda", "pycuda.driver"):
            return "pycuda is not installed"
        return f"pycuda could not be imported: {exc}"
    except Exception as exc:               # no libcuda.so.1 (no driver), a broken build
        return f"pycuda could not be imported: {exc}"
    try:
        drv.init()
        if drv.Device.count() == 0:
            return "no CUDA device was found"
    except Exception as exc:
        return f"the CUDA driver could not be initialised (no NVIDIA driver?): {exc}"
    return None


class Properties:
    """torch.cuda's _CudaDeviceProperties fields, from the driver's attributes."""

    def __init__(self, dev, drv):
        a = drv.device_attribute
        attrs = dev.get_attributes()
        self.name = dev.name()
        self.major, self.minor = dev.compute_capability()
        self.total_memory = dev.total_memory()
        self.multi_processor_count = attrs[a.MULTIPROCESSOR_COUNT]
        self.max_threads_per_multi_processor = attrs[a.MAX_THREADS_PER_MULTIPROCESSOR]
        self.warp_size = attrs[a.WARP_SIZE]
        self.max_threads_per_block = attrs[a.MAX_THREADS_PER_BLOCK]
        self.shared_memory_per_block = attrs[a.MAX_SHARED_MEMORY_PER_BLOCK]
        self.L2_cache_size = attrs.get(a.L2_CACHE_SIZE, 0)
        self.pci_bus_id = dev.pci_bus_id()
        self.is_integrated = bool(attrs.get(a.INTEGRATED, 0))
        self.uuid = ""

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2 ** 20}MB, "
                f"multi_processor_count={self.multi_processor_count})")


class Device:
    """One GPU: its primary context (retained once) and default stream."""

    def __init__(self, index):
        drv = driver()
        self.index = index
        self.dev = drv.Device(index)
        self.props = Properties(self.dev, drv)
        self.capability = (self.props.major, self.props.minor)
        self.context = self.dev.retain_primary_context()
        self.context.push()
        try:
            self.default_stream = drv.Stream()
        finally:
            drv.Context.pop()
        self.identity = "|".join([self.props.name, f"sm_{self.props.major}{self.props.minor}",
                                  str(drv.get_driver_version())])

    def activate(self):
        """Make this device's context current on the calling thread."""
        if getattr(_local, "active", None) is not self:
            prev = getattr(_local, "active", None)
            if prev is not None:
                driver().Context.pop()
            self.context.push()
            _local.active = self

    @property
    def stream(self):
        """The calling thread's current stream on this device."""
        streams = getattr(_local, "streams", None)
        if streams is None:
            streams = _local.streams = {}
        return streams.get(self.index, self.default_stream)

    def set_stream(self, stream):
        streams = getattr(_local, "streams", None)
        if streams is None:
            streams = _local.streams = {}
        streams[self.index] = stream


def devices():
    global _devices
    if _devices is None:
        with _lock:
            if _devices is None:
                drv = driver()
                drv.init()
                _devices = [None] * drv.Device.count()
    return _devices


def get(index):
    found = devices()
    if index is None:
        index = current()
    if not 0 <= index < len(found):
        raise RuntimeError(f"cuda:{index} does not exist: {len(found)} CUDA device(s)")
    if found[index] is None:
        with _lock:
            if found[index] is None:
                found[index] = Device(index)
    return found[index]


def current():
    return getattr(_local, "current", 0)


def set_current(index):
    get(index).activate()
    _local.current = index
