"""The conformance cases of each primitive family. A family's function takes the suite (for
device and tolerances), the kernel and the op name, and yields (label, thunk): the thunk runs
one layout x dtype case and raises when the kernel's result differs from the oracle."""
import numpy as np

from tensorlib.backends.interface import (BINARY_OPS, INDEX_REDUCTION_OPS, REDUCTION_OPS,
                                          SCAN_OPS, UNARY_OPS)
from tensorlib.testing import oracle as O
from tensorlib.testing.layouts import LAYOUTS, OUT_LAYOUTS, Out, applies, check, put, wide


def _in_out_layouts(shape, n_inputs=1):
    """Input layouts with a contiguous output, then non-contiguous outputs."""
    for layout in LAYOUTS:
        if applies(layout, shape):
            yield (layout,) * n_inputs, "contiguous"
    mixed = [("contiguous", "broadcast", "transposed"), ("transposed", "broadcast_last", "offset"),
             ("offset", "strided", "broadcast")]
    if n_inputs > 1:
        for combo in mixed:
            if all(applies(layout, shape) for layout in combo):
                yield combo[:n_inputs], "contiguous"
    for out_layout in OUT_LAYOUTS:
        if applies(out_layout, shape):
            yield ("contiguous",) * n_inputs, out_layout


def _elementwise(s, kernel, op, dtype, inputs, oracle, out_dtype, shape=(4, 5)):
    for in_layouts, out_layout in _in_out_layouts(shape, len(inputs)):
        def run(in_layouts=in_layouts, out_layout=out_layout):
            placed = [put(v, layout, s.device) for v, layout in zip(inputs, in_layouts)]
            out = Out(shape, out_dtype, out_layout, s.device)
            kernel(out.tensor, *(t for t, _ in placed))
            check(out.read(), oracle(*(wide(v) for _, v in placed)), s.rtol, s.atol)
        yield f"{dtype} in={'/'.join(in_layouts)} out={out_layout}", run


def unary_cases(s, kernel, op):
    fn, domain, extra = O.UNARY[op]
    for dtype in ((O.F32,) if domain else ()) + extra:
        x = O.unary_input(op, O.rng(), (4, 5), dtype)
        yield from _elementwise(s, kernel, op, dtype, [x], fn, O.out_dtype(op, dtype))


def binary_cases(s, kernel, op):
    fn, dtypes = O.BINARY[op]
    for dtype in dtypes:
        a, b = O.binary_inputs(op, O.rng(), (4, 5), dtype)
        yield from _elementwise(s, kernel, op, dtype, [a, b], fn, O.out_dtype(op, dtype))


def where_cases(s, kernel, op):
    r = O.rng()
    cond = O.values(r, (4, 5), O.BOOL)
    for dtype in (O.F32, O.I64, O.BOOL):
        a, b = O.values(r, (4, 5), dtype), O.values(r, (4, 5), dtype)
        yield from _elementwise(s, kernel, op, dtype, [cond, a, b], np.where, dtype)


def fill_cases(s, kernel, op):
    fills = [(O.F32, 2.5), (O.F32, 1), (O.F32, -0.0), (O.F64, 0.1), (O.I32, -7),
             (O.I64, 2 ** 40 + 3), (O.BOOL, True), (O.BOOL, False)]
    for dtype, value in fills:
        for shape, layout in [((4, 5), "contiguous"), ((), "contiguous")] + \
                [((4, 5), layout) for layout in OUT_LAYOUTS]:
            def run(dtype=dtype, value=value, shape=shape, layout=layout):
                out = Out(shape, dtype, layout, s.device)
                kernel(out.tensor, value)
                check(out.read(), np.full(shape, value, dtype))
            yield f"{dtype} value={value!r} shape={shape} out={layout}", run


