"""The backend plugin contract: what a device backend gives tensorlib.

A backend is one object, named by an entry point in the group ``tensorlib.backends``::

    [project.entry-points."tensorlib.backends"]
    toy = "tensorlib_toy:backend"

Subclass :class:`Backend` and override what the defaults say is missing. Kernels take
tensors (``tensorlib.Tensor``) with arbitrary strides -- stride 0 for broadcast inputs, any
storage offset -- and write into preallocated outputs given first. The framework has already
promoted the inputs to one dtype, broadcast them to the output shape and put them on the
kernel's device, so a kernel does only the arithmetic. Index arguments (gather,
scatter_add, index_select) are int64 and already checked: 0 <= index < size -- unless the
kernel has the attribute ``checks_bounds = True``: then the op leaves the check to it (a
check in the op costs four small ops and a read back to the host), and the kernel raises
:class:`IndexOutOfBounds` for the first index outside [0, size) in row-major order of the
index, before scatter_add adds anything.
"""

API_VERSION = 1
"""The plugin API this tensorlib implements; a backend states the one it targets."""


class IndexOutOfBounds(IndexError, RuntimeError):
    """Out-of-range index in gather/scatter/index_*: PyTorch raises RuntimeError there and
    IndexError when indexing; this is both. Message: "index {i} is out of bounds for
    dimension {dim} with size {size}"."""

UNARY_OPS = ("abs", "neg", "exp", "expm1", "log", "log1p", "sqrt", "sin", "cos", "tan",
             "asin", "acos", "atan", "sinh", "cosh", "tanh", "erf", "floor", "ceil", "round",
             "trunc", "sign", "isnan", "logical_not", "bitwise_not")
BINARY_OPS = ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "remainder", "fmod",
              "floor_divide", "atan2", "eq", "ne", "lt", "le", "gt", "ge", "logical_and",
              "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor")
REDUCTION_OPS = ("sum", "prod", "amax", "amin")
INDEX_REDUCTION_OPS = ("argmax", "argmin")
SCAN_OPS = ("cumsum", "cumprod")

PRIMITIVES = {
    "fill": "fill(out, value): every element of out = value (a Python number)",
    "copy": "copy(out, src): strided copy, same shape, converting src's dtype to out's",
    "where": "where(out, cond, a, b): out = a where cond (bool) else b",
    "matmul": "matmul(out, a, b): batched GEMM, a (B,M,K) @ b (B,K,N) -> out (B,M,N)",
    "gather": "gather(out, x, dim, index): out[..i..] = x[..index[..i..]..] along dim",
    "scatter_add": "scatter_add(out, dim, index, src): out[..index[..i..]..] += src[..i..]",
    "index_select": "index_select(out, x, dim, index): out = x indexed by 1-D int64 index",
    "sort": "sort(values, indices, x, dim, descending, stable): sort along dim",
    "random_uniform": "random_uniform(out, seed, offset): Philox4x32-10 uniforms in [0, 1) "
                      "in out's (floating) dtype; number j of the stream goes to element j of "
                      "out in row-major (C) order of its elements, whatever out's strides",
    "random_normal": "random_normal(out, seed, offset): Philox4x32-10 Box-Muller normals, "
                     "number j to element j of out in row-major (C) order (as random_uniform)",
}
PRIMITIVES.update({op: f"{op}(out, x): elementwise" for op in UNARY_OPS})
PRIMITIVES.update({op: f"{op}(out, a, b): elementwise; comparisons write bool"
                   for op in BINARY_OPS})
PRIMITIVES.update({op: f"{op}(out, x, dims): reduce over the tuple dims; out has x's shape "
                       "with size 1 at each reduced dim" for op in REDUCTION_OPS})
PRIMITIVES.update({op: f"{op}(out, x, dim): int64 index of the first extreme along dim; out "
                       "has size 1 at dim" for op in INDEX_REDUCTION_OPS})
PRIMITIVES.update({op: f"{op}(out, x, dim): inclusive scan along dim" for op in SCAN_OPS})

OUTPUT_COUNTS = {"sort": 2}
"""How many leading arguments of a primitive are outputs (1 unless listed)."""


class Backend:
    """Base class of a device backend. Every default raises, saying what is missing."""

    device_type = None
    api_version = API_VERSION
    install_hint = None          # e.g. 'pip install "tensorlib[opencl]"', shown when unavailable

    def is_available(self):
        return self.unavailable_reason() is None

    def unavailable_reason(self):
        """None when usable, else a short reason (which package is missing, no device)."""
        return None

    def device_count(self):
        raise NotImplementedError(f"{type(self).__name__} needs device_count()")

    def device_name(self, index):
        return f"{self.device_type}:{index}"

    def runs_on_host(self, index):
        """True when device `index` computes on the host CPU (an OpenCL CPU driver such as
        PoCL): tensorlib.accelerator does not count it, as PyTorch's accelerator is a device
        other than the host CPU."""
        return False

    def allocate(self, nbytes, index):
        """A handle to `nbytes` of device memory on device `index` (the Storage keeps it)."""
        raise NotImplementedError(f"{type(self).__name__} needs allocate(nbytes, index)")

    release = None
    """Optional callable(handle, nbytes), run when a storage dies (to return it to a pool)."""

    fused_kernel = None
    """Optional callable(spec, sizes, strides) -> kernel(tensors): the backend's code
    generator for `tensorlib.compile`'s fused elementwise kernels (`tensorlib.codegen.fused`
    holds the spec). Without one, compiled graphs run this backend's kernels one by one."""

    device_timers = None
    """Optional callable() -> [DeviceTimer]: one per device in use, so that a profile with
    this backend's activity gets each kernel's time on the device (the timer's methods are
    listed in `tensorlib/profiler/_device.py`). Without one, the profiler times on the host."""

    def copy_from_host(self, dst, array):
        """Write the numpy `array` (dst's dtype and shape) into the tensor dst, which may be a
        strided view."""
        raise NotImplementedError(f"{type(self).__name__} needs copy_from_host(dst, array)")

    def copy_to_host(self, src):
        """A C-contiguous numpy array holding the tensor src (any strides)."""
        raise NotImplementedError(f"{type(self).__name__} needs copy_to_host(src)")

    def copy_between_devices(self, dst, src):
        """dst = src where both are this backend's tensors on different device indices."""
        self.copy_from_host(dst, self.copy_to_host(src))

    def synchronize(self, index=None):
        """Wait for all queued work on the device."""

    def register(self, table):
        """Fill `table` (op name -> kernel) with this backend's kernels."""
        raise NotImplementedError(f"{type(self).__name__} needs register(table)")
