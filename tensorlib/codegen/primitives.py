"""Every primitive of a generated-code backend (OpenCL, CUDA), by op name, written once.

A program is named by a key tuple (op family, op, dtypes...); `source(D, key)` writes it in
dialect D from `templates`, so the same key gives the OpenCL C and the CUDA C of a kernel, and
a compile-only check can list every key (`tensorlib_cuda.sources`). The op functions below
only work out layouts (collapsed sizes and strides, the `meta` arrays) and launch sizes; the
device is reached through the backend's per-device kernel object `dk`, which gives:

    dk.D                        the dialect
    dk.kernels(key)             {name: kernel} of the program, compiled once per device
    dk.meta(values)             a device buffer of int64 values (cached)
    dk.dummy                    a small meta buffer for kernels that ignore it
    dk.local                    the work-group size of 1-D launches
    dk.compute_units            how many work-groups run at once, roughly
    dk.is_cpu                   a CPU device (PoCL): explicit vectors beat local memory
    dk.launch1d(k, n, *args)    n work-items in groups of dk.local
    dk.launch(k, gsize, lsize, *args)   a 3-D launch; gsize in work-items, a multiple of lsize

Nothing here waits for the device; reading values back does."""
import numpy as np

from tensorlib._C.broadcast import collapse_dims
from tensorlib._C.factory import empty
from tensorlib._C.tensor_impl import contiguous_strides, wrap
from tensorlib.backends.interface import BINARY_OPS, REDUCTION_OPS, SCAN_OPS, UNARY_OPS
from tensorlib.codegen import templates as T


def _prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def _acc_dtype(dt):
    return "float32" if dt in ("float16", "bfloat16") else dt


def kernel_name(key):
    return "_".join(str(k) for k in key)


def source(D, key):
    """(source, kernel names) of the program `key` in dialect D (composites included)."""
    family, name = key[0], kernel_name(key)
    if family == "u":
        _, op, out_dt, in_dt = key
        expr, helpers = T.unary_expr(D, op, in_dt, out_dt)
        return T.elementwise(D, "ew_" + name, out_dt, (in_dt,), expr, helpers)
    if family == "b":
        _, op, out_dt, a_dt, b_dt = key
        expr, helpers = T.binary_expr(D, op, a_dt, out_dt)
        return T.elementwise(D, "ew_" + name, out_dt, (a_dt, b_dt), expr, helpers)
    if family == "copy":
        return T.elementwise(D, "ew_" + name, key[1], (key[2],), "x0")
    if family == "where":
        return T.elementwise(D, "ew_" + name, key[1], key[2:], "(x0 ? x1 : x2)")
    if family == "fill":
        return T.elementwise(D, "ew_" + name, key[1], (), "v", scalars=(("v", D.compute(key[1])),))
    if family == "red":
        _, op, x_dt, out_dt, acc, local = key
        return T.reduction(D, name, op, x_dt, out_dt, acc, local)
    if family == "arg":
        return T.arg_reduction(D, name, key[1], key[2])
    if family == "scan":
        return T.scan(D, name, key[1], key[2], key[3])
    if family == "gemm":
        return T.gemm(D, name, key[1])
    if family == "gemv":
        return T.gemm_vector(D, name, key[1])
    if family == "gather":
        return T.gather(D, name, key[1])
    if family == "scatter_add":
        return T.scatter_add(D, name, key[1])
    if family == "scatter_add_sorted":
        return T.scatter_add_sorted(D, name, key[1])
    if family == "sort":
        return T.sort(D, name, key[1])
    if family == "rand":
        return T.random(D, name, key[1], key[2])
    from tensorlib.codegen import composites
    if composites.is_composite(key):
        return composites.source(D, key)
    raise KeyError(f"no program family {family!r} (key {key})")


def key_dtypes(key):
    """The dtype names a program's key mentions (a backend checks e.g. float64 support)."""
    from tensorlib.codegen.cdialect import DTYPES
    return tuple(k for k in key if isinstance(k, str) and k in DTYPES)


# ---- the per-device kernel object, looked up from each tensor ------------------------------

def _dk(*tensors):
    dev = tensors[0]._device
    for t in tensors[1:]:
        if t._device is not dev:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {dev} and {t._device}!")
    return dev._backend.state(dev.index).kernels


def _h(t):
    return t._storage.handle


def _dt(t):
    return t._dtype.name


# ---- elementwise -----------------------------------------------------------------------------

