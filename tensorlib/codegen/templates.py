"""Kernel source templates for every primitive, written against a dialect (`cdialect`).

Each function returns the source of one program and the names of its kernels. Layout is a
runtime argument, not part of the source: strided kernels read a small `meta` array of i64
(ndim, sizes, then each operand's strides, all in elements, after the host collapsed the dims),
so one compiled program serves every shape of its (op, dtypes) -- "layout classes", not exact
shapes. Elementwise programs also hold a contiguous fast path (`_c`: index i for every operand).

NOTE [ Deterministic scatter_add ]
scatter_add is owner-computes: one work-item per *output* element scans the index along
`dim` in order and adds the matching source values. No atomics, so the sum is the same
(bit for bit) on every run and device; the cost is O(out x index.shape[dim]).

NOTE [ Sort ]
sort is a bitonic network over (key, position) pairs padded to a power of two, one launch per
stage (no local memory, any length). The comparator orders by key (NaN last ascending, first
descending, as torch) and then by position, which makes the network stable.
"""
from tensorlib.codegen.cdialect import is_float, kind

GEMM_TILE = 64        # output tile per work-group (TILE x TILE)
GEMM_TK = 16          # depth of one local-memory step
GEMM_WG = 16          # work-group is WG x WG; each work-item owns a 4x4 register block
GEMM_RB = GEMM_TILE // GEMM_WG

_HELPERS = {
    "rem": """{fn} {T} tl_rem_{T}({T} a, {T} b) {{
  {T} r = fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}}""",
    "fdiv": """{fn} {T} tl_fdiv_{T}({T} a, {T} b) {{
  if (b == 0) return a / b;
  {T} m = fmod(a, b);
  {T} q = (a - m) / b;
  if (m != 0 && ((b < 0) != (m < 0))) q -= 1;
  if (q == 0) return copysign(({T})0, a / b);
  {T} f = floor(q);
  if (q - f > ({T})0.5) f += 1;
  return f;
}}""",
    "ipow": """{fn} i64 tl_ipow(i64 a, i64 b) {{
  if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
  i64 r = 1;
  while (b) {{ if (b & 1) r *= a; a *= a; b >>= 1; }}
  return r;
}}""",
    "irem": """{fn} i64 tl_irem(i64 a, i64 b) {{
  if (b == 0 || b == -1) return 0;
  i64 r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}}""",
    "ifdiv": """{fn} i64 tl_ifdiv(i64 a, i64 b) {{
  if (b == 0) return 0;
  if (b == -1) return -a;
  i64 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
  return q;
}}""",
    "philox": """{fn} u32 tl_philox_word(u64 seed, u64 w) {{
  u64 blk = w >> 2;
  u32 x0 = (u32)blk, x1 = (u32)(blk >> 32), x2 = 0, x3 = 0;
  u32 k0 = (u32)seed, k1 = (u32)(seed >> 32);
  for (int r = 0; r < 10; ++r) {{
    u64 p0 = (u64)x0 * (u64)0xD2511F53u;
    u64 p1 = (u64)x2 * (u64)0xCD9E8D57u;
    u32 y0 = (u32)(p1 >> 32) ^ x1 ^ k0;
    u32 y2 = (u32)(p0 >> 32) ^ x3 ^ k1;
    x1 = (u32)p1; x3 = (u32)p0; x0 = y0; x2 = y2;
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }}
  u32 lane = (u32)(w & 3);
  return lane == 0 ? x0 : (lane == 1 ? x1 : (lane == 2 ? x2 : x3));
}}""",
}


def _helpers(d, names):
    fn = d.func_prefix
    return "\n".join(_HELPERS[n].format(fn=fn, T=T) for n, T in names) + "\n"


# ---- elementwise -----------------------------------------------------------------------------

def _math_arg(d, x, in_dt, out_dt):
    """x as a float compute type for float math (ints go to out's float type, else float)."""
    if is_float(in_dt):
        return x
    return f"(({d.compute(out_dt) if is_float(out_dt) else 'float'}){x})"


FLOAT_MATH = ("exp", "expm1", "log", "log1p", "sqrt", "sin", "cos", "tan", "asin", "acos",
              "atan", "sinh", "cosh", "tanh", "erf")