def copy_cases(s, kernel, op):
    pairs = [(O.F32, O.F32), (O.F32, O.I32), (O.F32, O.I64), (O.I32, O.F32), (O.I64, O.I32),
             (O.I32, O.I64), (O.BOOL, O.F32), (O.F32, O.BOOL), (O.I64, O.BOOL), (O.F32, O.F64),
             (O.F64, O.F32)]
    r = O.rng()
    for src_dtype, dst_dtype in pairs:
        x = O.values(r, (4, 5), src_dtype, -100, 100)
        if src_dtype.kind == "f":
            x.reshape(-1)[:3] = 0                      # -> False when cast to bool
        yield from _elementwise(s, kernel, op, f"{src_dtype}->{dst_dtype}", [x],
                                lambda v, d=dst_dtype: O.cast(v, d), dst_dtype)


REDUCE_SHAPES = [((4, 6), (0,)), ((4, 6), (1,)), ((4, 6), (0, 1)), ((2, 3, 4), (0, 2)),
                 ((2, 3, 4), (1,))]


def reduction_cases(s, kernel, op):
    for dtype in (O.F32, O.I32, O.I64):
        for shape, dims in REDUCE_SHAPES:
            x = O.reduction_input(op, O.rng(len(shape)), shape, dtype)
            if op in ("amax", "amin") and dtype.kind == "f" and dims == (1,):
                x.reshape(-1)[5] = np.nan                # NaN propagates, as in torch
            keep = tuple(1 if d in dims else n for d, n in enumerate(shape))
            for layout in LAYOUTS + ("out:strided",):
                if not applies(layout.replace("out:", ""), shape):
                    continue

                def run(x=x, dims=dims, keep=keep, layout=layout):
                    in_layout = "contiguous" if layout.startswith("out:") else layout
                    t, v = put(x, in_layout, s.device)
                    out = Out(keep, dtype, "strided" if layout.startswith("out:") else
                              "contiguous", s.device)
                    kernel(out.tensor, t, dims)
                    atol = s.atol * max(1.0, float(np.abs(wide(v)).sum()))
                    check(out.read(), O.reduce(op, v, dims), s.rtol, atol)
                yield f"{dtype} shape={shape} dims={dims} {layout}", run


def _along_dim_cases(s, kernel, op, dtypes, shapes, make_input, oracle, out_dtype, n_out=1):
    """Ops over one dim (argmax, cumsum, sort): input layouts, plus a strided output."""
    for dtype in dtypes:
        for shape, dim in shapes:
            x = make_input(O.rng(dim), shape, dtype)
            for layout in LAYOUTS + ("out:strided",):
                if not applies(layout.replace("out:", ""), shape):
                    continue

                def run(x=x, dim=dim, layout=layout, shape=shape, dtype=dtype):
                    in_layout = "contiguous" if layout.startswith("out:") else layout
                    t, v = put(x, in_layout, s.device)
                    want = oracle(v, dim)
                    out_layout = "strided" if layout.startswith("out:") else "contiguous"
                    wants = want if n_out > 1 else (want,)
                    dts = out_dtype(dtype) if n_out > 1 else (out_dtype(dtype),)
                    outs = [Out(w.shape, d, out_layout, s.device) for w, d in zip(wants, dts)]
                    kernel(*(o.tensor for o in outs), t, dim)
                    for o, w in zip(outs, wants):
                        check(o.read(), w, s.rtol, s.atol * max(1.0, np.abs(wide(v)).sum()))
                yield f"{dtype} shape={shape} dim={dim} {layout}", run


def arg_reduction_cases(s, kernel, op):
    fn = O.ARG_REDUCTIONS[op]
    yield from _along_dim_cases(
        s, kernel, op, (O.F32, O.I32, O.I64), [((4, 6), 0), ((4, 6), 1), ((2, 3, 4), 1)],
        lambda r, shape, dt: O.reduction_input(op, r, shape, dt),
        lambda v, dim: fn(v, axis=dim, keepdims=True), lambda dt: O.I64)


def scan_cases(s, kernel, op):
    fn = O.SCANS[op]
    yield from _along_dim_cases(
        s, kernel, op, (O.F32, O.I64), [((4, 6), 0), ((4, 6), 1), ((2, 3, 4), 2)],
        lambda r, shape, dt: O.scan_input(op, r, shape, dt),
        lambda v, dim: fn(wide(v), axis=dim), lambda dt: dt)


