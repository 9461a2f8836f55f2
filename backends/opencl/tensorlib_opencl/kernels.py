"""Every primitive of the OpenCL backend, by op name: each builds (once per device and
signature) its program from `tensorlib.codegen.templates` and enqueues it on the device's
in-order queue. Nothing here waits for the device; reading values back does."""

import numpy as np

from tensorlib._C.broadcast import collapse_dims
from tensorlib._C.factory import empty
from tensorlib._C.tensor_impl import contiguous_strides
from tensorlib.backends.interface import BINARY_OPS, REDUCTION_OPS, SCAN_OPS, UNARY_OPS
from tensorlib.codegen import templates as T

from tensorlib_opencl.dialect import DIALECT as D

LOCAL = 256            # work-group size of the 1-D kernels


def _prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


class DeviceKernels:
    """Per device: compiled kernels by signature, cached layout (meta) buffers, launching."""

    def __init__(self, dev, compiler, label):
        self.dev, self.compiler, self.label = dev, compiler, label
        self.cl = dev.cl
        self.queue = dev.queue
        self.local = min(LOCAL, 1 << (dev.max_wg.bit_length() - 1))
        self._programs = {}
        self._meta = {}
        self.dummy = self.meta((0,))

    def kernels(self, key, make, dtypes):
        found = self._programs.get(key)
        if found is None:
            if "float64" in dtypes and not self.dev.fp64:
                raise TypeError(f"float64 is not supported on {self.label} ({self.dev.name}): "
                                f"the device lacks cl_khr_fp64. Use float32 on this device.")
            source, names = make()
            found = self._programs[key] = self.compiler.kernels(source, names)
        return found

    def meta(self, values):
        key = tuple(values)
        buf = self._meta.get(key)
        if buf is None:
            if len(self._meta) > 4096:
                self._meta.clear()
            cl = self.cl
            host = np.array(key, dtype=np.int64)
            buf = self._meta[key] = cl.Buffer(self.dev.context, cl.mem_flags.READ_ONLY
                                              | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
        return buf

    def launch1d(self, kernel, n, *args):
        groups = max(1, -(-n // self.local))
        kernel(self.queue, (groups * self.local,), (self.local,), *args)


# ---- the per-device kernel sets, looked up from each tensor --------------------------------

_backend = None        # set by register(): the OpenCLBackend (owns the per-device state)


def _dk(*tensors):
    out = tensors[0]
    dev = out._device
    for t in tensors[1:]:
        if t._device is not dev:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {dev} and {t._device}!")
    return _backend.state(dev.index).kernels


def _h(t):
    return t._storage.handle


def _dt(t):
    return t._dtype.name


# ---- elementwise -----------------------------------------------------------------------------

def _elementwise(key, out, ins, make_expr, scalars=(), scalar_values=()):
    dk = _dk(out, *ins)
    out_dt, in_dts = _dt(out), tuple(_dt(x) for x in ins)
    full_key = key + (out_dt,) + in_dts

    def make():
        expr, helpers = make_expr(out_dt, in_dts)
        name = "ew_" + "_".join(str(k) for k in full_key)
        return T.elementwise(D, name, out_dt, in_dts, expr, helpers,
                             tuple((nm, ct(out_dt)) for nm, ct in scalars))
    kc, k1, ks = dk.kernels(full_key, make, (out_dt,) + in_dts).values()
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
        _elementwise(("u", op), out, (x,), lambda o, i: T.unary_expr(D, op, i[0], o))
    kernel.__name__ = op
    return kernel


def _binary(op):
    def kernel(out, a, b):
        _elementwise(("b", op), out, (a, b), lambda o, i: T.binary_expr(D, op, i[0], o))
    kernel.__name__ = op
    return kernel


def copy(out, src):
    _elementwise(("copy",), out, (src,), lambda o, i: ("x0", ()))


def where(out, cond, a, b):
    _elementwise(("where",), out, (cond, a, b), lambda o, i: ("(x0 ? x1 : x2)", ()))


def fill(out, value):
    dt = out._dtype
    if dt.name == "bool":
        host = np.uint8(bool(value))
    elif dt.is_floating_point:
        host = np.array(value, np.float64).astype(np.float64 if dt.name == "float64" else np.float32)
    else:
        try:
            host = np.array(value).astype(dt.np)
        except OverflowError:
            host = np.array(int(value) & ((1 << 64) - 1), np.uint64).astype(dt.np)
    _elementwise(("fill",), out, (), lambda o, i: ("v", ()), scalars=(("v", D.compute),),
                 scalar_values=(host,))


# ---- reductions ------------------------------------------------------------------------------

def _acc_dtype(dt):
    return "float32" if dt in ("float16", "bfloat16") else dt


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
        groups_wanted = dk.dev.compute_units * 8
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
            wg(dk.queue, (nout * dk.local,), (dk.local,), nout, R, 1, chunk, 0, dk.meta(meta),
               _h(out), out._offset, _h(x), x._offset)
            return
        from tensorlib._C.dtypes import _dtype_by_name
        tmp = empty((nout * C,), _dtype_by_name(acc), out._device)
        tstr = tuple(s * C for s in contiguous_strides(ksz))
        meta = (len(ksz), len(rsz)) + ksz + tstr + kx + rsz + rx
        wg(dk.queue, (nout * C * dk.local,), (dk.local,), nout, R, C, chunk, 1, dk.meta(meta),
           _h(tmp), 0, _h(x), x._offset)
        k2 = _red_kernels(dk, op, acc, out_dt, acc)[0]
        meta2 = (len(ksz), 1) + ksz + ko + tstr + (C, 1)
        dk.launch1d(k2, nout, nout, C, dk.meta(meta2), _h(out), out._offset, _h(tmp), 0)
    kernel.__name__ = op
    return kernel


def _red_kernels(dk, op, x_dt, out_dt, acc):
    key = ("red", op, x_dt, out_dt, acc)
    name = "red_" + "_".join(key[1:])
    return list(dk.kernels(key, lambda: T.reduction(D, name, op, x_dt, out_dt, acc, dk.local),
                           (x_dt, out_dt, acc)).values())


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
        x_dt = _dt(x)
        k = dk.kernels(("arg", op, x_dt), lambda: T.arg_reduction(D, f"{op}_{x_dt}", op, x_dt),
                       (x_dt,))[f"{op}_{x_dt}"]
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
        x_dt, out_dt = _dt(x), _dt(out)
        name = f"{op}_{x_dt}_{out_dt}"
        k = dk.kernels(("scan", op, x_dt, out_dt), lambda: T.scan(D, name, op, x_dt, out_dt),
                       (x_dt, out_dt))[name]
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
    dk = _dk(out, a, b)
    dt = _dt(out)
    B, M, N = out._sizes
    K = a._sizes[2]
    if B == 0 or M == 0 or N == 0:
        return
    if (dk.dev.is_cpu and dt == "float32" and N % T.GEMV_W == 0 and b._strides[2] == 1
            and out._strides[2] == 1):
        k = dk.kernels(("gemv", dt), lambda: T.gemm_vector(D, f"gemmv_{dt}", dt),
                       (dt,))[f"gemmv_{dt}"]
        gs = (-(-N // (4 * T.GEMV_W)) * 4, -(-M // T.GEMV_RB), B)
        k(dk.queue, gs, (4, 1, 1), M, N, K, _h(out), out._offset, *out._strides[:2],
          _h(a), a._offset, *a._strides, _h(b), b._offset, *b._strides[:2])
        return
    k = dk.kernels(("gemm", dt), lambda: T.gemm(D, f"gemm_{dt}", dt), (dt,))[f"gemm_{dt}"]
    gs = (-(-N // T.GEMM_TILE) * T.GEMM_WG, -(-M // T.GEMM_TILE) * T.GEMM_WG, B)
    k(dk.queue, gs, (T.GEMM_WG, T.GEMM_WG, 1), M, N, K,
      _h(out), out._offset, *out._strides, _h(a), a._offset, *a._strides,
      _h(b), b._offset, *b._strides)


def _gather(dk, out, x, dim, index_strides, index):
    dt = _dt(out)
    k = dk.kernels(("gather", dt), lambda: T.gather(D, f"gather_{dt}", dt), (dt,))[f"gather_{dt}"]
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


def scatter_add(out, dim, index, src):
    dk = _dk(out, index, src)
    dt = _dt(out)
    k = dk.kernels(("scatter_add", dt), lambda: T.scatter_add(D, f"scatter_add_{dt}", dt),
                   (dt,))[f"scatter_add_{dt}"]
    n = _prod(out._sizes)
    if n == 0 or _prod(index._sizes) == 0:
        return
    nd = len(out._sizes)
    dim %= max(1, nd)
    meta = (nd,) + out._sizes + out._strides + index._sizes + index._strides + src._strides
    dk.launch1d(k, n, n, dim, index._sizes[dim] if nd else 1,
                index._strides[dim] if nd else 0, src._strides[dim] if nd else 0,
                dk.meta(meta), _h(out), out._offset, _h(index), index._offset, _h(src), src._offset)


def sort(values, indices, x, dim, descending=False, stable=True):
    dk = _dk(values, indices, x)
    dt = _dt(x)
    ks = dk.kernels(("sort", dt), lambda: T.sort(D, f"sort_{dt}", dt), (dt,))
    init, step, final = (ks[f"sort_{dt}_{s}"] for s in ("init", "step", "out"))
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
        dt = _dt(out)
        name = f"rand_{kind}_{dt}"
        k = dk.kernels(("rand", kind, dt), lambda: T.random(D, name, kind, dt), (dt,))[name]
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


def register(table, backend):
    global _backend
    _backend = backend
    table.update(KERNELS)