def unary_expr(d, op, in_dt, out_dt):
    """(C expression over x0, helpers) for a unary primitive."""
    x, k = "x0", kind(in_dt)
    if op in FLOAT_MATH:
        return f"{op}({_math_arg(d, x, in_dt, out_dt)})", ()
    table = {
        "abs": {"f": "fabs(x0)", "i": "(x0 < 0 ? -x0 : x0)"},
        "neg": {"b": "x0"},
        "floor": {"f": "floor(x0)"}, "ceil": {"f": "ceil(x0)"}, "trunc": {"f": "trunc(x0)"},
        "round": {"f": "rint(x0)"},
        "sign": {"f": f"(isnan(x0) ? x0 : ({d.compute(in_dt)})((x0 > 0) - (x0 < 0)))",
                 "i": "((x0 > 0) - (x0 < 0))", "u": "(x0 > 0)", "b": "x0"},
        "isnan": {"f": "isnan(x0)", "i": "0", "u": "0", "b": "0"},
        "logical_not": {"f": "(x0 == 0)", "i": "(x0 == 0)", "u": "(x0 == 0)", "b": "(x0 == 0)"},
        "bitwise_not": {"b": "(x0 == 0)", "i": "(~x0)", "u": "(~x0)"},
    }
    defaults = {"neg": "(-x0)", "abs": "x0", "floor": "x0", "ceil": "x0", "trunc": "x0",
                "round": "x0"}
    expr = table[op].get(k, defaults.get(op))
    if expr is None:
        raise TypeError(f"'{op}' is not defined for {in_dt}")
    return expr, ()


_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_ARITH = {"add": "+", "sub": "-", "mul": "*", "bitwise_and": "&", "bitwise_or": "|",
          "bitwise_xor": "^"}


def binary_expr(d, op, in_dt, out_dt):
    """(C expression over x0, x1, helpers) for a binary primitive."""
    f, T = is_float(in_dt), d.compute(in_dt)
    if op in _CMP:
        return f"(x0 {_CMP[op]} x1)", ()
    if op in _ARITH:
        if f and op.startswith("bitwise"):
            raise TypeError(f"'{op}' is not defined for {in_dt}")
        return f"(x0 {_ARITH[op]} x1)", ()
    if op == "logical_and":
        return "((x0 != 0) && (x1 != 0))", ()
    if op == "logical_or":
        return "((x0 != 0) || (x1 != 0))", ()
    if op == "logical_xor":
        return "((x0 != 0) != (x1 != 0))", ()
    if op in ("maximum", "minimum"):
        cmp = ">" if op == "maximum" else "<"
        # NaN wins: x0 when it is NaN; when only x1 is, the comparison is false and picks
        # it. Two compares and a blend where three isnan tests took seven vector ops.
        return (f"(((x0 {cmp} x1) | (x0 != x0)) ? x0 : x1)" if f else
                f"(x0 {cmp} x1 ? x0 : x1)"), ()
    if op == "div":
        if f:
            return "(x0 / x1)", ()
        a, b = _math_arg(d, "x0", in_dt, out_dt), _math_arg(d, "x1", in_dt, out_dt)
        return f"({a} / {b})", ()
    if op == "atan2":
        return f"atan2({_math_arg(d, 'x0', in_dt, out_dt)}, {_math_arg(d, 'x1', in_dt, out_dt)})", ()
    if op == "pow":
        return ("pow(x0, x1)", ()) if f else ("tl_ipow((i64)x0, (i64)x1)", (("ipow", ""),))
    if op == "remainder":
        return (f"tl_rem_{T}(x0, x1)", (("rem", T),)) if f else \
            ("tl_irem((i64)x0, (i64)x1)", (("irem", ""),))
    if op == "fmod":
        return ("fmod(x0, x1)", ()) if f else ("((x1 == 0 || x1 == -1) ? 0 : (x0 % x1))", ())
    if op == "floor_divide":
        return (f"tl_fdiv_{T}(x0, x1)", (("fdiv", T),)) if f else \
            ("tl_ifdiv((i64)x0, (i64)x1)", (("ifdiv", ""),))
    raise KeyError(op)


def _loop(d, bound="n"):
    """One element per work-item (the launch covers the range: no grid-stride loop, which
    keeps PoCL's work-item loop vectorisable)."""
    return f"const i64 i = {d.global_id(0)};\n  if (i < {bound})"


def _decompose(d, index, nd, sizes, operands):
    """Statements turning linear `index` into offsets j<name> += c * strides[name][dd]."""
    adds = "".join(f" j{name} += c * ({strides})[dd];" for name, strides in operands)
    return (f"    {{ i64 r = {index};\n"
            f"      for (int dd = {nd} - 1; dd >= 0; --dd) {{ const i64 s = {sizes}[dd]; "
            f"const i64 c = r % s; r /= s;{adds} }} }}\n")


