"""Composite kernels of the generated-code GPU backends, written once against a dialect:
fused softmax / log_softmax and their backward along any dim, 2-D max pooling and its
backward, layer_norm and its backward, cross_entropy with class targets and its backward, and the
fused SGD and Adam/AdamW updates. Each op function takes the same arguments as the CPU
backend's kernel of the same name (the ops look them up by name) and launches through the
backend's device adapter (`primitives` documents it); `source(D, key)` writes a program.

Softmax is one work-group per line: an online (max, sum of exp) pass reduced in local
memory, then one pass writing exp(x - max) / sum (or x - max - log(sum)); the 16-bit floats
compute in float. Layer norm is one work-group per row too: the mean, then the variance of
the deviations (two passes in float, as exact as the CPU's), then one pass writing the
normalized row with weight and bias. Cross entropy is one work-group per row of logits: the
online (max, sum of exp) pass gives the row's log-sum-exp, the loss is lse - x[target]; its
backward recomputes the pass (no saved statistics) and writes g * (softmax - onehot).
Max-pool backward is gather-form: each input element sums the gradients of
the windows that chose it (no atomics, deterministic, linear in the batch)."""
import numpy as np

from tensorlib._C.tensor_impl import is_contiguous
from tensorlib.codegen.cdialect import is_float
from tensorlib.codegen.primitives import _dk, _dt, _h, _lines, _prod, copy, fill, kernel_name
from tensorlib.codegen.templates import _decompose

FAMILIES = ("softmax", "softmax_bwd", "layer_norm", "layer_norm_bwd", "cross_entropy", "cross_entropy_bwd",
            "max_pool2d", "max_pool_bwd", "sgd", "adam")


def is_composite(key):
    return key[0] in FAMILIES


def _ptr(D, dt, const=False):
    return D.ptr(dt, const)


def _tree(D, local, combine):
    """Statements reducing local arrays pairwise down to index 0 (`combine(l, l + s)`)."""
    return (f"  {D.barrier};\n  for (int s = {local // 2}; s > 0; s >>= 1) {{\n"
            f"    if (l < s) {{ {combine} }}\n    {D.barrier};\n  }}\n")


def softmax(D, name, log, dt, local):
    A = D.compute("float32" if dt in ("float16", "bfloat16") else dt)
    inf = D.literal(float("inf"), dt if dt == "float64" else "float32")
    head = (f"  const int nk = (int)meta[0];\n  {D.global_}const i64* sk = meta + 1;\n"
            f"  const int l = {D.local_id(0)};\n  const i64 line = {D.group_id(0)};\n")
    online = f"""  {D.local_} {A} sm[{local}];
  {D.local_} {A} ss[{local}];
  i64 jo = off_o, jx = off_x;
{_decompose(D, "line", "nk", "sk", [("o", "(sk + nk)"), ("x", "(sk + 2 * nk)")])}  {A} m = -{inf}, s = 0;
  for (i64 t = l; t < L; t += {local}) {{
    const {A} v = {D.load(dt, 'px', 'jx + t * xs')};
    if (v > m) {{ s = s * exp(m - v) + 1; m = v; }}
    else if (m != -{inf}) {{ s += exp(v - m); }}
    else if (v != v) {{ s = v; }}
  }}
  sm[l] = m; ss[l] = s;
"""
    combine = (f"const {A} m1 = sm[l], m2 = sm[l + s]; const {A} mx = m1 > m2 ? m1 : m2;\n"
               f"      const {A} a = m1 == -{inf} ? ss[l] * 0 : ss[l] * exp(m1 - mx);\n"
               f"      const {A} b = m2 == -{inf} ? ss[l + s] * 0 : ss[l + s] * exp(m2 - mx);\n"
               "      sm[l] = mx; ss[l] = a + b;")
    value = "v - mx - lse" if log else "exp(v - mx) * inv"
    write = f"""  const {A} mx = sm[0];
  const {A} lse = log(ss[0]), inv = ({A})1 / ss[0];
  for (i64 t = l; t < L; t += {local}) {{
    const {A} v = {D.load(dt, 'px', 'jx + t * xs')};
    {D.store(dt, 'po', 'jo + t * os', value)}
  }}"""
    body = head + online + _tree(D, local, combine) + write
    params = ["const i64 lines", "const i64 L", "const i64 os", "const i64 xs",
              f"{D.global_}const i64* meta", f"{_ptr(D, dt)} po", "const i64 off_o",
              f"{_ptr(D, dt, True)} px", "const i64 off_x"]
    return D.program([D.kernel(name, params, body)], (dt,)), (name,)


