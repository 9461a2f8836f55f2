"""Every CUDA C program the backend can generate, for compile-only checks (tinygrad's NULL
device idea): each primitive's program key x dtype combination the framework asks for (the
layout classes -- contiguous, one strided dim, any strides -- are kernels of one program),
and each composite kernel. `batch(programs)` joins many programs into one translation unit
(each in its own namespace) so one nvcc call compiles hundreds of them."""
from tensorlib.backends.interface import BINARY_OPS, REDUCTION_OPS, SCAN_OPS, UNARY_OPS
from tensorlib.codegen import composites
from tensorlib.codegen import primitives as P
from tensorlib.codegen.cdialect import DTYPES, is_float

from tensorlib_cuda.dialect import DIALECT

_BOOL_OUT_UNARY = ("isnan", "logical_not")
_BOOL_OUT_BINARY = ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
                    "logical_xor")
LOCAL = 256


def _wide(dt):
    """The dtypes a sum/prod/cumsum of `dt` may write: itself, int64 for bool and integers."""
    return (dt,) if is_float(dt) or dt == "int64" else (dt, "int64")


def primitive_keys():
    keys = []
    dts = list(DTYPES)
    for op in UNARY_OPS:
        keys += [("u", op, dt, dt) for dt in dts]
        if op in _BOOL_OUT_UNARY:
            keys += [("u", op, "bool", dt) for dt in dts if dt != "bool"]
    for op in BINARY_OPS:
        keys += [("b", op, dt, dt, dt) for dt in dts]
        if op in _BOOL_OUT_BINARY:
            keys += [("b", op, "bool", dt, dt) for dt in dts if dt != "bool"]
    keys += [("copy", a, b) for a in dts for b in dts]
    keys += [("fill", dt) for dt in dts] + [("where", dt, "bool", dt, dt) for dt in dts]
    for op in REDUCTION_OPS:
        for dt in dts:
            for out in (_wide(dt) if op in ("sum", "prod") else (dt,)):
                acc = P._acc_dtype(out)
                keys.append(("red", op, dt, out, acc, LOCAL))
                if acc != out:                       # the two-pass path's partial sums
                    keys += [("red", op, dt, acc, acc, LOCAL), ("red", op, acc, out, acc, LOCAL)]
    keys += [("arg", op, dt) for op in ("argmax", "argmin") for dt in dts]
    keys += [("scan", op, dt, out) for op in SCAN_OPS for dt in dts for out in _wide(dt)]
    for family in ("gemm", "gather", "scatter_add", "scatter_add_sorted", "sort"):
        keys += [(family, dt) for dt in dts]
    keys += [("rand", kind, dt) for kind in ("uniform", "normal")
             for dt in ("float16", "bfloat16", "float32", "float64")]
    return list(dict.fromkeys(keys))


def programs():
    """[(key, source, kernel names)] of every program, the ones that exist for their dtypes
    (an op undefined for a dtype, e.g. bitwise_not on float, raises TypeError there too)."""
    found = []
    for key in primitive_keys() + composites.keys():
        try:
            src, names = P.source(DIALECT, key)
        except (TypeError, KeyError, NotImplementedError):
            continue
        found.append((key, src, names))
    return found


def batch(sources):
    """One translation unit holding `sources`: the dialect's includes and header once, each
    program's own code in a namespace (helpers of two programs may share names; kernels are
    extern "C" and named by their key, so they don't)."""
    head = DIALECT.half_includes + DIALECT.header
    parts = [head]
    for i, src in enumerate(sources):
        body = src.replace(DIALECT.half_includes, "", 1).replace(DIALECT.header, "", 1)
        parts.append(f"namespace tl_p{i} {{\n{body}\n}}\n")
    return "\n".join(parts)


def prebuild(index=0, jobs=8):
    """Compile every program for cuda:`index` into the disk cache, `jobs` at a time (NVRTC
    and nvcc both run outside the GIL), so a fresh machine's first run compiles nothing.
    Returns (programs, seconds)."""
    import time
    from concurrent.futures import ThreadPoolExecutor
    from tensorlib._C.device import canonical
    compiler = canonical(f"cuda:{index}")._backend.state(index).compiler
    found = programs()
    start = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(lambda p: compiler.cubin(p[1], kernel_name_of(p)), found))
    return len(found), time.perf_counter() - start


def kernel_name_of(program):
    return P.kernel_name(program[0])