def elementwise(d, name, out_dt, in_dts, expr, helpers=(), scalars=()):
    """Kernels `<name>_c` (every operand contiguous: element i at offset + i), `<name>_1`
    (one dim: offset + i * stride, meta = [0, out stride, input k strides...]) and `<name>_s`
    (meta = [nd, sizes[nd], out strides[nd], input k strides[nd]...]). Arguments:
    (n, meta, out, out_offset, in0, in0_offset, ..., scalars...)."""
    g = d.global_
    params = ["const i64 n", f"{g}const i64* meta", f"{d.ptr(out_dt)} po", "const i64 off_o"]
    for k, dt in enumerate(in_dts):
        params += [f"{d.ptr(dt, True)} p{k}", f"const i64 off{k}"]
    params += [f"const {ct} {nm}" for nm, ct in scalars]

    def body(index_of):
        loads = "".join(f"    const {d.compute(dt)} x{k} = {d.load(dt, f'p{k}', index_of(str(k)))};\n"
                        for k, dt in enumerate(in_dts))
        return loads + "    " + d.store(out_dt, "po", index_of("o"), d.convert(expr, out_dt)) + "\n"

    contig = f"  {_loop(d)} {{\n" + body(lambda k: f"off_{k} + i" if k == "o" else f"off{k} + i") + "  }"
    steps = "".join(f", s{k} = meta[{k + 2}]" for k in range(len(in_dts)))
    line = (f"  const i64 so = meta[1]{steps};\n  {_loop(d)} {{\n"
            + body(lambda k: f"off_o + i * so" if k == "o" else f"off{k} + i * s{k}") + "  }")
    ops = [("o", "meta + 1 + nd")] + [(str(k), f"meta + 1 + {k + 2} * nd") for k in range(len(in_dts))]
    strided = (f"  const int nd = (int)meta[0];\n  {_loop(d)} {{\n"
               f"    i64 jo = off_o{''.join(f', j{k} = off{k}' for k in range(len(in_dts)))};\n"
               + _decompose(d, "i", "nd", "(meta + 1)", ops)
               + body(lambda k: f"j{k}") + "  }")
    kernels = [d.kernel(f"{name}_{s}", params, b)
               for s, b in (("c", contig), ("1", line), ("s", strided))]
    src = d.program([_helpers(d, helpers)] + kernels, (out_dt,) + tuple(in_dts))
    return src, (f"{name}_c", f"{name}_1", f"{name}_s")


# ---- reductions ------------------------------------------------------------------------------

def _combine(op, dt, a, b):
    if op == "sum":
        return f"({a} + {b})"
    if op == "prod":
        return f"({a} * {b})"
    cmp = ">" if op == "amax" else "<"
    pick = f"({a} {cmp} {b} ? {a} : {b})"
    return f"(isnan({a}) ? {a} : (isnan({b}) ? {b} : {pick}))" if is_float(dt) else pick


def _identity(d, op, dt):
    if op == "sum":
        return d.literal(0, dt)
    if op == "prod":
        return d.literal(1, dt)
    return d.lowest(dt) if op == "amax" else d.highest(dt)


