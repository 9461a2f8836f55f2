"""The CPU's code generator for `tensorlib.compile`: fused elementwise kernels as C, built
with the system compiler (OpenMP, vectorised loops with glibc's vector math; float32 exp as
the eager kernel computes it) and loaded with
ctypes. The body comes from the shared generator (`tensorlib.codegen.fused`); this module
adds the host C dialect, the loop nest and the build.

Built kernels are cached in memory and on disk (`tensorlib.codegen.cache`: keyed by the
source, the compiler's version and flags and the machine; atomic writes, integrity hash), so
a second process loads the first one's kernels without compiling.
"""
import ctypes
import os
import platform
import re
import subprocess
import tempfile
import threading
from pathlib import Path

from tensorlib.codegen.cache import DiskCache, make_key
from tensorlib.codegen.cdialect import DTYPES, CDialect
from tensorlib.codegen.fused import body
from tensorlib_cpu.blas_choice import cpu_vendor
from tensorlib_cpu.hostmem import fill_pointers
from tensorlib_cpu.streaming import COMPILED_STREAM_MIN_BYTES

PARALLEL_MIN = 1 << 15      # elements below which a fused kernel runs on one thread
STREAM_BLOCK = 1024         # elements a streaming kernel computes into a local block


# Compiled kernels stream their contiguous outputs past this size (0: never): see streaming.py.
STREAM_MIN_BYTES = COMPILED_STREAM_MIN_BYTES

_PREAMBLE = """#include <math.h>
#include <stdint.h>
typedef int64_t i64;
typedef uint64_t u64;
typedef uint32_t u32;
"""
# glibc's libmvec: vector variants gcc may call from `omp simd` loops (declared by hand since
# math.h declares them only under -ffast-math, which would also drop NaN checks).
_VECTOR_MATH_OLD = ("exp", "log", "sin", "cos", "pow")
_VECTOR_MATH_235 = ("acos", "asin", "atan", "atan2", "cosh", "erf", "expm1", "log1p", "sinh",
                    "tan", "tanh")


def _glibc_at_least(major, minor):
    try:
        name, version = os.confstr("CS_GNU_LIBC_VERSION").split()
        got = tuple(int(v) for v in version.split(".")[:2])
        return name == "glibc" and got >= (major, minor)
    except (ValueError, OSError, AttributeError):
        return False


def _vector_math_decls():
    if platform.machine() not in ("x86_64", "AMD64") or not _glibc_at_least(2, 22):
        return ""
    names = _VECTOR_MATH_OLD + (_VECTOR_MATH_235 if _glibc_at_least(2, 35) else ())
    lines = []
    for fn in names:
        args = 2 if fn in ("pow", "atan2") else 1
        for t, suffix in (("double", ""), ("float", "f")):
            params = ", ".join([t] * args)
            lines.append(f'extern {t} {fn}{suffix}({params}) __attribute__((__simd__("notinbranch")));')
    return "\n".join(lines) + "\n"


# float32 exp: vexp.h's algorithm (the eager kernel's: round(x log2 e), Cody-Waite reduction,
# the same degree-7 Taylor polynomial in the same order, 2^n applied once), so a compiled
# function gives the eager exp's values bit for bit. Where the build has AVX2 and FMA
# tl_expf is declared a SIMD function whose vector variants (glibc's vector ABI names, for
# 4 and 8 lanes, and 16 with AVX-512) are vexp.h's own kernels, which gcc calls from the
# vectorised loops: written in plain C, the scaling alone took 9 instructions a vector and
# the exp ran at libmvec's speed, about 0.4 ns an element on an AMD EPYC Zen 4 at one
# thread (torch.compile's ~0.3). The scalar version (loop tails, other builds) applies 2^n as
# two normal powers of two (n = k1 + k2), as the 8- and 4-lane kernels do: one rounding, as
# vscalefps, so inf past the overflow, 0 past the underflow, exact subnormals between. NaN
# passes through (the clamps keep it; its exponent is taken as 0).
_FAST_EXP = """static inline float tl_expf_scalar(float x) {
  x = x < -104.0f ? -104.0f : x;
  x = x > 89.0f ? 89.0f : x;
  const float n = rintf(x * 1.44269504088896341f);
  float r = fmaf(-n, 0.693359375f, x);
  r = fmaf(-n, -2.12194440e-4f, r);
  float p = 1.0f / 5040.0f;
  p = fmaf(p, r, 1.0f / 720.0f);
  p = fmaf(p, r, 1.0f / 120.0f);
  p = fmaf(p, r, 1.0f / 24.0f);
  p = fmaf(p, r, 1.0f / 6.0f);
  p = fmaf(p, r, 0.5f);
  p = fmaf(p, r, 1.0f);
  p = fmaf(p, r, 1.0f);
  const int k = (int)(n == n ? n : 0.0f);
  const int k1 = k >> 1;
  const u32 b1 = (u32)(k1 + 127) << 23, b2 = (u32)(k - k1 + 127) << 23;
  float s1, s2;
  memcpy(&s1, &b1, 4);
  memcpy(&s2, &b2, 4);
  return p * s1 * s2;
}
#if defined(__AVX2__) && defined(__FMA__)
""" + (Path(__file__).with_name("vexp.h")).read_text() + """
extern float tl_expf(float) __attribute__((const, nothrow, simd("notinbranch")));
__attribute__((visibility("hidden"))) float tl_expf_entry(float x) __asm__("tl_expf");
__attribute__((visibility("hidden"))) float tl_expf_entry(float x) { return tl_expf_scalar(x); }
__attribute__((visibility("hidden"))) __m128 _ZGVbN4v_tl_expf(__m128 x) { return tl_exp4(x); }
__attribute__((visibility("hidden"))) __m256 _ZGVcN8v_tl_expf(__m256 x) { return tl_exp8(x); }
__attribute__((visibility("hidden"))) __m256 _ZGVdN8v_tl_expf(__m256 x) { return tl_exp8(x); }
#if TL_HAVE_VEXP
__attribute__((visibility("hidden"))) __m512 _ZGVeN16v_tl_expf(__m512 x) { return tl_exp16(x); }
#endif
#else
#define tl_expf tl_expf_scalar
#endif
#undef exp
#define exp(x) _Generic((x), float: tl_expf, default: (exp))(x)
"""