def softmax_backward(D, name, log, dt, local):
    A = D.compute("float32" if dt in ("float16", "bfloat16") else dt)
    term = "gv" if log else "gv * yv"
    value = "gv - exp(yv) * total" if log else "yv * (gv - total)"
    body = f"""  const int nk = (int)meta[0];
  {D.global_}const i64* sk = meta + 1;
  const int l = {D.local_id(0)};
  const i64 line = {D.group_id(0)};
  {D.local_} {A} sh[{local}];
  i64 ji = off_i, jg = off_g, jy = off_y;
{_decompose(D, "line", "nk", "sk", [("i", "(sk + nk)"), ("g", "(sk + 2 * nk)"), ("y", "(sk + 3 * nk)")])}  {A} acc = 0;
  for (i64 t = l; t < L; t += {local}) {{
    const {A} gv = {D.load(dt, 'pg', 'jg + t * gs')}, yv = {D.load(dt, 'py', 'jy + t * ys')};
    acc += {term};
  }}
  sh[l] = acc;
{_tree(D, local, "sh[l] = sh[l] + sh[l + s];")}  const {A} total = sh[0];
  for (i64 t = l; t < L; t += {local}) {{
    const {A} gv = {D.load(dt, 'pg', 'jg + t * gs')}, yv = {D.load(dt, 'py', 'jy + t * ys')};
    {D.store(dt, 'pi', 'ji + t * is', value)}
  }}"""
    params = ["const i64 lines", "const i64 L", "const i64 is", "const i64 gs", "const i64 ys",
              f"{D.global_}const i64* meta", f"{_ptr(D, dt)} pi", "const i64 off_i",
              f"{_ptr(D, dt, True)} pg", "const i64 off_g", f"{_ptr(D, dt, True)} py",
              "const i64 off_y"]
    return D.program([D.kernel(name, params, body)], (dt,)), (name,)


def layer_norm(D, name, dt, local):
    """out = (x - mean) / sqrt(var + eps) * w + b over rows of length L (contiguous); with
    has_stats, each row's (mean, rstd) also goes to ps (in the compute type) for backward."""
    A = D.compute("float32" if dt in ("float16", "bfloat16") else dt)
    S = "float32" if dt in ("float16", "bfloat16") else dt
    body = f"""  const int l = {D.local_id(0)};
  const i64 row = {D.group_id(0)};
  {D.local_} {A} sh[{local}];
  const i64 jx = off_x + row * L, jo = off_o + row * L;
  {A} acc = 0;
  for (i64 t = l; t < L; t += {local}) acc += {D.load(dt, 'px', 'jx + t')};
  sh[l] = acc;
{_tree(D, local, "sh[l] = sh[l] + sh[l + s];")}  const {A} mean = sh[0] / ({A})L;
  {D.barrier};
  acc = 0;
  for (i64 t = l; t < L; t += {local}) {{
    const {A} d = {D.load(dt, 'px', 'jx + t')} - mean;
    acc += d * d;
  }}
  sh[l] = acc;
{_tree(D, local, "sh[l] = sh[l] + sh[l + s];")}  const {A} rstd = ({A})1 / sqrt(sh[0] / ({A})L + eps);
  if (has_stats && l == 0) {{ ps[off_s + 2 * row] = mean; ps[off_s + 2 * row + 1] = rstd; }}
  for (i64 t = l; t < L; t += {local}) {{
    {A} v = ({D.load(dt, 'px', 'jx + t')} - mean) * rstd;
    if (has_w) v = v * {D.load(dt, 'pw', 'off_w + t')};
    if (has_b) v = v + {D.load(dt, 'pb', 'off_b + t')};
    {D.store(dt, 'po', 'jo + t', D.convert('v', dt))}
  }}"""
    params = ["const i64 rows", "const i64 L", f"const {A} eps", f"{_ptr(D, dt)} po",
              "const i64 off_o", f"{_ptr(D, dt, True)} px", "const i64 off_x",
              f"{_ptr(D, dt, True)} pw", "const i64 off_w", f"{_ptr(D, dt, True)} pb",
              "const i64 off_b", "const int has_w", "const int has_b", f"{_ptr(D, S)} ps",
              "const i64 off_s", "const int has_stats"]
    return D.program([D.kernel(name, params, body)], (dt, S)), (name,)