def reduction(d, name, op, x_dt, out_dt, acc_dt, local_size):
    """`<name>_s`: one work-item per output, serial over the reduced elements; `<name>_w`: one
    work-group per (output, chunk), a tree in local memory. meta = [nk, nr, kept sizes[nk], out
    strides[nk], x strides[nk], reduced sizes[nr], x strides[nr]]."""
    A = d.compute(acc_dt)
    head = ("  const int nk = (int)meta[0], nr = (int)meta[1];\n"
            f"  {d.global_}const i64* sk = meta + 2;\n"
            f"  {d.global_}const i64* sr = meta + 2 + 3 * nk;\n")
    kept = _decompose(d, "oi", "nk", "sk", [("o", "(sk + nk)"), ("x", "(sk + 2 * nk)")])
    inner = ("      i64 jr = jx;\n"
             + _decompose(d, "t", "nr", "sr", [("r", "(sr + nr)")])
             + f"      acc = {_combine(op, acc_dt, 'acc', d.convert(d.load(x_dt, 'px', 'jr'), acc_dt))};\n")
    common = [f"{d.ptr(out_dt)} po", "const i64 off_o", f"{d.ptr(x_dt, True)} px", "const i64 off_x"]
    serial = (head + f"  {_loop(d, 'nout')} {{\n    const i64 oi = i;\n"
              "    i64 jo = off_o, jx = off_x;\n" + kept
              + f"    {A} acc = {_identity(d, op, acc_dt)};\n"
              "    for (i64 t = 0; t < R; ++t) {\n" + inner + "    }\n    "
              + d.store(out_dt, "po", "jo", d.convert("acc", out_dt)) + "\n  }")
    wg = (head + f"  {d.local_} {A} sh[{local_size}];\n"
          f"  const int l = {d.local_id(0)};\n  const i64 g = {d.group_id(0)};\n"
          "  const i64 oi = g / C, cc = g % C;\n  i64 jo = off_o, jx = off_x;\n" + kept
          + f"  {A} acc = {_identity(d, op, acc_dt)};\n"
          "  const i64 t0 = cc * chunk;\n  const i64 t1 = t0 + chunk < R ? t0 + chunk : R;\n"
          f"  for (i64 t = t0 + l; t < t1; t += {local_size}) {{\n" + inner + "  }\n"
          f"  sh[l] = acc;\n  {d.barrier};\n"
          f"  for (int s = {local_size // 2}; s > 0; s >>= 1) {{\n"
          f"    if (l < s) sh[l] = {_combine(op, acc_dt, 'sh[l]', 'sh[l + s]')};\n"
          f"    {d.barrier};\n  }}\n"
          "  if (l == 0) " + d.store(out_dt, "po", "jo + cc * cstride", d.convert("sh[0]", out_dt)))
    meta = f"{d.global_}const i64* meta"
    kernels = [d.kernel(f"{name}_s", ["const i64 nout", "const i64 R", meta] + common, serial),
               d.kernel(f"{name}_w", ["const i64 nout", "const i64 R", "const i64 C",
                                      "const i64 chunk", "const i64 cstride", meta] + common, wg)]
    return d.program(kernels, (x_dt, out_dt, acc_dt)), (f"{name}_s", f"{name}_w")


def _lines(d):
    """Prologue of the along-one-dim kernels: meta = [nk, kept sizes, strides of each operand]."""
    return f"  const int nk = (int)meta[0];\n  {d.global_}const i64* sk = meta + 1;\n"


def arg_reduction(d, name, op, x_dt):
    """One work-item per line: the int64 position of the first max (argmax) / min (argmin);
    NaN counts as the extreme. meta = [nk, sizes, out strides, x strides]."""
    X = d.compute(x_dt)
    cmp = ">" if op == "argmax" else "<"
    better = f"(v {cmp} best)" + (" || (isnan(v) && !isnan(best))" if is_float(x_dt) else "")
    body = (_lines(d) + f"  {_loop(d, 'nout')} {{\n    i64 jo = off_o, jx = off_x;\n"
            + _decompose(d, "i", "nk", "sk", [("o", "(sk + nk)"), ("x", "(sk + 2 * nk)")])
            + f"    {X} best = {d.load(x_dt, 'px', 'jx')};\n    i64 bi = 0;\n"
            f"    for (i64 t = 1; t < L; ++t) {{\n      const {X} v = {d.load(x_dt, 'px', 'jx + t * xs')};\n"
            f"      if ({better}) {{ best = v; bi = t; }}\n    }}\n    po[jo] = bi;\n  }}")
    params = ["const i64 nout", "const i64 L", "const i64 xs", f"{d.global_}const i64* meta",
              f"{d.ptr('int64')} po", "const i64 off_o", f"{d.ptr(x_dt, True)} px", "const i64 off_x"]
    return d.program([d.kernel(name, params, body)], (x_dt,)), (name,)


def scan(d, name, op, x_dt, out_dt):
    """One work-item per line, an inclusive scan in out's compute type."""
    A = d.compute(out_dt)
    combine = "+" if op == "cumsum" else "*"
    body = (_lines(d) + f"  {_loop(d, 'nout')} {{\n    i64 jo = off_o, jx = off_x;\n"
            + _decompose(d, "i", "nk", "sk", [("o", "(sk + nk)"), ("x", "(sk + 2 * nk)")])
            + f"    {A} acc = {d.literal(0 if op == 'cumsum' else 1, out_dt)};\n"
            "    for (i64 t = 0; t < L; ++t) {\n"
            f"      acc = acc {combine} {d.convert(d.load(x_dt, 'px', 'jx + t * xs'), out_dt)};\n"
            f"      {d.store(out_dt, 'po', 'jo + t * os', d.convert('acc', out_dt))}\n    }}\n  }}")
    params = ["const i64 nout", "const i64 L", "const i64 os", "const i64 xs",
              f"{d.global_}const i64* meta", f"{d.ptr(out_dt)} po", "const i64 off_o",
              f"{d.ptr(x_dt, True)} px", "const i64 off_x"]
    return d.program([d.kernel(name, params, body)], (x_dt, out_dt)), (name,)