_STREAM_HELPER = """#if defined(__SSE2__)
#include <emmintrin.h>
#include <string.h>
/* copy a computed block out with non-temporal stores; dst is 16-byte aligned */
static inline void tl_stream(void* dst, const void* src, i64 nbytes) {
  char* d = (char*)dst;
  const char* s = (const char*)src;
  i64 k = 0;
  for (; k + 16 <= nbytes; k += 16)
    _mm_stream_si128((__m128i*)(d + k), _mm_load_si128((const __m128i*)(s + k)));
  if (k < nbytes) memcpy(d + k, s + k, (size_t)(nbytes - k));
}
#endif
"""


def _streaming(spec, loop_body, d, flat_loads):
    """The flat loop with stores into per-thread blocks streamed out (`STREAM_MIN_BYTES`):
    taken at run time when the kernel moves that much and its outputs are 16-byte aligned;
    empty where the spec has no contiguous outputs or the machine lists no cache."""
    stored = sorted({n for n, _ in spec.stores})
    if not STREAM_MIN_BYTES or not stored or \
            any(spec.operands[n][1] != "c" for n in stored):
        return ""
    per_element = sum(DTYPES[dt][1] // 8 for dt, inner in spec.operands if inner != "b")
    body_lines = loop_body.splitlines()
    for k in stored:
        body_lines = [re.sub(rf"^(\s*)p{k}\[i\] = ", rf"\1t{k}[j] = ", ln) for ln in body_lines]
    aligned = " && ".join(f"(((u64)(uintptr_t)p{k}) & 15) == 0" for k in stored)
    blocks = "".join(f"      {d.storage(spec.operands[k][0])} t{k}[{STREAM_BLOCK}] "
                     f"__attribute__((aligned(64)));\n" for k in stored)
    outs = "".join(f"        tl_stream(p{k} + blk, t{k}, m * (i64)sizeof(t{k}[0]));\n"
                   for k in stored)
    inner = "\n".join("    " + ln for ln in body_lines)   # the body, four columns deeper
    return f"""#if defined(__SSE2__)
    if (n * {per_element} >= {STREAM_MIN_BYTES} && {aligned}) {{
{flat_loads}      #pragma omp parallel num_threads(nt)
      {{
{blocks}      #pragma omp for schedule(static)
      for (i64 blk = 0; blk < n; blk += {STREAM_BLOCK}) {{
        const i64 m = n - blk < {STREAM_BLOCK} ? n - blk : {STREAM_BLOCK};
        #pragma omp simd
        for (i64 j = 0; j < m; ++j) {{
          const i64 i = blk + j;
{inner}
        }}
{outs}      }}
      _mm_sfence();
      }}
      return;
    }}
#endif
"""


class HostC(CDialect):
    """C for the host compiler."""
    name = "c"
    func_prefix = "static inline"
    type_map = {"bool": "unsigned char", "uint8": "unsigned char", "int8": "signed char",
                "int16": "short", "int32": "int", "int64": "i64", "float16": "uint16_t",
                "bfloat16": "uint16_t", "float32": "float", "float64": "double",
                "uint16": "uint16_t", "uint32": "u32", "uint64": "u64"}


DIALECT = HostC()


def source(spec):
    """The C source of a fused kernel `tl_fused(nd, sizes, strides, ptrs, sc, nthreads)`:
    strides[k * nd + d] is operand k's stride (elements) along collapsed dim d; sc holds the
    values of the fill steps."""
    d = DIALECT
    nops = len(spec.operands)

    def flat_index(k, inner):
        return {"c": "i", "b": "0", "s": f"i * s{k}"}[inner]

    helpers, lines = body(d, spec, flat_index)
    # A broadcast operand's element is read once per row, before the loop: loaded inside it,
    # next to the stores, gcc cannot prove the stores leave it alone and does not vectorize
    # (a ReLU backward's where(x > 0, g, 0) ran at ~1.4 ns an element, 5x slower).
    stored = {n for n, _ in spec.stores}
    hoisted = [k for k, (_, inner) in enumerate(spec.operands) if inner == "b" and k not in stored]
    for k in hoisted:
        lines = [re.sub(rf"\bp{k}\[0\]", f"b{k}", ln) for ln in lines]
    loop_body = "\n".join("      " + ln for ln in lines)
    flat_loads = "".join(f"    const {d.storage(spec.operands[k][0])} b{k} = p{k}[0];\n"
                         for k in hoisted)
    row_loads = "".join("  " + ln for ln in flat_loads.splitlines(True))
    ptrs = "".join(f"  {d.storage(dt)}* const P{k} = ({d.storage(dt)}*)ptrs[{k}];\n"
                   for k, (dt, _) in enumerate(spec.operands))
    ptrs += "".join(f"  const double sc{st.value} = sc[{st.value}];\n"
                    for st in spec.steps if st.op == "fill")
    flat_strides = "".join(f"    const i64 s{k} = nd ? st[{k} * nd] : 0;\n"
                           for k, (_, inner) in enumerate(spec.operands) if inner == "s")
    flat_ptrs = "".join(f"    {d.storage(dt)}* const p{k} = P{k};\n"
                        for k, (dt, _) in enumerate(spec.operands))
    row_offsets = "".join(f" o{k} += c * st[{k} * nd + dd];" for k in range(nops))
    row_strides = "".join(f"      const i64 s{k} = st[{k} * nd + nd - 1];\n"
                          for k, (_, inner) in enumerate(spec.operands) if inner == "s")
    row_ptrs = "".join(f"      {d.storage(dt)}* const p{k} = P{k} + o{k};\n"
                       for k, (dt, _) in enumerate(spec.operands))
    streaming = _streaming(spec, loop_body, d, row_loads)
    # tgmath after the declarations: the shared templates write exp(x), which must be expf
    # for a float x (as OpenCL C's overloads are). The flat loop's `if` names `parallel`: a
    # bare `if` also applies to `simd` (OpenMP 5), and a false one made loops under
    # PARALLEL_MIN elements scalar.
    return f"""{_PREAMBLE}{_vector_math_decls()}{_STREAM_HELPER if streaming else ""}#include <tgmath.h>
#include <string.h>
{_FAST_EXP}{helpers}
void tl_fused(const i64 nd, const i64* sizes, const i64* st, void** ptrs, const double* sc,
              const int nt) {{
{ptrs}  if (nd <= 1) {{
    const i64 n = nd ? sizes[0] : 1;
{flat_strides}{flat_ptrs}{streaming}{flat_loads}    #pragma omp parallel for simd num_threads(nt) if(parallel: n >= {PARALLEL_MIN}) schedule(static)
    for (i64 i = 0; i < n; ++i) {{
{loop_body}
    }}
    return;
  }}
  const i64 L = sizes[nd - 1];
  i64 rows = 1;
  for (int dd = 0; dd < nd - 1; ++dd) rows *= sizes[dd];
  #pragma omp parallel for num_threads(nt) if(rows * L >= {PARALLEL_MIN}) schedule(static)
  for (i64 r = 0; r < rows; ++r) {{
    {' '.join(f'i64 o{k} = 0;' for k in range(nops))}
    i64 rr = r;
    for (int dd = nd - 2; dd >= 0; --dd) {{ const i64 c = rr % sizes[dd]; rr /= sizes[dd];{row_offsets} }}
    {{
{row_strides}{row_ptrs}{row_loads}      #pragma omp simd
      for (i64 i = 0; i < L; ++i) {{
{loop_body}
      }}
    }}
  }}
}}
"""


_FLAGS = ["-O3", "-fopenmp", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off",
          "-fPIC", "-shared"]


# gcc's tuning for the Intel AVX-512 cores (-march=native read "rocketlake" on the Xeon, as it
# does for sapphirerapids) prefers 256-bit vectors, so the loops ran 8 lanes wide and called
# the 8-lane exp: the compiled chain (x*2+1).relu().exp() on 4M floats took 1.82 ms at one
# thread against 1.36 ms with 512-bit vectors (torch.compile 1.70). The exp's 8- and 16-lane
# kernels compute the same values (vexp.h), and the kernels are elementwise, so the width
# changes no result. Not on AMD (Zen 4 splits 512-bit operations; not measured there).
_WIDE_VECTORS = cpu_vendor() != "AuthenticAMD"


def _flags():
    native = []
    if platform.machine() in ("x86_64", "AMD64") and os.environ.get("TENSORLIB_PORTABLE") != "1":
        native = ["-march=native"] + (["-mprefer-vector-width=512"] if _WIDE_VECTORS else [])
    return _FLAGS + native


def _compiler():
    return os.environ.get("CC", "cc")


_compiler_version = None


def compiler_version():
    global _compiler_version
    if _compiler_version is None:
        try:
            out = subprocess.run([_compiler(), "--version"], capture_output=True, text=True,
                                 timeout=30)
            _compiler_version = out.stdout.splitlines()[0] if out.stdout else "unknown"
        except (OSError, subprocess.SubprocessError):
            _compiler_version = "unavailable"
    return _compiler_version


class BuildError(RuntimeError):
    """The C compiler rejected a generated kernel: carries its log and the source."""


class Builder:
    """Compiles sources to shared objects, caching them in memory and on disk."""

    def __init__(self, cache=None):
        self.cache = cache or DiskCache()
        self.loaded = {}                # source -> ctypes function
        self.compiled = 0               # builds run by this process (not cache hits)
        self._lock = threading.Lock()
        self._dir = None

    def _workdir(self):
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="tensorlib-cc-")
        return self._dir

    def _build(self, src):
        work = self._workdir()
        c_path = os.path.join(work, f"k{len(self.loaded)}.c")
        so_path = c_path[:-2] + ".so"
        with open(c_path, "w") as f:
            f.write(src)
        cmd = [_compiler()] + _flags() + [c_path, "-o", so_path, "-lmvec", "-lm"]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise BuildError(f"the C compiler failed on a generated kernel ({' '.join(cmd)}):\n"
                             f"{result.stderr}\n--- source ---\n{src}")
        with open(so_path, "rb") as f:
            return f.read()

    def load(self, src):
        fn = self.loaded.get(src)
        if fn is not None:
            return fn
        with self._lock:
            key = make_key("cpu-fused", src, compiler_version(), " ".join(_flags()),
                           platform.machine(), platform.processor())
            from tensorlib.compiler import logs
            logs.log("output_code", f"fused CPU kernel:\n{src}")
            binary = self.cache.get(key)
            if binary is None:
                binary = self._build(src)
                self.compiled += 1
                self.cache.put(key, binary)
            fd, path = tempfile.mkstemp(dir=self._workdir(), suffix=".so")
            with os.fdopen(fd, "wb") as f:
                f.write(binary)
            lib = ctypes.CDLL(path)
            fn = lib.tl_fused
            fn.restype = None
            fn.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_void_p, ctypes.c_int]
            fn._tl_lib = lib
            self.loaded[src] = fn
            return fn


