"""The dialect base class of the C kernel generator (tinygrad's CStyleLanguage idea).

A dialect is mostly a block of class attributes: how the target spells a kernel, its address
spaces, thread and group indices, the local barrier, its storage type for each tensorlib dtype
and how half-precision values are loaded and stored. `templates` only ever writes code through
a dialect, so a CUDA dialect is a small subclass (kernel prefix `extern "C" __global__ void`,
no `__global` qualifier, `__shared__`, `__syncthreads()`, `threadIdx.x`..., `__half` with
`__half2float`), and OpenCL's specifics live in `tensorlib_opencl/dialect.py`.

Types in templates: `i64`/`u64`/`u32` are typedefs every dialect's preamble defines; a tensor
of dtype d is stored as `storage(d)` and computed with as `compute(d)` (float for the 16-bit
floats, whose loads and stores go through `load`/`store`).
"""

# dtype name -> (kind, bits): kind b(ool), u(nsigned), i(nt), f(loat)
DTYPES = {"bool": ("b", 8), "uint8": ("u", 8), "int8": ("i", 8), "int16": ("i", 16),
          "int32": ("i", 32), "int64": ("i", 64), "float16": ("f", 16),
          "bfloat16": ("f", 16), "float32": ("f", 32), "float64": ("f", 64),
          "uint16": ("u", 16), "uint32": ("u", 32), "uint64": ("u", 64)}

_INT_LIMITS = {"bool": (0, 1), "uint8": (0, 255), "int8": (-128, 127),
               "int16": (-32768, 32767), "int32": (-2 ** 31, 2 ** 31 - 1),
               "int64": (-2 ** 63, 2 ** 63 - 1), "uint16": (0, 2 ** 16 - 1),
               "uint32": (0, 2 ** 32 - 1), "uint64": (0, 2 ** 64 - 1)}


def kind(dtype):
    return DTYPES[dtype][0]


def is_float(dtype):
    return DTYPES[dtype][0] == "f"


class CDialect:
    """What a C-like GPU language needs to spell; subclasses fill the attributes."""

    name = "c"
    kernel_prefix = "void"            # before the kernel name
    global_ = ""                      # address space of kernel pointer arguments
    local_ = "static"                 # address space of work-group shared arrays
    restrict = "restrict"
    barrier = ""                      # local-memory barrier statement (without ';')
    func_prefix = "inline"            # before a device helper function
    header = ""                       # includes and macros, once per translation unit
    preamble = ""                     # typedefs i64/u64/u32, helper functions
    type_map = {}                     # dtype name -> storage C type
    compute_map = {"float16": "float", "bfloat16": "float"}   # differing compute types

    # -- indices ---------------------------------------------------------------------------
    def global_id(self, d):
        raise NotImplementedError(f"{type(self).__name__} needs global_id")

    def global_size(self, d):
        raise NotImplementedError(f"{type(self).__name__} needs global_size")

    def local_id(self, d):
        raise NotImplementedError(f"{type(self).__name__} needs local_id")

    def group_id(self, d):
        raise NotImplementedError(f"{type(self).__name__} needs group_id")

    def local_size(self, d):
        raise NotImplementedError(f"{type(self).__name__} needs local_size")

    # -- types -----------------------------------------------------------------------------
    def storage(self, dtype):
        return self.type_map[dtype]

    def compute(self, dtype):
        return self.compute_map.get(dtype, self.type_map[dtype])

    def ptr(self, dtype, const=False):
        """A kernel pointer parameter's type."""
        return f"{self.global_}{'const ' if const else ''}{self.storage(dtype)}*"

    def load(self, dtype, ptr, index):
        """An expression: element `index` of `ptr`, in compute(dtype)."""
        return f"{ptr}[{index}]"

    def store(self, dtype, ptr, index, value):
        """A statement: element `index` of `ptr` = value (already in compute(dtype))."""
        return f"{ptr}[{index}] = {value};"

    def convert(self, expr, dtype):
        """`expr` (any arithmetic type) as compute(dtype); bool is `!= 0`."""
        if dtype == "bool":
            return f"(({self.compute('bool')})(({expr}) != 0))"
        return f"(({self.compute(dtype)})({expr}))"

    def literal(self, value, dtype):
        """A C literal of `value` in compute(dtype)."""
        k = kind(dtype)
        if k == "f":
            if value != value:
                return "NAN" if dtype != "float64" else "((double)NAN)"
            if value in (float("inf"), float("-inf")):
                inf = "INFINITY" if dtype != "float64" else "((double)INFINITY)"
                return inf if value > 0 else f"(-{inf})"
            text = repr(float(value))
            return f"{text}" if dtype == "float64" else f"{text}f"
        value = int(value)
        if dtype == "int64" and value == -2 ** 63:
            return "((i64)(-9223372036854775807L - 1))"
        suffix = "L" if dtype == "int64" else ""
        return f"(({self.compute(dtype)}){value}{suffix})"

    def lowest(self, dtype):
        return self.literal(float("-inf"), dtype) if is_float(dtype) else \
            self.literal(_INT_LIMITS[dtype][0], dtype)

    def highest(self, dtype):
        return self.literal(float("inf"), dtype) if is_float(dtype) else \
            self.literal(_INT_LIMITS[dtype][1], dtype)

    def vector(self, ctype, width):
        raise NotImplementedError(f"{type(self).__name__} has no vector types")

    def vload(self, width, ptr, index):
        raise NotImplementedError(f"{type(self).__name__} has no vector loads")

    def vstore(self, width, value, ptr, index):
        raise NotImplementedError(f"{type(self).__name__} has no vector stores")

    # -- whole kernels ---------------------------------------------------------------------
    def extensions(self, dtypes):
        """Pragmas a program using `dtypes` needs (OpenCL: cl_khr_fp64)."""
        return ""

    def kernel(self, name, params, body):
        return f"{self.kernel_prefix} {name}({', '.join(params)})\n{{\n{body}\n}}\n"

    def program(self, kernels, dtypes=()):
        return self.extensions(dtypes) + self.header + self.preamble + "\n" + "\n".join(kernels)