# ---- GEMM ------------------------------------------------------------------------------------

def gemm(d, name, dt):
    """Batched C[b] = A[b] @ B[b] with any strides (0 for a broadcast batch). A work-group of
    WG x WG work-items computes a TILE x TILE block of C; each step stages a TILE x TK slice of
    A and a TK x TILE slice of B in local memory and every work-item accumulates a RB x RB
    register block (rows ty + WG*i, columns tx + WG*j, so local reads are conflict-free)."""
    T, A = d.compute(dt), d.compute(dt)
    tile, tk, wg, rb = GEMM_TILE, GEMM_TK, GEMM_WG, GEMM_RB
    loads_per = tile * tk // (wg * wg)
    body = f"""  {d.local_} {A} As[{tk}][{tile}];
  {d.local_} {A} Bs[{tk}][{tile} + 1];
  const int tx = {d.local_id(0)}, ty = {d.local_id(1)};
  const int tid = ty * {wg} + tx;
  const i64 n0 = {d.group_id(0)} * {tile}, m0 = {d.group_id(1)} * {tile}, bz = {d.group_id(2)};
  const i64 ia = off_a + bz * sab, ib = off_b + bz * sbb, io = off_o + bz * sob;
  {A} acc[{rb}][{rb}];
  for (int i = 0; i < {rb}; ++i) for (int j = 0; j < {rb}; ++j) acc[i][j] = 0;
  for (i64 k0 = 0; k0 < K; k0 += {tk}) {{
    for (int l = 0; l < {loads_per}; ++l) {{
      const int e = tid + l * {wg * wg};
      const int am = e / {tk}, ak = e % {tk};
      const i64 gm = m0 + am, gk = k0 + ak;
      As[ak][am] = (gm < M && gk < K) ? ({A}){d.load(dt, 'pa', 'ia + gm * sam + gk * sak')} : ({A})0;
      const int bk = e / {tile}, bn = e % {tile};
      const i64 gk2 = k0 + bk, gn = n0 + bn;
      Bs[bk][bn] = (gk2 < K && gn < N) ? ({A}){d.load(dt, 'pb', 'ib + gk2 * sbk + gn * sbn')} : ({A})0;
    }}
    {d.barrier};
    for (int kk = 0; kk < {tk}; ++kk) {{
      {A} ar[{rb}], br[{rb}];
      for (int i = 0; i < {rb}; ++i) ar[i] = As[kk][ty + {wg} * i];
      for (int j = 0; j < {rb}; ++j) br[j] = Bs[kk][tx + {wg} * j];
      for (int i = 0; i < {rb}; ++i) for (int j = 0; j < {rb}; ++j) acc[i][j] += ar[i] * br[j];
    }}
    {d.barrier};
  }}
  for (int i = 0; i < {rb}; ++i) {{
    const i64 gm = m0 + ty + {wg} * i;
    if (gm >= M) continue;
    for (int j = 0; j < {rb}; ++j) {{
      const i64 gn = n0 + tx + {wg} * j;
      if (gn < N) {{ {d.store(dt, 'po', 'io + gm * som + gn * son', f'({T})acc[i][j]')} }}
    }}
  }}"""
    params = ["const i64 M", "const i64 N", "const i64 K",
              f"{d.ptr(dt)} po", "const i64 off_o", "const i64 sob", "const i64 som", "const i64 son",
              f"{d.ptr(dt, True)} pa", "const i64 off_a", "const i64 sab", "const i64 sam", "const i64 sak",
              f"{d.ptr(dt, True)} pb", "const i64 off_b", "const i64 sbb", "const i64 sbk", "const i64 sbn"]
    return d.program([d.kernel(name, params, body)], (dt,)), (name,)


# ---- indexing --------------------------------------------------------------------------------

def gather(d, name, dt):
    """out[i] = x[x_offset(i) + index[i] * xsd], over out's shape: meta = [nd, sizes, out
    strides, index strides, x strides (0 along dim)]. index_select is gather with an index
    that is broadcast (stride 0) everywhere but along dim."""
    body = (f"  const int nd = (int)meta[0];\n  {_loop(d)} {{\n    i64 jo = off_o, ji = off_i, jx = off_x;\n"
            + _decompose(d, "i", "nd", "(meta + 1)", [("o", "(meta + 1 + nd)"), ("i", "(meta + 1 + 2 * nd)"),
                                                       ("x", "(meta + 1 + 3 * nd)")])
            + "    jx += pi[ji] * xsd;\n"
            f"    {d.store(dt, 'po', 'jo', d.load(dt, 'px', 'jx'))}\n  }}")
    params = ["const i64 n", "const i64 xsd", f"{d.global_}const i64* meta", f"{d.ptr(dt)} po",
              "const i64 off_o", f"{d.ptr(dt, True)} px", "const i64 off_x",
              f"{d.ptr('int64', True)} pi", "const i64 off_i"]
    return d.program([d.kernel(name, params, body)], (dt,)), (name,)