def sort_cases(s, kernel, op):
    for descending in (False, True):
        def sorting_kernel(values, indices, x, dim, descending=descending):
            kernel(values, indices, x, dim, descending, True)
        yield from (
            (f"descending={descending} {label}", run) for label, run in _along_dim_cases(
                s, sorting_kernel, op, (O.F32, O.I32, O.I64),
                [((4, 6), 0), ((4, 6), 1), ((2, 3, 4), 1)],
                lambda r, shape, dt: r.integers(-3, 4, shape).astype(dt),   # ties
                lambda v, dim, d=descending: O.stable_sort(v, dim, d),
                lambda dt: (dt, O.I64), n_out=2))

    def unstable():
        x = O.values(O.rng(), (4, 6), O.F32)
        t, v = put(x, "transposed", s.device)
        values, indices = Out((4, 6), O.F32, "contiguous", s.device), \
            Out((4, 6), O.I64, "contiguous", s.device)
        kernel(values.tensor, indices.tensor, t, 1, False, False)
        got, idx = values.read(), indices.read()
        check(got, np.sort(v, axis=1))
        check(np.take_along_axis(v, idx, 1), got)
    yield "stable=False values and a matching permutation", unstable


def matmul_cases(s, kernel, op):
    r = O.rng()
    for batch, m, k, n in [(3, 4, 5, 2), (1, 4, 5, 3), (2, 1, 7, 1)]:
        a, b = O.values(r, (batch, m, k), O.F32, -1, 1), O.values(r, (batch, k, n), O.F32, -1, 1)
        layouts = [(layout, layout) for layout in LAYOUTS] + [("contiguous", "transposed"),
                                                              ("transposed", "contiguous")]
        combos = [(la, lb, "contiguous") for la, lb in layouts] + \
            [("contiguous", "contiguous", o) for o in OUT_LAYOUTS]
        for la, lb, lo in combos:
            if not (applies(la, a.shape) and applies(lb, b.shape)
                    and applies(lo, (batch, m, n))):
                continue

            def run(a=a, b=b, la=la, lb=lb, lo=lo, shape=(batch, m, n)):
                (ta, va), (tb, vb) = put(a, la, s.device), put(b, lb, s.device)
                out = Out(shape, O.F32, lo, s.device)
                kernel(out.tensor, ta, tb)
                atol = s.atol * max(1.0, float((np.abs(va) @ np.abs(vb)).max()))
                check(out.read(), O.matmul(va, vb), s.rtol, atol)
            yield f"B={batch} M={m} K={k} N={n} a={la} b={lb} out={lo}", run


def _index_layout_combos(x_shape, index_shape):
    for layout in LAYOUTS:
        if applies(layout, x_shape):
            yield layout, "contiguous", "contiguous"
    for layout in ("strided", "transposed", "broadcast", "offset"):
        if applies(layout, index_shape):
            yield "contiguous", layout, "contiguous"
    yield "contiguous", "contiguous", "strided"


def gather_cases(s, kernel, op):
    r = O.rng()
    for dtype in (O.F32, O.I64):
        x = O.values(r, (4, 5), dtype)
        for dim, index_shape in [(0, (3, 5)), (1, (4, 3)), (0, (3, 4))]:
            index = r.integers(0, x.shape[dim], index_shape)
            for lx, li, lo in _index_layout_combos(x.shape, index_shape):
                def run(x=x, dim=dim, index=index, lx=lx, li=li, lo=lo):
                    (tx, vx), (ti, vi) = put(x, lx, s.device), put(index, li, s.device)
                    out = Out(vi.shape, dtype, lo, s.device)
                    kernel(out.tensor, tx, dim, ti)
                    check(out.read(), O.gather(vx, dim, vi))
                yield f"{dtype} dim={dim} index={index_shape} x={lx} index={li} out={lo}", run


