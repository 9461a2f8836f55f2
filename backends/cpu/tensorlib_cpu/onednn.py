"""oneDNN (libdnnl 3.x) bound through ctypes at run time: no build-time dependency.

The library comes from a wheel that puts `libdnnl.so.3` in <prefix>/lib, found where
blas_choice looks for MKL's. `onednn-cpu-gomp` (GNU OpenMP, 3.2) is the one to install: it
runs on the same libgomp thread team as the backend's own kernels. The `onednn` wheel (3.13)
is a SYCL/TBB build that also needs Intel's DPC++ runtime, and a second thread pool; it is
taken too when it loads. `TENSORLIB_ONEDNN=0` turns oneDNN off.

This module only binds the C API and wraps its handles: `library()` (None when absent or
off), `Memory` descriptors, `Primitive`s and their execution. What runs on it lives in
onednn_conv (float32 convolutions) and onednn_qlinear (the int8 dynamic Linear)."""
import ctypes
import glob
import os
import threading
from collections import OrderedDict


from tensorlib_cpu import blas_choice, fastreduce
from tensorlib_cpu.onednn_exec import ExecutionError, set_threads

__all__ = ["ENV", "Descriptor", "Library", "Memory", "OneDNNError", "Primitive", "describe",
           "find", "library", "use"]

ENV = "TENSORLIB_ONEDNN"

# dnnl_common_types.h / dnnl_types.h (3.x; stable since 3.0)
F32 = 3
FORMAT_ANY = 1
ENGINE_CPU = 1
STREAM_IN_ORDER = 1
FORWARD_TRAINING = 64
FORWARD_INFERENCE = 96
BACKWARD_DATA = 160
BACKWARD_WEIGHTS = 192
CONVOLUTION_DIRECT = 1
ELTWISE_RELU = 0x20
QUERY_IMPL_INFO_STR = 8
QUERY_SRC_MD, QUERY_DIFF_SRC_MD, QUERY_WEIGHTS_MD, QUERY_DIFF_WEIGHTS_MD = 129, 130, 131, 132
QUERY_DST_MD, QUERY_DIFF_DST_MD, QUERY_WORKSPACE_MD = 133, 134, 135
ARG_SRC, ARG_DST, ARG_WEIGHTS, ARG_BIAS, ARG_WORKSPACE = 1, 17, 33, 41, 64
ARG_DIFF_SRC, ARG_DIFF_DST, ARG_DIFF_WEIGHTS, ARG_DIFF_BIAS = 129, 145, 161, 169
ARG_FROM, ARG_TO = 1, 17

_DIMS = ctypes.c_int64 * 12
_P = ctypes.c_void_p
_PP = ctypes.POINTER(ctypes.c_void_p)


class OneDNNError(ExecutionError):
    """A oneDNN call returned a status other than success (the caller falls back)."""


class _ExecArg(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_int), ("memory", ctypes.c_void_p)]


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int), ("patch", ctypes.c_int),
                ("hash", ctypes.c_char_p), ("cpu_runtime", ctypes.c_uint),
                ("gpu_runtime", ctypes.c_uint)]