def _elementwise(key, out, ins, scalar_values=()):
    dk = _dk(out, *ins)
    kc, k1, ks = dk.kernels(key).values()
    n = _prod(out._sizes)
    if n == 0:
        return
    sizes, strides = collapse_dims(out._sizes, [out._strides] + [x._strides for x in ins])
    args = []
    for x in ins:
        args += [_h(x), x._offset]
    if len(sizes) <= 1:
        if all(s in ((), (1,)) for s in strides):
            dk.launch1d(kc, n, n, dk.dummy, _h(out), out._offset, *args, *scalar_values)
        else:
            meta = (0,) + tuple(s[0] if s else 0 for s in strides)
            dk.launch1d(k1, n, n, dk.meta(meta), _h(out), out._offset, *args, *scalar_values)
    else:
        meta = (len(sizes),) + sizes + sum(strides, ())
        dk.launch1d(ks, n, n, dk.meta(meta), _h(out), out._offset, *args, *scalar_values)


def _unary(op):
    def kernel(out, x):
        _elementwise(("u", op, _dt(out), _dt(x)), out, (x,))
    kernel.__name__ = op
    return kernel


def _binary(op):
    def kernel(out, a, b):
        _elementwise(("b", op, _dt(out), _dt(a), _dt(b)), out, (a, b))
    kernel.__name__ = op
    return kernel


def copy(out, src):
    _elementwise(("copy", _dt(out), _dt(src)), out, (src,))


def where(out, cond, a, b):
    _elementwise(("where", _dt(out), _dt(cond), _dt(a), _dt(b)), out, (cond, a, b))


def fill_value(dt, value):
    """`value` as the numpy scalar a fill kernel takes (its compute type)."""
    if dt.name == "bool":
        return np.uint8(bool(value))
    if dt.is_floating_point:
        return np.array(value, np.float64).astype(np.float64 if dt.name == "float64"
                                                  else np.float32)
    try:
        return np.array(value).astype(dt.np)
    except OverflowError:
        return np.array(int(value) & ((1 << 64) - 1), np.uint64).astype(dt.np)


def fill(out, value):
    _elementwise(("fill", _dt(out)), out, (), scalar_values=(fill_value(out._dtype, value),))


# ---- reductions ------------------------------------------------------------------------------

def _red_kernels(dk, op, x_dt, out_dt, acc):
    return list(dk.kernels(("red", op, x_dt, out_dt, acc, dk.local)).values())


