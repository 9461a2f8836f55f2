"""CUDA C: only what differs from the generator's C dialect base. 16-bit floats are stored as
`__half` / `__nv_bfloat16` and computed with as float (their loads and stores convert)."""
from tensorlib.codegen.cdialect import CDialect

_HALF_INCLUDES = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
_HEADER = """#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
"""

_PREAMBLE = """
typedef long long i64;
typedef unsigned long long u64;
typedef unsigned int u32;
"""


class CUDADialect(CDialect):
    name = "cuda"
    kernel_prefix = 'extern "C" __global__ void'
    global_ = ""
    local_ = "__shared__"
    restrict = "__restrict__"
    barrier = "__syncthreads()"
    func_prefix = "static __device__ __forceinline__"
    header = _HEADER
    preamble = _PREAMBLE
    type_map = {"bool": "unsigned char", "uint8": "unsigned char", "int8": "signed char",
                "int16": "short", "int32": "int", "int64": "long long", "float16": "__half",
                "bfloat16": "__nv_bfloat16", "float32": "float", "float64": "double",
                "uint16": "unsigned short", "uint32": "unsigned int",
                "uint64": "unsigned long long"}

    _AXES = "xyz"

    def global_id(self, d):
        a = self._AXES[d]
        return f"((i64)blockIdx.{a} * (i64)blockDim.{a} + (i64)threadIdx.{a})"

    def global_size(self, d):
        a = self._AXES[d]
        return f"((i64)gridDim.{a} * (i64)blockDim.{a})"

    def local_id(self, d):
        return f"((int)threadIdx.{self._AXES[d]})"

    def group_id(self, d):
        return f"((i64)blockIdx.{self._AXES[d]})"

    def local_size(self, d):
        return f"((int)blockDim.{self._AXES[d]})"

    def load(self, dtype, ptr, index):
        if dtype == "float16":
            return f"__half2float({ptr}[{index}])"
        if dtype == "bfloat16":
            return f"__bfloat162float({ptr}[{index}])"
        return f"{ptr}[{index}]"

    def store(self, dtype, ptr, index, value):
        if dtype == "float16":
            return f"{ptr}[{index}] = __float2half_rn({value});"
        if dtype == "bfloat16":
            return f"{ptr}[{index}] = __float2bfloat16_rn({value});"
        return f"{ptr}[{index}] = {value};"

    half_includes = _HALF_INCLUDES

    def extensions(self, dtypes):
        """The 16-bit float headers, only where a program uses them (they are most of the
        compile time of a small kernel)."""
        return _HALF_INCLUDES if {"float16", "bfloat16"} & set(dtypes) else ""


DIALECT = CUDADialect()