_SIGNATURES = {
    "dnnl_version": (ctypes.POINTER(_Version), []),
    "dnnl_engine_create": (ctypes.c_int, [_PP, ctypes.c_int, ctypes.c_size_t]),
    "dnnl_stream_create": (ctypes.c_int, [_PP, _P, ctypes.c_uint]),
    "dnnl_stream_wait": (ctypes.c_int, [_P]),
    "dnnl_memory_desc_create_with_strides": (ctypes.c_int, [_PP, ctypes.c_int, _DIMS,
                                                            ctypes.c_int, _DIMS]),
    "dnnl_memory_desc_create_with_tag": (ctypes.c_int, [_PP, ctypes.c_int, _DIMS, ctypes.c_int,
                                                        ctypes.c_int]),
    "dnnl_memory_desc_clone": (ctypes.c_int, [_PP, _P]),
    "dnnl_memory_desc_destroy": (ctypes.c_int, [_P]),
    "dnnl_memory_desc_equal": (ctypes.c_int, [_P, _P]),
    "dnnl_memory_desc_get_size": (ctypes.c_size_t, [_P]),
    "dnnl_memory_create": (ctypes.c_int, [_PP, _P, _P, _P]),
    "dnnl_memory_set_data_handle": (ctypes.c_int, [_P, _P]),
    "dnnl_memory_destroy": (ctypes.c_int, [_P]),
    "dnnl_primitive_desc_query_md": (_P, [_P, ctypes.c_int, ctypes.c_int]),
    "dnnl_primitive_desc_query": (ctypes.c_int, [_P, ctypes.c_int, ctypes.c_int, _P]),
    "dnnl_primitive_desc_destroy": (ctypes.c_int, [_P]),
    "dnnl_primitive_create": (ctypes.c_int, [_PP, _P]),
    "dnnl_primitive_destroy": (ctypes.c_int, [_P]),
    "dnnl_primitive_execute": (ctypes.c_int, [_P, _P, ctypes.c_int,
                                              ctypes.POINTER(_ExecArg)]),
    "dnnl_reorder_primitive_desc_create": (ctypes.c_int, [_PP, _P, _P, _P, _P, _P]),
    "dnnl_primitive_attr_create": (ctypes.c_int, [_PP]),
    "dnnl_primitive_attr_destroy": (ctypes.c_int, [_P]),
    "dnnl_primitive_attr_set_scales_mask": (ctypes.c_int, [_P, ctypes.c_int, ctypes.c_int]),
    "dnnl_primitive_attr_set_zero_points_mask": (ctypes.c_int, [_P, ctypes.c_int,
                                                                ctypes.c_int]),
    "dnnl_post_ops_create": (ctypes.c_int, [_PP]),
    "dnnl_post_ops_destroy": (ctypes.c_int, [_P]),
    "dnnl_post_ops_append_eltwise": (ctypes.c_int, [_P, ctypes.c_int, ctypes.c_float,
                                                    ctypes.c_float]),
    "dnnl_primitive_attr_set_post_ops": (ctypes.c_int, [_P, _P]),
    "dnnl_matmul_primitive_desc_create": (ctypes.c_int, [_PP, _P, _P, _P, _P, _P, _P]),
    "dnnl_convolution_forward_primitive_desc_create": (
        ctypes.c_int, [_PP, _P, ctypes.c_int, ctypes.c_int, _P, _P, _P, _P, _DIMS, _DIMS,
                       _DIMS, _DIMS, _P]),
    "dnnl_convolution_backward_data_primitive_desc_create": (
        ctypes.c_int, [_PP, _P, ctypes.c_int, _P, _P, _P, _DIMS, _DIMS, _DIMS, _DIMS, _P,
                       _P]),
    "dnnl_convolution_backward_weights_primitive_desc_create": (
        ctypes.c_int, [_PP, _P, ctypes.c_int, _P, _P, _P, _P, _DIMS, _DIMS, _DIMS, _DIMS, _P,
                       _P]),
}


class PlanCache(OrderedDict):
    """Primitive plans by key, the least recently used dropped past `size`. A build that
    oneDNN refuses (or that the caller declines by returning None) is cached as None, so the
    caller falls back at once next time instead of building again."""

    def __init__(self, size):
        super().__init__()
        self.size = size

    def plan(self, key, build, threads):
        """The plan for key; build() makes it on first use, with `threads` (the count it
        will run on) set for oneDNN's JIT."""
        if key in self:
            self.move_to_end(key)
            return self[key]
        set_threads(threads)
        try:
            found = build()
        except OneDNNError:
            found = None
        self[key] = found
        while len(self) > self.size:
            self.popitem(last=False)
        return found


def dims(values):
    """A dnnl_dims_t from a sequence of ints."""
    return _DIMS(*values)


def find():
    """The path of `libdnnl.so.3` (the 3.x soname; newest first), or None when absent."""
    for d in blas_choice._library_dirs():
        found = sorted(glob.glob(os.path.join(d, "libdnnl.so.3*")), reverse=True)
        if found:
            return found[-1] if os.path.basename(found[-1]) == "libdnnl.so.3" else found[0]
    return None


class Library:
    """The loaded libdnnl: its functions (attributes named as in C without `dnnl_`), one CPU
    engine and one in-order stream. `call(name, *args)` raises OneDNNError on a failure."""

    def __init__(self, path):
        self.path = path
        self._dll = ctypes.CDLL(path)
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(self._dll, name)
            fn.restype, fn.argtypes = restype, argtypes
            setattr(self, name[len("dnnl_"):], fn)
        v = self.version().contents
        self.version_string = f"{v.major}.{v.minor}.{v.patch}"
        if v.major != 3:
            raise OSError(f"{path} is oneDNN {self.version_string}; tensorlib binds the 3.x API")
        self.openmp = v.cpu_runtime == 2          # DNNL_RUNTIME_OMP
        self.engine = _P()
        self.call("engine_create", ctypes.byref(self.engine), ENGINE_CPU, 0)
        self.stream = _P()
        self.call("stream_create", ctypes.byref(self.stream), self.engine, STREAM_IN_ORDER)
        self.lock = threading.Lock()
        # for onednn_exec.Executor: the per-call functions, by address
        self.run_functions = tuple(ctypes.cast(getattr(self._dll, f"dnnl_{name}"), _P).value
                                   for name in ("memory_set_data_handle", "primitive_execute",
                                                "stream_wait"))

    def call(self, name, *args):
        status = getattr(self, name)(*args)
        if status != 0:
            raise OneDNNError(f"dnnl_{name} failed with status {status}")

    def threads(self):
        """The OpenMP thread count oneDNN's regions are to run on: the backend's
        (set_num_threads); 0 for a build on its own thread pool. The OpenMP setting is per
        calling thread, so the executor sets it on every call (well under 1 us)."""
        return fastreduce.threads_now() if self.openmp else 0