def layer_norm_backward(D, name, dt, local):
    """gx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) per row, gw = g * w, from the
    forward's saved (mean, rstd)."""
    A = D.compute("float32" if dt in ("float16", "bfloat16") else dt)
    S = "float32" if dt in ("float16", "bfloat16") else dt
    gw = f"{D.load(dt, 'pg', 'jg + t')} * (has_w ? ({A}){D.load(dt, 'pw', 'off_w + t')} : ({A})1)"
    body = f"""  const int l = {D.local_id(0)};
  const i64 row = {D.group_id(0)};
  {D.local_} {A} sa[{local}];
  {D.local_} {A} sb[{local}];
  const i64 jx = off_x + row * L, jg = off_g + row * L, ji = off_i + row * L;
  const {A} mean = ps[off_s + 2 * row], rstd = ps[off_s + 2 * row + 1];
  {A} a = 0, b = 0;
  for (i64 t = l; t < L; t += {local}) {{
    const {A} gw = {gw};
    a += gw;
    b += gw * (({D.load(dt, 'px', 'jx + t')} - mean) * rstd);
  }}
  sa[l] = a; sb[l] = b;
{_tree(D, local, "sa[l] = sa[l] + sa[l + s]; sb[l] = sb[l] + sb[l + s];")}  const {A} ma = sa[0] / ({A})L, mb = sb[0] / ({A})L;
  for (i64 t = l; t < L; t += {local}) {{
    const {A} gw = {gw};
    const {A} xhat = ({D.load(dt, 'px', 'jx + t')} - mean) * rstd;
    const {A} v = rstd * (gw - ma - xhat * mb);
    {D.store(dt, 'pi', 'ji + t', D.convert('v', dt))}
  }}"""
    params = ["const i64 rows", "const i64 L", f"{_ptr(D, dt)} pi", "const i64 off_i",
              f"{_ptr(D, dt, True)} pg", "const i64 off_g", f"{_ptr(D, dt, True)} px",
              "const i64 off_x", f"{_ptr(D, dt, True)} pw", "const i64 off_w",
              "const int has_w", f"{_ptr(D, S, True)} ps", "const i64 off_s"]
    return D.program([D.kernel(name, params, body)], (dt, S)), (name,)


def _row_lse(D, A, dt, local):
    """Statements leaving the row's max in `mx` and sum of exp(x - mx) in `total` (the
    online pass over px[jx + t], t < C, reduced in local memory)."""
    inf = D.literal(float("inf"), dt if dt == "float64" else "float32")
    combine = (f"const {A} m1 = sm[l], m2 = sm[l + s]; const {A} mm = m1 > m2 ? m1 : m2;\n"
               f"      const {A} a = m1 == -{inf} ? ss[l] * 0 : ss[l] * exp(m1 - mm);\n"
               f"      const {A} b = m2 == -{inf} ? ss[l + s] * 0 : ss[l + s] * exp(m2 - mm);\n"
               "      sm[l] = mm; ss[l] = a + b;")
    return f"""  {D.local_} {A} sm[{local}];
  {D.local_} {A} ss[{local}];
  {A} m = -{inf}, sum = 0;
  for (i64 t = l; t < C; t += {local}) {{
    const {A} v = {D.load(dt, 'px', 'jx + t')};
    if (v > m) {{ sum = sum * exp(m - v) + 1; m = v; }}
    else if (m != -{inf}) {{ sum += exp(v - m); }}
    else if (v != v) {{ sum = v; }}
  }}
  sm[l] = m; ss[l] = sum;
{_tree(D, local, combine)}  const {A} mx = sm[0], total = ss[0];
"""


def cross_entropy(D, name, dt, local):
    """loss[row] = logsumexp(x[row]) - x[row, target[row]] (0 where target == ignore)."""
    A = D.compute("float32" if dt in ("float16", "bfloat16") else dt)
    body = f"""  const int l = {D.local_id(0)};
  const i64 row = {D.group_id(0)};
  const i64 jx = off_x + row * C;
{_row_lse(D, A, dt, local)}  if (l == 0) {{
    const i64 t = pt[off_t + row];
    const {A} loss = t == ignore ? ({A})0 : mx + log(total) - {D.load(dt, 'px', 'jx + t')};
    {D.store(dt, 'po', 'off_o + row', D.convert('loss', dt))}
  }}"""
    params = ["const i64 rows", "const i64 C", "const i64 ignore", f"{_ptr(D, dt)} po",
              "const i64 off_o", f"{_ptr(D, dt, True)} px", "const i64 off_x",
              f"{D.ptr('int64', True)} pt", "const i64 off_t"]
    return D.program([D.kernel(name, params, body)], (dt,)), (name,)