def _reduce(op):
    def kernel(out, x, dims):
        dk = _dk(out, x)
        nd = len(x._sizes)
        dims = sorted({d % nd for d in dims}) if nd else []
        kept = [d for d in range(nd) if d not in dims]
        ksz, (ko, kx) = collapse_dims(tuple(x._sizes[d] for d in kept),
                                      [tuple(out._strides[d] for d in kept),
                                       tuple(x._strides[d] for d in kept)])
        rsz, (rx,) = collapse_dims(tuple(x._sizes[d] for d in dims),
                                   [tuple(x._strides[d] for d in dims)])
        nout, R = _prod(ksz), _prod(rsz)
        if nout == 0:
            return
        x_dt, out_dt = _dt(x), _dt(out)
        acc = _acc_dtype(out_dt)
        groups_wanted = dk.compute_units * 8
        if R <= 128 or (nout >= 2048 and R <= 8192) or nout >= groups_wanted * 4:
            k = _red_kernels(dk, op, x_dt, out_dt, acc)[0]
            meta = (len(ksz), len(rsz)) + ksz + ko + kx + rsz + rx
            dk.launch1d(k, nout, nout, R, dk.meta(meta), _h(out), out._offset, _h(x), x._offset)
            return
        C = max(1, min(-(-groups_wanted // nout), -(-R // (dk.local * 4)), 256))
        chunk = -(-R // C)
        wg = _red_kernels(dk, op, x_dt, acc if C > 1 else out_dt, acc)[1]
        if C == 1:
            meta = (len(ksz), len(rsz)) + ksz + ko + kx + rsz + rx
            dk.launch(wg, (nout * dk.local,), (dk.local,), nout, R, 1, chunk, 0, dk.meta(meta),
                      _h(out), out._offset, _h(x), x._offset)
            return
        from tensorlib._C.dtypes import _dtype_by_name
        tmp = empty((nout * C,), _dtype_by_name(acc), out._device)
        tstr = tuple(s * C for s in contiguous_strides(ksz))
        meta = (len(ksz), len(rsz)) + ksz + tstr + kx + rsz + rx
        dk.launch(wg, (nout * C * dk.local,), (dk.local,), nout, R, C, chunk, 1, dk.meta(meta),
                  _h(tmp), 0, _h(x), x._offset)
        k2 = _red_kernels(dk, op, acc, out_dt, acc)[0]
        meta2 = (len(ksz), 1) + ksz + ko + tstr + (C, 1)
        dk.launch1d(k2, nout, nout, C, dk.meta(meta2), _h(out), out._offset, _h(tmp), 0)
    kernel.__name__ = op
    return kernel


def _lines(out, x, dim, *more):
    """Collapsed (sizes, strides...) of every dim but `dim`, for out, x and `more`."""
    nd = len(x._sizes)
    keep = [d for d in range(nd) if d != dim]
    return collapse_dims(tuple(x._sizes[d] for d in keep),
                         [tuple(t._strides[d] for d in keep) for t in (out, x) + more])


def _arg(op):
    def kernel(out, x, dim):
        dk = _dk(out, x)
        dim %= max(1, len(x._sizes))
        (k,) = dk.kernels(("arg", op, _dt(x))).values()
        sz, st = _lines(out, x, dim)
        nout = _prod(sz)
        L = x._sizes[dim] if x._sizes else 1
        xs = x._strides[dim] if x._sizes else 0
        if nout:
            dk.launch1d(k, nout, nout, L, xs, dk.meta((len(sz),) + sz + sum(st, ())),
                        _h(out), out._offset, _h(x), x._offset)
    kernel.__name__ = op
    return kernel


def _scan(op):
    def kernel(out, x, dim):
        dk = _dk(out, x)
        dim %= max(1, len(x._sizes))
        (k,) = dk.kernels(("scan", op, _dt(x), _dt(out))).values()
        sz, st = _lines(out, x, dim)
        nout = _prod(sz)
        L = x._sizes[dim] if x._sizes else 1
        os_, xs = (out._strides[dim], x._strides[dim]) if x._sizes else (0, 0)
        if nout and L:
            dk.launch1d(k, nout, nout, L, os_, xs, dk.meta((len(sz),) + sz + sum(st, ())),
                        _h(out), out._offset, _h(x), x._offset)
    kernel.__name__ = op
    return kernel


# ---- GEMM, indexing, sort, random ------------------------------------------------------------

def matmul(out, a, b):
    """The generator's tiled GEMM (the CUDA backend sends float GEMMs to cuBLAS first)."""
    dk = _dk(out, a, b)
    dt = _dt(out)
    B, M, N = out._sizes
    K = a._sizes[2]
    if B == 0 or M == 0 or N == 0:
        return
    if (dk.is_cpu and dt == "float32" and N % T.GEMV_W == 0 and b._strides[2] == 1
            and out._strides[2] == 1):
        (k,) = dk.kernels(("gemv", dt)).values()
        gs = (-(-N // (4 * T.GEMV_W)) * 4, -(-M // T.GEMV_RB), B)
        dk.launch(k, gs, (4, 1, 1), M, N, K, _h(out), out._offset, *out._strides[:2],
                  _h(a), a._offset, *a._strides, _h(b), b._offset, *b._strides[:2])
        return
    (k,) = dk.kernels(("gemm", dt)).values()
    gs = (-(-N // T.GEMM_TILE) * T.GEMM_WG, -(-M // T.GEMM_TILE) * T.GEMM_WG, B)
    dk.launch(k, gs, (T.GEMM_WG, T.GEMM_WG, 1), M, N, K,
              _h(out), out._offset, *out._strides, _h(a), a._offset, *a._strides,
              _h(b), b._offset, *b._strides)


def _gather(dk, out, x, dim, index_strides, index):
    (k,) = dk.kernels(("gather", _dt(out))).values()
    n = _prod(out._sizes)
    if n == 0:
        return
    xstr = tuple(0 if d == dim else s for d, s in enumerate(x._strides))
    sz, st = collapse_dims(out._sizes, [out._strides, index_strides, xstr])
    dk.launch1d(k, n, n, x._strides[dim], dk.meta((len(sz),) + sz + sum(st, ())),
                _h(out), out._offset, _h(x), x._offset, _h(index), index._offset)


def gather(out, x, dim, index):
    dk = _dk(out, x, index)
    _gather(dk, out, x, dim % len(x._sizes), index._strides, index)


def index_select(out, x, dim, index):
    dk = _dk(out, x, index)
    if not x._sizes:
        return copy(out, x)
    dim %= len(x._sizes)
    istr = tuple(index._strides[0] if d == dim else 0 for d in range(len(out._sizes)))
    _gather(dk, out, x, dim, istr, index)


SORTED_SCATTER_FROM = 64   # index lengths along dim from which sorting first pays


def scatter_add(out, dim, index, src):
    """Owner-computes (NOTE [ Deterministic scatter_add ]): each output element scans its line
    of the index, or, for long lines, binary-searches it after one stable sort."""
    dk = _dk(out, index, src)
    n = _prod(out._sizes)
    if n == 0 or _prod(index._sizes) == 0:
        return
    nd = len(out._sizes)
    dim %= max(1, nd)
    L = index._sizes[dim] if nd else 1
    if nd and L >= SORTED_SCATTER_FROM:
        from tensorlib._C.dtypes import int64
        # lines an expanded index repeats (stride 0 off `dim`) are sorted once
        repeated = [d != dim and st == 0 for d, st in enumerate(index._strides)]
        lines = tuple(1 if rep else size for rep, size in zip(repeated, index._sizes))
        keys = empty(lines, int64, index._device)
        positions = empty(lines, int64, index._device)
        sort(keys, positions, wrap(index._storage, lines, index._strides, index._offset,
                                   index._dtype), dim)
        kstr = tuple(0 if rep else st for rep, st in zip(repeated, keys._strides))
        (k,) = dk.kernels(("scatter_add_sorted", _dt(out))).values()
        meta = (nd,) + out._sizes + out._strides + index._sizes + kstr + src._strides
        dk.launch1d(k, n, n, dim, L, keys._strides[dim], src._strides[dim], dk.meta(meta),
                    _h(out), out._offset, _h(keys), _h(positions), _h(src), src._offset)
        return
    (k,) = dk.kernels(("scatter_add", _dt(out))).values()
    meta = (nd,) + out._sizes + out._strides + index._sizes + index._strides + src._strides
    dk.launch1d(k, n, n, dim, L, index._strides[dim] if nd else 0,
                src._strides[dim] if nd else 0, dk.meta(meta), _h(out), out._offset,
                _h(index), index._offset, _h(src), src._offset)


def sort(values, indices, x, dim, descending=False, stable=True):
    dk = _dk(values, indices, x)
    init, step, final = dk.kernels(("sort", _dt(x))).values()
    if not x._sizes:
        copy(values, x)
        fill(indices, 0)
        return
    dim %= len(x._sizes)
    L = x._sizes[dim]
    sz, st = _lines(values, x, dim, indices)
    lines = _prod(sz)
    if lines == 0 or L == 0:
        return
    P = 1 << max(0, (L - 1).bit_length())
    keys = empty((lines * P,), x._dtype, x._device)
    from tensorlib._C.dtypes import int64
    pos = empty((lines * P,), int64, x._device)
    st_v, st_x, st_i = st                     # _lines orders (values, x, indices)
    meta = dk.meta((len(sz),) + sz + st_x + st_v + st_i)
    dk.launch1d(init, lines * P, lines, L, P, x._strides[dim], meta, _h(x), x._offset,
                _h(keys), _h(pos))
    k = 2
    while k <= P:
        j = k // 2
        while j >= 1:
            dk.launch1d(step, lines * P // 2, lines, L, P, k, j, int(bool(descending)),
                        _h(keys), _h(pos))
            j //= 2
        k *= 2
    dk.launch1d(final, lines * L, lines, L, P, values._strides[dim], indices._strides[dim], meta,
                _h(values), values._offset, _h(indices), indices._offset, _h(keys), _h(pos))


def _random(kind):
    def kernel(out, seed, offset):
        dk = _dk(out)
        (k,) = dk.kernels(("rand", kind, _dt(out))).values()
        n = _prod(out._sizes)
        if n == 0:
            return
        sz, (st,) = collapse_dims(out._sizes, [out._strides])
        mask = (1 << 64) - 1
        dk.launch1d(k, n, n, int(seed) & mask, int(offset) & mask,
                    dk.meta((len(sz),) + sz + st), _h(out), out._offset)
    kernel.__name__ = f"random_{kind}"
    return kernel


KERNELS = {"fill": fill, "copy": copy, "where": where, "matmul": matmul, "gather": gather,
           "index_select": index_select, "scatter_add": scatter_add, "sort": sort,
           "argmax": _arg("argmax"), "argmin": _arg("argmin"),
           "random_uniform": _random("uniform"), "random_normal": _random("normal")}
KERNELS.update({op: _unary(op) for op in UNARY_OPS})
KERNELS.update({op: _binary(op) for op in BINARY_OPS})
KERNELS.update({op: _reduce(op) for op in REDUCTION_OPS})
KERNELS.update({op: _scan(op) for op in SCAN_OPS})