BUILDER = Builder()


class FusedKernel:
    """A built fused kernel bound to one iteration shape: call it with the operand tensors
    (CPU tensors, in the spec's operand order). Its tables are passed by address (ints):
    ctypes converts a ctypes array argument in ~1 us, an int in a tenth of that. A lock
    holds the tables from their filling to the kernel's end: two threads replaying one
    compiled program wrote each other's operand addresses (wrong results, a corrupted heap)."""
    __slots__ = ("fn", "nd", "tables", "sizes", "strides", "address", "scalars",
                 "scalar_address", "threads", "nops", "lock")

    def __init__(self, spec, sizes, strides):
        from tensorlib_cpu import fastreduce
        self.fn = BUILDER.load(source(spec))
        self.nd = len(sizes)
        self.nops = len(spec.operands)
        flat = [s for st in strides for s in st]
        self.scalars = (ctypes.c_double * max(1, sum(st.op == "fill" for st in spec.steps)))()
        self.tables = ((ctypes.c_int64 * max(1, self.nd))(*sizes),
                       (ctypes.c_int64 * max(1, len(flat)))(*flat),
                       (ctypes.c_void_p * self.nops)(), self.scalars)   # held: addresses
        self.sizes, self.strides, self.address, self.scalar_address = \
            (ctypes.addressof(t) for t in self.tables)
        self.threads = fastreduce.get_num_threads
        self.lock = threading.Lock()

    def __call__(self, tensors, scalars=()):
        with self.lock:
            fill_pointers(tensors, self.address, self.nops)
            sc = self.scalars
            for k, v in enumerate(scalars):
                sc[k] = v
            self.fn(self.nd, self.sizes, self.strides, self.address, self.scalar_address,
                    self.threads())


def fused_kernel(spec, sizes, strides):
    return FusedKernel(spec, sizes, strides)