def cross_entropy_backward(D, name, dt, local):
    """gx[row, j] = g[row] * (softmax(x[row])[j] - (j == target)) (0 where ignored)."""
    A = D.compute("float32" if dt in ("float16", "bfloat16") else dt)
    body = f"""  const int l = {D.local_id(0)};
  const i64 row = {D.group_id(0)};
  const i64 jx = off_x + row * C, ji = off_i + row * C;
{_row_lse(D, A, dt, local)}  const i64 t = pt[off_t + row];
  const {A} g = t == ignore ? ({A})0 : {D.load(dt, 'pg', 'off_g + row')};
  const {A} inv = ({A})1 / total;
  for (i64 j = l; j < C; j += {local}) {{
    const {A} p = exp({D.load(dt, 'px', 'jx + j')} - mx) * inv;
    const {A} v = g * (j == t ? p - 1 : p);
    {D.store(dt, 'pi', 'ji + j', D.convert('v', dt))}
  }}"""
    params = ["const i64 rows", "const i64 C", "const i64 ignore", f"{_ptr(D, dt)} pi",
              "const i64 off_i", f"{_ptr(D, dt, True)} pg", "const i64 off_g",
              f"{_ptr(D, dt, True)} px", "const i64 off_x", f"{D.ptr('int64', True)} pt",
              "const i64 off_t"]
    return D.program([D.kernel(name, params, body)], (dt,)), (name,)


def max_pool2d(D, name, dt):
    """One work-item per output: the first maximum of its window (NaN wins) and its flat
    index in the plane. meta = [O0, k0, O1, k1, H, W]; the rows (O0 x k0) and cols (O1 x k1)
    position tables are device buffers, -1 where the window element is padding."""
    X = D.compute(dt)
    nan = " || (v != v && best == best)" if is_float(dt) else ""
    body = f"""  const i64 O0 = meta[0], k0 = meta[1], O1 = meta[2], k1 = meta[3], H = meta[4], W = meta[5];
  const i64 i = {D.global_id(0)};
  if (i >= n) return;
  const i64 o1 = i % O1, o0 = (i / O1) % O0, plane = i / (O0 * O1);
  const i64 base = off_x + plane * H * W;
  {X} best = {D.lowest(dt)};
  i64 bi = -1;
  for (i64 a = 0; a < k0; ++a) {{
    const i64 r = rows[off_r + o0 * k0 + a];
    if (r < 0) continue;
    for (i64 b = 0; b < k1; ++b) {{
      const i64 c = cols[off_c + o1 * k1 + b];
      if (c < 0) continue;
      const {X} v = {D.load(dt, 'px', 'base + r * W + c')};
      if (bi < 0 || v > best{nan}) {{ best = v; bi = r * W + c; }}
    }}
  }}
  {D.store(dt, 'pv', 'off_v + i', 'best')}
  pi[off_i + i] = bi < 0 ? 0 : bi;"""
    params = ["const i64 n", f"{D.global_}const i64* meta", f"{_ptr(D, dt)} pv", "const i64 off_v",
              f"{D.ptr('int64')} pi", "const i64 off_i", f"{_ptr(D, dt, True)} px",
              "const i64 off_x", f"{D.ptr('int64', True)} rows", "const i64 off_r",
              f"{D.ptr('int64', True)} cols", "const i64 off_c"]
    return D.program([D.kernel(name, params, body)], (dt,)), (name,)


def max_pool_backward_gather(D, name, dt):
    """Gather form, one work-item per input element, no atomics (deterministic, and linear
    in the batch): it sums the gradients of the outputs whose window holds it and whose
    maximum it was. Up to 3 spatial dims (fewer are padded with size-1 dims). meta = [S0, S1,
    S2, O0, O1, O2]; per dim d, the CSR of the outputs whose window covers each input
    position: offsets `fd` (S_d + 1) and outputs `cd`, device buffers."""
    A = D.compute(dt)
    body = f"""  const i64 i = {D.global_id(0)};
  if (i >= n) return;
  const i64 S1 = meta[1], S2 = meta[2], O0 = meta[3], O1 = meta[4], O2 = meta[5];
  const i64 plane_in = meta[0] * S1 * S2;
  const i64 flat = i % plane_in, plane = i / plane_in;
  const i64 s2 = flat % S2, s1 = (flat / S2) % S1, s0 = flat / (S1 * S2);
  const i64 base = plane * O0 * O1 * O2;
  {A} acc = 0;
  for (i64 a = f0[off_f0 + s0]; a < f0[off_f0 + s0 + 1]; ++a)
    for (i64 b = f1[off_f1 + s1]; b < f1[off_f1 + s1 + 1]; ++b)
      for (i64 c = f2[off_f2 + s2]; c < f2[off_f2 + s2 + 1]; ++c) {{
        const i64 j = base + (c0[off_c0 + a] * O1 + c1[off_c1 + b]) * O2 + c2[off_c2 + c];
        if (pi[off_i + j] == flat) acc = acc + {D.load(dt, 'pg', 'off_g + j')};
      }}
  {D.store(dt, 'px', 'off_x + i', D.convert('acc', dt))}"""
    tables = [p for d in range(3) for p in (f"{D.ptr('int64', True)} f{d}",
                                            f"const i64 off_f{d}")] + \
             [p for d in range(3) for p in (f"{D.ptr('int64', True)} c{d}",
                                            f"const i64 off_c{d}")]
    params = ["const i64 n", f"{D.global_}const i64* meta", f"{_ptr(D, dt)} px",
              "const i64 off_x", f"{_ptr(D, dt, True)} pg", "const i64 off_g",
              f"{D.ptr('int64', True)} pi", "const i64 off_i"] + tables
    return D.program([D.kernel(name, params, body)], (dt,)), (name,)