def scatter_add(d, name, dt):
    """Owner-computes scatter-add (see NOTE [ Deterministic scatter_add ]): meta = [nd, out
    sizes, out strides, index sizes, index strides, src strides]."""
    A = d.compute(dt)
    body = (f"  const int nd = (int)meta[0];\n  {d.global_}const i64* m = meta + 1;\n"
            f"  {_loop(d)} {{\n    i64 jo = off_o, ji = off_i, js = off_s, r = i, cd = 0;\n    int ok = 1;\n"
            "    for (int dd = nd - 1; dd >= 0; --dd) {\n"
            "      const i64 s = m[dd]; const i64 c = r % s; r /= s;\n      jo += c * m[nd + dd];\n"
            "      if (dd == dim) { cd = c; } else {\n        if (c >= m[2 * nd + dd]) ok = 0;\n"
            "        ji += c * m[3 * nd + dd]; js += c * m[4 * nd + dd];\n      }\n    }\n"
            "    if (ok) {\n"
            f"      {A} acc = {d.load(dt, 'po', 'jo')};\n"
            "      for (i64 t = 0; t < L; ++t)\n"
            f"        if (pi[ji + t * isd] == cd) acc = acc + {d.load(dt, 'ps', 'js + t * ssd')};\n"
            f"      {d.store(dt, 'po', 'jo', d.convert('acc', dt))}\n    }}\n  }}")
    params = ["const i64 n", "const int dim", "const i64 L", "const i64 isd", "const i64 ssd",
              f"{d.global_}const i64* meta", f"{d.ptr(dt)} po", "const i64 off_o",
              f"{d.ptr('int64', True)} pi", "const i64 off_i", f"{d.ptr(dt, True)} ps",
              "const i64 off_s"]
    return d.program([d.kernel(name, params, body)], (dt,)), (name,)


def scatter_add_sorted(d, name, dt):
    """Scatter-add over an index already sorted (stably) along `dim`: each output element
    binary-searches its run in its line and adds the source values at the run's positions,
    in ascending position, so the sums are those of `scatter_add` bit for bit (see
    NOTE [ Deterministic scatter_add ]) at O(log L + run) per element instead of O(L).
    meta = [nd, out sizes, out strides, index sizes, sorted strides, src strides]; pk the
    sorted index, pp the positions along dim it came from."""
    A = d.compute(dt)
    body = (f"  const int nd = (int)meta[0];\n  {d.global_}const i64* m = meta + 1;\n"
            f"  {_loop(d)} {{\n    i64 jo = off_o, jk = 0, js = off_s, r = i, cd = 0;\n    int ok = 1;\n"
            "    for (int dd = nd - 1; dd >= 0; --dd) {\n"
            "      const i64 s = m[dd]; const i64 c = r % s; r /= s;\n      jo += c * m[nd + dd];\n"
            "      if (dd == dim) { cd = c; } else {\n        if (c >= m[2 * nd + dd]) ok = 0;\n"
            "        jk += c * m[3 * nd + dd]; js += c * m[4 * nd + dd];\n      }\n    }\n"
            "    if (ok) {\n"
            "      i64 lo = 0, hi = L;\n"
            "      while (lo < hi) {\n        const i64 mid = (lo + hi) / 2;\n"
            "        if (pk[jk + mid * isd] < cd) lo = mid + 1; else hi = mid;\n      }\n"
            "      if (lo < L && pk[jk + lo * isd] == cd) {\n"
            f"        {A} acc = {d.load(dt, 'po', 'jo')};\n"
            "        for (i64 t = lo; t < L && pk[jk + t * isd] == cd; ++t)\n"
            f"          acc = acc + {d.load(dt, 'ps', 'js + pp[jk + t * isd] * ssd')};\n"
            f"        {d.store(dt, 'po', 'jo', d.convert('acc', dt))}\n      }}\n    }}\n  }}")
    params = ["const i64 n", "const int dim", "const i64 L", "const i64 isd", "const i64 ssd",
              f"{d.global_}const i64* meta", f"{d.ptr(dt)} po", "const i64 off_o",
              f"{d.ptr('int64', True)} pk", f"{d.ptr('int64', True)} pp",
              f"{d.ptr(dt, True)} ps", "const i64 off_s"]
    return d.program([d.kernel(name, params, body)], (dt,)), (name,)


