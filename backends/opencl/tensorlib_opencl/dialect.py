"""OpenCL C: only what differs from the generator's C dialect base."""
from tensorlib.codegen.cdialect import CDialect

_PREAMBLE = """
typedef long i64;
typedef ulong u64;
typedef uint u32;
inline float tl_bf2f(ushort x) { return as_float(((uint)x) << 16); }
inline ushort tl_f2bf(float f) {
  if (isnan(f)) return (ushort)0x7fc0;
  uint u = as_uint(f);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}
"""


class OpenCLDialect(CDialect):
    name = "opencl"
    kernel_prefix = "__kernel void"
    global_ = "__global "
    local_ = "__local"
    barrier = "barrier(CLK_LOCAL_MEM_FENCE)"
    preamble = _PREAMBLE
    type_map = {"bool": "uchar", "uint8": "uchar", "int8": "char", "int16": "short",
                "int32": "int", "int64": "long", "float16": "half", "bfloat16": "ushort",
                "float32": "float", "float64": "double", "uint16": "ushort", "uint32": "uint",
                "uint64": "ulong"}

    def global_id(self, d):
        return f"((i64)get_global_id({d}))"

    def global_size(self, d):
        return f"((i64)get_global_size({d}))"

    def local_id(self, d):
        return f"((int)get_local_id({d}))"

    def group_id(self, d):
        return f"((i64)get_group_id({d}))"

    def local_size(self, d):
        return f"((int)get_local_size({d}))"

    def load(self, dtype, ptr, index):
        if dtype == "float16":          # storage-only half: no cl_khr_fp16 needed
            return f"vload_half({index}, {ptr})"
        if dtype == "bfloat16":
            return f"tl_bf2f({ptr}[{index}])"
        return f"{ptr}[{index}]"

    def store(self, dtype, ptr, index, value):
        if dtype == "float16":
            return f"vstore_half_rte({value}, {index}, {ptr});"
        if dtype == "bfloat16":
            return f"{ptr}[{index}] = tl_f2bf({value});"
        return f"{ptr}[{index}] = {value};"

    def vector(self, ctype, width):
        return f"{ctype}{width}"

    def vload(self, width, ptr, index):
        return f"vload{width}(0, {ptr} + {index})"

    def vstore(self, width, value, ptr, index):
        return f"vstore{width}({value}, 0, {ptr} + {index});"

    def extensions(self, dtypes):
        return "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if "float64" in dtypes else ""


DIALECT = OpenCLDialect()