def sgd(D, name, dt):
    """The SGD step of `tensorlib.optim.sgd` for one flat tensor, in one pass."""
    A = D.compute(dt)
    body = f"""  const i64 i = {D.global_id(0)};
  if (i >= n) return;
  const {A} p = {D.load(dt, 'pp', 'off_p + i')};
  {A} d = {D.load(dt, 'pg', 'off_g + i')};
  if (maximize) d = -d;
  if (wd != 0) d = d + wd * p;
  if (momentum != 0) {{
    const {A} b = first ? d : momentum * {D.load(dt, 'pb', 'off_b + i')} + damp1 * d;
    {D.store(dt, 'pb', 'off_b + i', 'b')}
    d = nesterov ? d + momentum * b : b;
  }}
  {D.store(dt, 'pp', 'off_p + i', 'p - lr * d')}"""
    params = ["const i64 n", f"{_ptr(D, dt)} pp", "const i64 off_p", f"{_ptr(D, dt, True)} pg",
              "const i64 off_g", f"{_ptr(D, dt)} pb", "const i64 off_b", f"const {A} lr",
              f"const {A} wd", f"const {A} momentum", f"const {A} damp1", "const int nesterov",
              "const int maximize", "const int first"]
    return D.program([D.kernel(name, params, body)], (dt,)), (name,)


def adam(D, name, dt):
    """One Adam/AdamW step of one flat parameter, as `tensorlib.optim.adam._adam_update`
    (step_size = lr / (1 - beta1^t), bc2 = sqrt(1 - beta2^t), computed on the host)."""
    A = D.compute(dt)
    body = f"""  const i64 i = {D.global_id(0)};
  if (i >= n) return;
  {A} p = {D.load(dt, 'pp', 'off_p + i')};
  {A} g = {D.load(dt, 'pg', 'off_g + i')};
  if (maximize) g = -g;
  if (decoupled) p = p * shrink;
  else if (wd != 0) g = g + wd * p;
  const {A} m = beta1 * {D.load(dt, 'pm', 'off_m + i')} + (1 - beta1) * g;
  const {A} v = beta2 * {D.load(dt, 'pv', 'off_v + i')} + (1 - beta2) * g * g;
  {D.store(dt, 'pm', 'off_m + i', 'm')}
  {D.store(dt, 'pv', 'off_v + i', 'v')}
  {A} vmax = v;
  if (amsgrad) {{
    const {A} old = {D.load(dt, 'px', 'off_x + i')};
    vmax = old > v ? old : v;
    {D.store(dt, 'px', 'off_x + i', 'vmax')}
  }}
  const {A} denom = sqrt(vmax) / bc2 + eps;
  {D.store(dt, 'pp', 'off_p + i', 'p - step_size * (m / denom)')}"""
    params = ["const i64 n", f"{_ptr(D, dt)} pp", "const i64 off_p", f"{_ptr(D, dt, True)} pg",
              "const i64 off_g", f"{_ptr(D, dt)} pm", "const i64 off_m", f"{_ptr(D, dt)} pv",
              "const i64 off_v", f"{_ptr(D, dt)} px", "const i64 off_x", f"const {A} step_size",
              f"const {A} bc2", f"const {A} beta1", f"const {A} beta2", f"const {A} wd",
              f"const {A} shrink", f"const {A} eps", "const int amsgrad", "const int maximize",
              "const int decoupled"]
    return D.program([D.kernel(name, params, body)], (dt,)), (name,)