# ---- sort ------------------------------------------------------------------------------------

def sort(d, name, dt):
    """Kernels `<name>_init` (lines x P pairs from x, padded), `<name>_step` (one bitonic
    stage (k, j) over lines x P/2 pairs) and `<name>_out` (the first L pairs to values and
    indices). meta = [nk, kept sizes, x strides, values strides, indices strides]."""
    X = d.compute(dt)
    nan = is_float(dt)
    less = "(a < b)" + (" || (!isnan(a) && isnan(b))" if nan else "")
    more = "(a > b)" + (" || (isnan(a) && !isnan(b))" if nan else "")
    fn = d.func_prefix
    helper = (f"{fn} int tl_lt_{name}({X} a, {X} b, int desc) {{\n"
              f"  return desc ? ({more}) : ({less});\n}}\n"
              f"{fn} int tl_before_{name}({X} a, i64 ia, {X} b, i64 ib, i64 L, int desc) {{\n"
              "  if (ia >= L) return 0;\n  if (ib >= L) return 1;\n"
              f"  return tl_lt_{name}(a, b, desc) || (!tl_lt_{name}(b, a, desc) && ia < ib);\n}}\n")
    g = d.global_
    line = lambda ops: ("    i64 " + ", ".join(f"j{o} = off_{o}" for o, _ in ops) + ";\n"
                        + _decompose(d, "ln", "nk", "sk", ops))
    init = (_lines(d) + f"  {_loop(d, 'lines * P')} {{\n    const i64 ln = i / P, p = i % P;\n"
            + line([("x", "(sk + nk)")])
            + f"    {X} v = p < L ? {d.load(dt, 'px', 'jx + p * xs')} : ({X})0;\n"
            f"    {d.store(dt, 'kt', 'i', 'v')}\n    it[i] = p;\n  }}")
    step = (f"  const i64 h = P / 2;\n  {_loop(d, 'lines * h')} {{\n"
            "    const i64 ln = i / h, q = i % h;\n"
            "    const i64 a = ln * P + (q / j) * 2 * j + (q % j), b = a + j;\n"
            "    const int up = (((a - ln * P) & k) == 0);\n"
            f"    const {X} ka = {d.load(dt, 'kt', 'a')}, kb = {d.load(dt, 'kt', 'b')};\n"
            "    const i64 ia = it[a], ib = it[b];\n"
            f"    const int sw = up ? tl_before_{name}(kb, ib, ka, ia, L, desc) : "
            f"tl_before_{name}(ka, ia, kb, ib, L, desc);\n"
            f"    if (sw) {{ {d.store(dt, 'kt', 'a', 'kb')} {d.store(dt, 'kt', 'b', 'ka')} "
            "it[a] = ib; it[b] = ia; }\n  }")
    out = (_lines(d) + f"  {_loop(d, 'lines * L')} {{\n    const i64 ln = i / L, p = i % L;\n"
           + line([("v", "(sk + 2 * nk)"), ("i", "(sk + 3 * nk)")])
           + f"    {d.store(dt, 'pv', 'jv + p * vs', d.load(dt, 'kt', 'ln * P + p'))}\n"
           "    pi[ji + p * is] = it[ln * P + p];\n  }")
    kt, it = f"{d.ptr(dt)} kt", f"{g}i64* it"
    meta = f"{g}const i64* meta"
    kernels = [
        d.kernel(f"{name}_init", ["const i64 lines", "const i64 L", "const i64 P", "const i64 xs",
                                  meta, f"{d.ptr(dt, True)} px", "const i64 off_x", kt, it], init),
        d.kernel(f"{name}_step", ["const i64 lines", "const i64 L", "const i64 P", "const i64 k",
                                  "const i64 j", "const int desc", kt, it], step),
        d.kernel(f"{name}_out", ["const i64 lines", "const i64 L", "const i64 P", "const i64 vs",
                                 "const i64 is", meta, f"{d.ptr(dt)} pv", "const i64 off_v",
                                 f"{g}i64* pi", "const i64 off_i", kt, it], out),
    ]
    return d.program([helper] + kernels, (dt,)), tuple(f"{name}_{s}" for s in ("init", "step", "out"))


# ---- random ----------------------------------------------------------------------------------

_MANT = {"float16": 11, "bfloat16": 8, "float32": 24}