def scatter_add_cases(s, kernel, op):
    r = O.rng()
    for dtype in (O.F32, O.I64):
        init = O.values(r, (4, 5), dtype)
        for dim, index_shape, src_shape in [(0, (3, 5), (3, 5)), (0, (3, 4), (4, 5)),
                                            (1, (4, 3), (4, 3))]:
            index = r.integers(0, init.shape[dim], index_shape)   # duplicates accumulate
            src = O.values(r, src_shape, dtype)
            combos = [(layout, "contiguous", "contiguous") for layout in LAYOUTS] + \
                [("contiguous", layout, "contiguous") for layout in ("strided", "transposed",
                                                                     "broadcast", "offset")] + \
                [("contiguous", "contiguous", layout) for layout in OUT_LAYOUTS]
            for ls, li, lo in combos:
                if not (applies(ls, src_shape) and applies(li, index_shape)):
                    continue

                def run(src=src, index=index, dim=dim, ls=ls, li=li, lo=lo, init=init):
                    (ts, vs), (ti, vi) = put(src, ls, s.device), put(index, li, s.device)
                    out = Out(init.shape, dtype, lo, s.device, init=init)
                    kernel(out.tensor, dim, ti, ts)
                    check(out.read(), O.scatter_add(init, dim, vi, vs), s.rtol, 1e-5)
                yield f"{dtype} dim={dim} index={index_shape} src={ls} index={li} out={lo}", run


def index_select_cases(s, kernel, op):
    r = O.rng()
    for dtype in (O.F32, O.I64, O.BOOL):
        x = O.values(r, (4, 5), dtype)
        for dim, index in [(0, np.array([3, 0, 3, 1])), (1, np.array([4, 4, 0]))]:
            for lx, li, lo in _index_layout_combos(x.shape, index.shape):
                def run(x=x, dim=dim, index=index, lx=lx, li=li, lo=lo):
                    (tx, vx), (ti, vi) = put(x, lx, s.device), put(index, li, s.device)
                    shape = list(x.shape)
                    shape[dim] = len(vi)
                    out = Out(shape, dtype, lo, s.device)
                    kernel(out.tensor, tx, dim, ti)
                    check(out.read(), np.take(vx, vi, axis=dim))
                yield f"{dtype} dim={dim} x={lx} index={li} out={lo}", run


def random_cases(s, kernel, op):
    from tensorlib_cpu import philox                 # the documented reference generator
    draw = philox.uniform if op == "random_uniform" else philox.normal
    import ml_dtypes
    half_types = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
    for dtype in (O.F32, O.F64) + half_types:
        for seed, offset in [(0, 0), (42, 4), (2 ** 63 + 12345, 12), (7, 2 ** 64 - 8)]:
            for shape, layout in [((3, 5), "contiguous"), ((7,), "contiguous"),
                                  ((3, 5), "strided"), ((3, 5), "transposed")]:
                def run(dtype=dtype, seed=seed, offset=offset, shape=shape, layout=layout):
                    out = Out(shape, dtype, layout, s.device)
                    kernel(out.tensor, seed, offset)
                    want = draw(seed, offset, int(np.prod(shape)), dtype).reshape(shape)
                    if op == "random_uniform":             # bit-exact, in row-major order
                        np.testing.assert_array_equal(out.read(), want)
                    else:
                        tol = 1e-2 if dtype in half_types else 1e-5
                        check(out.read().astype(np.float64), want.astype(np.float64), tol, tol)
                yield f"{dtype} seed={seed} offset={offset} shape={shape} out={layout}", run


CASES = {"fill": fill_cases, "copy": copy_cases, "where": where_cases, "matmul": matmul_cases,
         "gather": gather_cases, "scatter_add": scatter_add_cases,
         "index_select": index_select_cases, "sort": sort_cases,
         "random_uniform": random_cases, "random_normal": random_cases}
CASES.update({op: unary_cases for op in UNARY_OPS})
CASES.update({op: binary_cases for op in BINARY_OPS})
CASES.update({op: reduction_cases for op in REDUCTION_OPS})
CASES.update({op: arg_reduction_cases for op in INDEX_REDUCTION_OPS})
CASES.update({op: scan_cases for op in SCAN_OPS})