def source(D, key):
    name = kernel_name(key)
    family = key[0]
    if family == "softmax":
        return softmax(D, name, *key[1:])
    if family == "softmax_bwd":
        return softmax_backward(D, name, *key[1:])
    if family == "layer_norm":
        return layer_norm(D, name, *key[1:])
    if family == "layer_norm_bwd":
        return layer_norm_backward(D, name, *key[1:])
    if family == "cross_entropy":
        return cross_entropy(D, name, *key[1:])
    if family == "cross_entropy_bwd":
        return cross_entropy_backward(D, name, *key[1:])
    if family == "max_pool2d":
        return max_pool2d(D, name, key[1])
    if family == "max_pool_bwd":
        return max_pool_backward_gather(D, name, key[1])
    if family == "sgd":
        return sgd(D, name, key[1])
    if family == "adam":
        return adam(D, name, key[1])
    raise KeyError(f"no composite family {family!r} (key {key})")


FLOATS = ("float16", "bfloat16", "float32", "float64")
LOCALS = (32, 64, 128, 256)


def keys():
    """Every composite program a backend may build (for compile-only checks)."""
    found = []
    for dt in FLOATS:
        for log in (0, 1):
            found += [("softmax", log, dt, n) for n in LOCALS]
            found += [("softmax_bwd", log, dt, n) for n in LOCALS]
        found += [(family, dt, n) for family in ("layer_norm", "layer_norm_bwd",
                                                 "cross_entropy", "cross_entropy_bwd")
                  for n in LOCALS]
        found += [("max_pool2d", dt), ("max_pool_bwd", dt)]
    found += [(family, dt) for family in ("sgd", "adam") for dt in ("float32", "float64")]
    return found


# ---- the op functions ----------------------------------------------------------------------

def _local_for(dk, L):
    """Work-group size for lines of L: a power of two from 32 up to the device's."""
    n = 32
    while n < L and n < dk.local:
        n *= 2
    return min(n, dk.local)


def _softmax_forward(log):
    def kernel(out, x, dim):
        dk = _dk(out, x)
        dim %= max(1, len(x._sizes))
        L = x._sizes[dim] if x._sizes else 1
        sz, st = _lines(out, x, dim)
        lines = _prod(sz)
        if lines == 0 or L == 0:
            return
        local = _local_for(dk, L)
        (k,) = dk.kernels(("softmax", int(log), _dt(x), local)).values()
        os_, xs = (out._strides[dim], x._strides[dim]) if x._sizes else (0, 0)
        dk.launch(k, (lines * local,), (local,), lines, L, os_, xs,
                  dk.meta((len(sz),) + sz + sum(st, ())), _h(out), out._offset, _h(x), x._offset)
    kernel.__name__ = "log_softmax" if log else "softmax"
    return kernel


def _softmax_backward(log):
    def kernel(grad_input, grad, y, dim):
        dk = _dk(grad_input, grad, y)
        dim %= max(1, len(y._sizes))
        L = y._sizes[dim] if y._sizes else 1
        sz, st = _lines(grad_input, grad, dim, y)
        lines = _prod(sz)
        if lines == 0 or L == 0:
            return
        local = _local_for(dk, L)
        (k,) = dk.kernels(("softmax_bwd", int(log), _dt(y), local)).values()
        s = [t._strides[dim] if t._sizes else 0 for t in (grad_input, grad, y)]
        dk.launch(k, (lines * local,), (local,), lines, L, *s,
                  dk.meta((len(sz),) + sz + sum(st, ())), _h(grad_input), grad_input._offset,
                  _h(grad), grad._offset, _h(y), y._offset)
    kernel.__name__ = ("log_softmax" if log else "softmax") + "_backward"
    return kernel


def _contiguous(t):
    """t, or a contiguous copy of it on its device."""
    if t is None or is_contiguous(t):
        return t
    from tensorlib._C.factory import empty
    tmp = empty(t._sizes, t._dtype, t._device)
    copy(tmp, t)
    return tmp


def layer_norm_kernel(out, x, weight, bias, normalized_ndim, eps, stats=None):
    """The fused layer_norm (contracts in nn/_functional/normalization.py): inference, or
    with `stats` (rows, 2) in the compute dtype, training (each row's mean and rstd)."""
    dt = _dt(x)
    x, weight, bias = _contiguous(x), _contiguous(weight), _contiguous(bias)
    dst = _contiguous(out)
    dk = _dk(*(t for t in (dst, x, weight, bias, stats) if t is not None))
    L = _prod(x._sizes[len(x._sizes) - normalized_ndim:])
    rows = _prod(x._sizes) // L if L else 0
    if rows and L:
        local = _local_for(dk, L)
        (k,) = dk.kernels(("layer_norm", dt, local)).values()
        w, b = weight if weight is not None else x, bias if bias is not None else x
        s = stats if stats is not None else x
        acc = np.float64 if dt == "float64" else np.float32
        dk.launch(k, (rows * local,), (local,), rows, L, acc(eps), _h(dst), dst._offset,
                  _h(x), x._offset, _h(w), w._offset, _h(b), b._offset,
                  np.int32(weight is not None), np.int32(bias is not None), _h(s), s._offset,
                  np.int32(stats is not None))
    if dst is not out:
        copy(out, dst)