def random(d, name, kind_, dt):
    """Philox4x32-10 (tensorlib_cpu/philox.py): number j of the stream to element j of out in
    row-major order; meta = [nd, sizes, out strides]. kind_ is 'uniform' or 'normal'."""
    wide = dt == "float64"
    k = 2 if wide else 1
    F = "double" if wide else "float"

    def unit(w, one_minus=False):
        if wide:
            m = (f"((u64)(tl_philox_word(seed, {w}) >> 5) * (u64)67108864 + "
                 f"(u64)(tl_philox_word(seed, {w} + 1) >> 6))")
            bits = 53
        else:
            bits = _MANT[dt] if kind_ == "uniform" else 24
            m = f"(tl_philox_word(seed, {w}) >> {32 - bits})"
        if one_minus:
            m = f"(((u64)1 << {bits}) - (u64){m})"
        return f"(({F}){m} * {repr(2.0 ** -bits)}{'' if wide else 'f'})"

    if kind_ == "uniform":
        value = unit(f"(offset + (u64){k} * (u64)i)")
    else:
        value = "z"
    normal = "" if kind_ == "uniform" else (
        f"    const u64 gw = offset + (u64){k} * (u64)i;\n"
        f"    const u64 pw = gw - gw % (u64){2 * k};\n"
        f"    const {F} u1 = {unit('pw', one_minus=True)};\n"
        f"    const {F} u2 = {unit(f'(pw + (u64){k})')};\n"
        f"    const {F} rr = sqrt(({F})-2.0 * log(u1));\n"
        f"    const {F} th = {repr(6.283185307179586) if wide else repr(float(6.2831854820251465)) + 'f'} * u2;\n"
        f"    const {F} z = (gw % (u64){2 * k} < (u64){k}) ? rr * cos(th) : rr * sin(th);\n")
    body = (f"  const int nd = (int)meta[0];\n  {_loop(d)} {{\n    i64 jo = off_o;\n"
            + _decompose(d, "i", "nd", "(meta + 1)", [("o", "(meta + 1 + nd)")]) + normal
            + f"    {d.store(dt, 'po', 'jo', f'(({d.compute(dt)}){value})')}\n  }}")
    params = ["const i64 n", "const u64 seed", "const u64 offset", f"{d.global_}const i64* meta",
              f"{d.ptr(dt)} po", "const i64 off_o"]
    return d.program([_helpers(d, [("philox", "")]), d.kernel(name, params, body)], (dt,)), (name,)


GEMV_RB, GEMV_W = 8, 16      # vector GEMM: rows per work-item, columns per vector


def gemm_vector(d, name, dt):
    """Batched GEMM for CPU-like devices (PoCL), where explicit vectors are what vectorises:
    each work-item owns RB rows x W columns of C as RB vectors of W, streaming a vector of a
    row of B and broadcasting elements of A (register blocking, no local memory). Needs B and
    C contiguous along N and N % W == 0 (the launcher checks; otherwise `gemm`)."""
    rb, w = GEMV_RB, GEMV_W
    V = d.vector(d.compute(dt), w)
    body = f"""  const i64 n0 = {d.global_id(0)} * {w}, m0 = {d.global_id(1)} * {rb};
  const i64 bz = {d.global_id(2)};
  if (n0 >= N || m0 >= M) return;
  const i64 ia = off_a + bz * sab, ib = off_b + bz * sbb + n0, io = off_o + bz * sob + n0;
  i64 rows[{rb}];
  for (int r = 0; r < {rb}; ++r) rows[r] = ia + (m0 + r < M ? m0 + r : M - 1) * sam;
  {V} acc[{rb}];
  for (int r = 0; r < {rb}; ++r) acc[r] = ({V})(0);
  for (i64 k = 0; k < K; ++k) {{
    const {V} b = {d.vload(w, 'pb', 'ib + k * sbk')};
    for (int r = 0; r < {rb}; ++r) acc[r] = fma(({V})(pa[rows[r] + k * sak]), b, acc[r]);
  }}
  for (int r = 0; r < {rb}; ++r)
    if (m0 + r < M) {d.vstore(w, 'acc[r]', 'po', 'io + (m0 + r) * som')}"""
    params = ["const i64 M", "const i64 N", "const i64 K",
              f"{d.ptr(dt)} po", "const i64 off_o", "const i64 sob", "const i64 som",
              f"{d.ptr(dt, True)} pa", "const i64 off_a", "const i64 sab", "const i64 sam", "const i64 sak",
              f"{d.ptr(dt, True)} pb", "const i64 off_b", "const i64 sbb", "const i64 sbk"]
    return d.program([d.kernel(name, params, body)], (dt,)), (name,)