class Descriptor:
    """A float32 memory descriptor this module owns (destroyed with it)."""

    def __init__(self, lib, md):
        self.lib, self.md = lib, md

    @classmethod
    def any(cls, lib, shape):
        """Leaves the layout to the primitive (format `any`)."""
        md = _P()
        lib.call("memory_desc_create_with_tag", ctypes.byref(md), len(shape), dims(shape), F32,
                 FORMAT_ANY)
        return cls(lib, md)

    def __del__(self):
        try:
            self.lib.memory_desc_destroy(self.md)
        except Exception:   # interpreter shutdown: the process frees it anyway
            pass


class Memory(Descriptor):
    """A memory descriptor and one memory object on it, whose data handle is set per call."""

    def __init__(self, lib, md):
        super().__init__(lib, md)
        self.nbytes = lib.memory_desc_get_size(md)
        self.handle = _P()
        lib.call("memory_create", ctypes.byref(self.handle), md, lib.engine, None)

    @classmethod
    def strided(cls, lib, shape, strides):
        """The layout of a numpy array: float32 with the given element strides."""
        md = _P()
        lib.call("memory_desc_create_with_strides", ctypes.byref(md), len(shape), dims(shape),
                 F32, dims(strides))
        return cls(lib, md)

    @classmethod
    def chosen(cls, lib, pd, query):
        """The layout a primitive descriptor chose for one of its arguments (a copy)."""
        md = _P()
        lib.call("memory_desc_clone", ctypes.byref(md), lib.primitive_desc_query_md(pd, query, 0))
        return cls(lib, md)

    def same_as(self, other):
        return bool(self.lib.memory_desc_equal(self.md, other.md))

    def bind(self, pointer):
        self.lib.call("memory_set_data_handle", self.handle, pointer)

    def __del__(self):
        try:
            self.lib.memory_destroy(self.handle)
        except Exception:   # interpreter shutdown
            pass
        super().__del__()


class Primitive:
    """A primitive made from a primitive descriptor (which it destroys), run with a fixed
    list of (argument id, Memory) pairs whose data handles the caller binds first."""

    def __init__(self, lib, pd, args):
        self.lib = lib
        self.primitive = _P()
        try:
            lib.call("primitive_create", ctypes.byref(self.primitive), pd)
            info = ctypes.c_char_p()
            lib.primitive_desc_query(pd, QUERY_IMPL_INFO_STR, 0, ctypes.byref(info))
            self.impl = (info.value or b"?").decode()
        finally:
            lib.primitive_desc_destroy(pd)
        self._args = (_ExecArg * len(args))(*[_ExecArg(a, m.handle) for a, m in args])
        self._nargs = len(args)

    def step(self):
        """(primitive handle, address of its argument array, argument count), for
        onednn_exec.Executor (which keeps this object alive)."""
        return self.primitive.value, ctypes.addressof(self._args), self._nargs

    @classmethod
    def reorder(cls, lib, src, dst):
        """A layout conversion from Memory src to Memory dst."""
        pd = _P()
        lib.call("reorder_primitive_desc_create", ctypes.byref(pd), src.md, lib.engine, dst.md,
                 lib.engine, None)
        return cls(lib, pd, [(ARG_FROM, src), (ARG_TO, dst)])

    def run(self):
        self.lib.call("primitive_execute", self.primitive, self.lib.stream, self._nargs,
                      self._args)

    def __del__(self):
        try:
            self.lib.primitive_destroy(self.primitive)
        except Exception:   # interpreter shutdown
            pass


_state = {}


def _off_by_environment():
    return os.environ.get(ENV, "").strip().lower() in ("0", "off", "false", "no")


def _load():
    """(Library, None), or (None, why not); loaded once per process."""
    if "loaded" not in _state:
        path = find()
        if path is None:
            _state["loaded"] = None, "not installed (pip install onednn-cpu-gomp)"
        else:
            try:
                _state["loaded"] = Library(path), None
            except (OSError, AttributeError, OneDNNError) as exc:
                _state["loaded"] = None, f"{path} did not load: {exc}"
    return _state["loaded"]


def library():
    """The loaded Library, or None (absent, failed to load, or TENSORLIB_ONEDNN=0)."""
    if "lib" not in _state:
        if _off_by_environment():
            _state["lib"], _state["why"] = None, f"off ({ENV}=0)"
        else:
            _state["lib"], _state["why"] = _load()
    return _state["lib"]


def use(enabled):
    """Turn oneDNN on (if installed) or off in this process, whatever TENSORLIB_ONEDNN said
    at start-up; returns whether it is now in use. For tests and side-by-side timings."""
    if enabled:
        _state["lib"], _state["why"] = _load()
    else:
        _state["lib"], _state["why"] = None, "off (onednn.use(False))"
    return _state["lib"] is not None


def describe():
    """One line for `tensorlib info`."""
    lib = library()
    if lib is None:
        return _state["why"]
    runtime = "OpenMP" if lib.openmp else "its own thread pool"
    return f"oneDNN {lib.version_string} ({lib.path}, {runtime})"