def layer_norm_train_kernel(out, stats, x, weight, bias, normalized_ndim, eps):
    layer_norm_kernel(out, x, weight, bias, normalized_ndim, eps, stats)


def layer_norm_backward_kernel(grad_input, grad_out, x, weight, stats, normalized_ndim):
    """grad_input of layer_norm from the forward's saved (mean, rstd) per row."""
    dt = _dt(x)
    x, grad_out, weight = _contiguous(x), _contiguous(grad_out), _contiguous(weight)
    dst = _contiguous(grad_input)
    dk = _dk(*(t for t in (dst, grad_out, x, weight, stats) if t is not None))
    L = _prod(x._sizes[len(x._sizes) - normalized_ndim:])
    rows = _prod(x._sizes) // L if L else 0
    if rows and L:
        local = _local_for(dk, L)
        (k,) = dk.kernels(("layer_norm_bwd", dt, local)).values()
        w = weight if weight is not None else x
        dk.launch(k, (rows * local,), (local,), rows, L, _h(dst), dst._offset, _h(grad_out),
                  grad_out._offset, _h(x), x._offset, _h(w), w._offset,
                  np.int32(weight is not None), _h(stats), stats._offset)
    if dst is not grad_input:
        copy(grad_input, dst)


def cross_entropy_kernel(out, x, target, ignore_index):
    """Per-row losses of (N, C) logits x and int64 class targets (N,) (the fused contract in
    nn/_functional/loss.py; targets are checked by the caller)."""
    x, target = _contiguous(x), _contiguous(target)
    dst = _contiguous(out)
    dk = _dk(dst, x, target)
    rows, C = x._sizes
    if rows:
        local = _local_for(dk, C)
        (k,) = dk.kernels(("cross_entropy", _dt(x), local)).values()
        dk.launch(k, (rows * local,), (local,), rows, C, int(ignore_index), _h(dst),
                  dst._offset, _h(x), x._offset, _h(target), target._offset)
    if dst is not out:
        copy(out, dst)


def cross_entropy_backward_kernel(grad_input, grad_rows, x, target, ignore_index):
    """grad_input = grad_rows[:, None] * (softmax(x) - onehot(target)), 0 on ignored rows."""
    x, target, grad_rows = _contiguous(x), _contiguous(target), _contiguous(grad_rows)
    dst = _contiguous(grad_input)
    dk = _dk(dst, grad_rows, x, target)
    rows, C = x._sizes
    if rows and C:
        local = _local_for(dk, C)
        (k,) = dk.kernels(("cross_entropy_bwd", _dt(x), local)).values()
        dk.launch(k, (rows * local,), (local,), rows, C, int(ignore_index), _h(dst),
                  dst._offset, _h(grad_rows), grad_rows._offset, _h(x), x._offset, _h(target),
                  target._offset)
    if dst is not grad_input:
        copy(grad_input, dst)


def max_pool(values, indices, x, tables):
    """2-D max pooling of a contiguous (N, C, H, W) x through one (O, k) int64 positions
    tensor per dim (-1: padding); False for other ranks, dtypes and layouts."""
    if len(tables) != 2 or _dt(x) not in FLOATS or not is_contiguous(x) or \
            not all(_dt(t) == "int64" and is_contiguous(t) for t in tables):
        return False
    rows, cols = tables
    dk = _dk(values, indices, x, rows, cols)
    (k,) = dk.kernels(("max_pool2d", _dt(x))).values()
    n = _prod(values._sizes)
    if n == 0:
        return True
    meta = list(rows._sizes) + list(cols._sizes) + list(x._sizes[2:])
    dk.launch1d(k, n, n, dk.meta(meta), _h(values), values._offset, _h(indices), indices._offset,
                _h(x), x._offset, _h(rows), rows._offset, _h(cols), cols._offset)
    return True


def max_pool_backward(out, g, indices, tables):
    """out = zeros with each gradient added at its maximum, by the gather-form kernel; tables:
    per spatial dim, (offsets, outputs) int64 device tensors, the CSR of the outputs whose
    window covers each input position. False for more than 3 spatial dims, other dtypes, or
    layouts it does not take."""
    dt = _dt(out)
    nd = len(tables)
    if (dt not in FLOATS or not 1 <= nd <= 3 or not (is_contiguous(out) and is_contiguous(g)
                                                      and is_contiguous(indices))):
        return False
    csr = [t for pair in tables for t in pair]
    if not all(_dt(t) == "int64" and is_contiguous(t) for t in csr):
        return False
    dk = _dk(out, g, indices, *csr)
    n = _prod(out._sizes)
    if n == 0:
        return True
    if _prod(g._sizes) == 0:
        fill(out, 0)
        return True
    pad = 3 - nd
    sizes = (1,) * pad + tuple(out._sizes[2:])
    outs = (1,) * pad + tuple(g._sizes[2:])
    # a padding dim: one input position, covered by its one output
    offsets = [(dk.meta((0, 1)), 0)] * pad + [(_h(f), f._offset) for f, _ in tables]
    outputs = [(dk.meta((0,)), 0)] * pad + [(_h(c), c._offset) for _, c in tables]
    (k,) = dk.kernels(("max_pool_bwd", dt)).values()
    dk.launch1d(k, n, n, dk.meta(list(sizes) + list(outs)), _h(out), out._offset, _h(g),
                g._offset, _h(indices), indices._offset,
                *[v for pair in offsets + outputs for v in pair])
    return True


def sgd_update(param, grad, buf, lr, weight_decay, momentum, dampening, nesterov, maximize,
               first):
    """One fused SGD step (`tensorlib.optim.sgd._sgd_update`); False for layouts and dtypes
    it does not take."""
    dt = _dt(param)
    tensors = (param, grad) + ((buf,) if buf is not None else ())
    if dt not in ("float32", "float64") or any(_dt(t) != dt or not is_contiguous(t)
                                               for t in tensors):
        return False
    dk = _dk(*tensors)
    (k,) = dk.kernels(("sgd", dt)).values()
    n = _prod(param._sizes)
    scalar = np.float64 if dt == "float64" else np.float32
    b = buf if buf is not None else param
    if n:
        dk.launch1d(k, n, n, _h(param), param._offset, _h(grad), grad._offset, _h(b), b._offset,
                    scalar(lr), scalar(weight_decay), scalar(momentum if buf is not None else 0),
                    scalar(1 - dampening), np.int32(bool(nesterov)), np.int32(bool(maximize)),
                    np.int32(bool(first)))
    param._storage.version += 1
    if buf is not None:
        buf._storage.version += 1
    return True


def adam_update_multi(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, step_sizes,
                      bias_correction2_sqrts, beta1, beta2, weight_decay, lr, eps, amsgrad,
                      maximize, decoupled_weight_decay):
    """Adam/AdamW over a group (the CPU's "adam_update_multi" contract): one launch per
    parameter. False, with nothing written, unless every tensor is contiguous float32 or
    float64 of one dtype."""
    dt = _dt(params[0])
    groups = [params, grads, exp_avgs, exp_avg_sqs] + ([max_exp_avg_sqs] if amsgrad else [])
    if dt not in ("float32", "float64") or any(len(g) != len(params) for g in groups) or any(
            t is None or _dt(t) != dt or not is_contiguous(t) for g in groups for t in g):
        return False
    dk = _dk(*(t for g in groups for t in g))
    (k,) = dk.kernels(("adam", dt)).values()
    scalar = np.float64 if dt == "float64" else np.float32
    shrink = 1 - lr * weight_decay
    for j, (p, g, m, v) in enumerate(zip(params, grads, exp_avgs, exp_avg_sqs)):
        x = max_exp_avg_sqs[j] if amsgrad else v
        n = _prod(p._sizes)
        if n:
            dk.launch1d(k, n, n, _h(p), p._offset, _h(g), g._offset, _h(m), m._offset, _h(v),
                        v._offset, _h(x), x._offset, scalar(step_sizes[j]),
                        scalar(bias_correction2_sqrts[j]), scalar(beta1), scalar(beta2),
                        scalar(weight_decay), scalar(shrink), scalar(eps),
                        np.int32(bool(amsgrad)), np.int32(bool(maximize)),
                        np.int32(bool(decoupled_weight_decay)))
        for t in (p, m, v) + ((x,) if amsgrad else ()):
            t._storage.version += 1
    return True


KERNELS = {"softmax": _softmax_forward(False), "log_softmax": _softmax_forward(True),
           "softmax_backward": _softmax_backward(False),
           "log_softmax_backward": _softmax_backward(True),
           "max_pool": max_pool, "max_pool_backward": max_pool_backward,
           "layer_norm": layer_norm_kernel, "layer_norm_train": layer_norm_train_kernel,
           "layer_norm_backward": layer_norm_backward_kernel,
           "cross_entropy": cross_entropy_kernel,
           "cross_entropy_backward": cross_entropy_backward_kernel, "sgd_update": sgd_update,
           "adam_update_multi": adam_update_multi}
