"""The table of differentiable ops the autograd gradchecks run over.

One `Case` per (op, argument pattern): the function of the float64 tensors that are checked
(indices, masks and Python arguments are built into the function), the input shapes, how
input values are drawn (`domain`: keep away from poles and kinks), which registered
formulas (`tensorlib.autograd.recording.FORMULAS` names) the case exercises, and whether
second derivatives are checked too.

Cases run on every test device: constant tensors (indices, masks, shapes to match) are made
when the function runs, on the device of the tensor they go with, by `_long(values, like)`,
`_mask(values, like)` and `_ones(*shape, like=...)`; never build a tensor at import time or
without `device=`. `draw_inputs(case, shapes, seed, device)` gives the input values (the same
values on every device).

Adding an op: append a Case (usually one line). `test_every_formula_is_covered` lists the
registered formulas no case covers yet. Ops are looked up when the case runs, so a case for
an op that does not exist (yet) is skipped rather than breaking the import.
"""
import numpy as np

import tensorlib as tl
from tensorlib.nn._functional.attention_fused import packed_attention as _packed_attention

LAYOUTS = ("contiguous", "transposed", "sliced", "broadcast")


class Case:
    def __init__(self, name, fn, shapes, domain="real", covers=None, gradgrad=False,
                 layouts=LAYOUTS, make=None, atol=1e-5, rtol=1e-3, cpu_only=False):
        self.name = name
        self.cpu_only = cpu_only        # complex values: the other backends have none yet
        self.fn = fn
        self.shapes = tuple(tuple(s) for s in shapes)
        self.domain = domain if isinstance(domain, tuple) else (domain,) * len(self.shapes)
        self.covers = tuple(covers) if covers is not None else (name.split("-")[0],)
        self.gradgrad = gradgrad
        self.layouts = layouts
        self.make = make
        self.atol, self.rtol = atol, rtol

    def __repr__(self):
        return self.name


# ---- input values ------------------------------------------------------------------------
def _avoid(points, lo=-2.0, hi=2.0, gap=0.15):
    """Uniform on [lo, hi] at least `gap` from each of `points` (kinks, poles)."""
    def draw(rng, shape, state):
        out = rng.uniform(lo, hi, size=shape)
        bad = np.zeros(shape, dtype=bool)
        for _ in range(1000):
            bad = np.zeros(shape, dtype=bool)
            for p in points:
                bad |= np.abs(out - p) < gap
            if not bad.any():
                return out
            out = np.where(bad, rng.uniform(lo, hi, size=shape), out)
        raise AssertionError("could not draw values")
    return draw


def _distinct(rng, shape, state):
    """Values shared out, without repeats, from one grid per case: no ties anywhere (max,
    sort, maximum between inputs)."""
    pool = state.setdefault("pool", list(rng.permutation(np.linspace(-2.0, 2.0, 401))))
    n = int(np.prod(shape, dtype=np.int64))
    values = np.array([pool.pop() for _ in range(n)])
    return values.reshape(shape)


def _nonint(rng, shape, state):
    """Away from integers and halves (floor, round, sign, ... are piecewise constant)."""
    k = rng.integers(-2, 2, size=shape)
    u = rng.uniform(0.15, 0.35, size=shape) + 0.5 * rng.integers(0, 2, size=shape)
    return k + u


DOMAINS = {
    "real": lambda rng, shape, state: rng.uniform(-2.0, 2.0, size=shape),
    "pos": lambda rng, shape, state: rng.uniform(0.5, 2.0, size=shape),
    "unit": lambda rng, shape, state: rng.uniform(-0.8, 0.8, size=shape),
    "small": lambda rng, shape, state: rng.uniform(-1.0, 1.0, size=shape),
    "nonzero": _avoid([0.0]),
    "nonzero_pos": lambda rng, shape, state: rng.uniform(0.6, 1.6, size=shape),
    "distinct": _distinct,
    "nonint": _nonint,
    "clampable": _avoid([-0.5, 0.5]),
    "hard_kinks": _avoid([-3.0, 3.0], lo=-4.0, hi=4.0),     # hardsigmoid's and hardswish's
    "softplus_switch": _avoid([1.5]),          # softplus(x, 2, 3) turns linear at 1.5
}


def _remainder_pair(rng, shapes, state):
    """a, b with b > 0 and a / b away from integers (remainder, fmod, floor_divide jump)."""
    sa, sb = shapes
    shape = np.broadcast_shapes(sa, sb)
    b = rng.uniform(1.0, 2.0, size=sb)
    k = rng.integers(-2, 2, size=shape)
    a = np.broadcast_to(b, shape) * (k + rng.uniform(0.2, 0.8, size=shape))
    # a's own shape: take the first slice along broadcast dims
    index = tuple(slice(0, 1) if n == 1 else slice(None) for n in
                  ((1,) * (len(shape) - len(sa)) + tuple(sa)))
    return [a[index].reshape(sa), b]


# ---- helpers used by the case functions --------------------------------------------------
def _long(values, like):
    """An index tensor on `like`'s device, made when the case's function runs."""
    return tl.tensor(values, dtype=tl.int64, device=like.device)


def _mask(values, like):
    """A bool mask on `like`'s device, made when the case's function runs."""
    return tl.tensor(values, dtype=tl.bool, device=like.device)


def _ones(*shape, like):
    return tl.ones(*shape, dtype=like.dtype, device=like.device)


def _ops(module):
    return getattr(tl.ops, module)


MASK_3x4 = [[True, False, True, False], [False, False, True, True], [True, True, False, False]]

# ---- the table ---------------------------------------------------------------------------
S = (3, 4)
CASES = []


def _lstm_h_plus_c(ig, hg, c):
    from tensorlib.nn._functional.lstm_cell import lstm_pointwise
    h_new, c_new = lstm_pointwise(ig, hg, c)
    return h_new + 0.5 * c_new


def add(*cases):
    CASES.extend(cases)


# pointwise, unary
for _name, _dom in [("neg", "real"), ("abs", "nonzero"), ("exp", "real"), ("expm1", "real"),
                    ("log", "pos"), ("log1p", "pos"), ("sqrt", "pos"), ("sin", "real"),
                    ("cos", "real"), ("tan", "unit"), ("asin", "unit"), ("acos", "unit"),
                    ("atan", "real"), ("sinh", "real"), ("cosh", "real"), ("tanh", "real"),
                    ("erf", "real"), ("erfc", "real"), ("sigmoid", "real"),
                    ("relu", "nonzero")]:
    add(Case(_name, (lambda n: lambda x: getattr(tl, n)(x))(_name), [S], _dom, gradgrad=True))
add(Case("hardtanh", lambda x: tl.nn.functional.hardtanh(x, -0.5, 0.5), [S], "clampable",
         gradgrad=True),
    Case("relu6", lambda x: tl.nn.functional.relu6(x * 6 + 3), [S], "clampable",
         covers=["hardtanh"]),
    Case("leaky_relu", lambda x: tl.nn.functional.leaky_relu(x, 0.2), [S], "nonzero",
         gradgrad=True),
    Case("hardsigmoid", lambda x: tl.nn.functional.hardsigmoid(x), [S], "hard_kinks",
         gradgrad=True),
    Case("hardswish", lambda x: tl.nn.functional.hardswish(x), [S], "hard_kinks",
         gradgrad=True),
    Case("elu", lambda x: tl.nn.functional.elu(x, 0.7), [S], "nonzero", gradgrad=True),
    Case("selu", lambda x: tl.nn.functional.selu(x), [S], "nonzero", covers=["elu"]),
    Case("celu", lambda x: tl.nn.functional.celu(x, 1.5), [S], "nonzero", gradgrad=True),
    Case("softplus", lambda x: tl.nn.functional.softplus(x, 2.0, 3.0), [S], "softplus_switch",
         gradgrad=True),
    Case("log_sigmoid", lambda x: tl.nn.functional.logsigmoid(x * 3), [S], gradgrad=True),
    Case("mish", lambda x: tl.nn.functional.mish(x * 3), [S], gradgrad=True),
    Case("silu", lambda x: tl.nn.functional.silu(x), [S], gradgrad=True),
    Case("gelu", lambda x: tl.nn.functional.gelu(x), [S], gradgrad=True),
    Case("gelu-tanh", lambda x: tl.nn.functional.gelu(x, approximate="tanh"), [S],
         covers=["gelu"], gradgrad=True))
for _name in ("floor", "ceil", "round", "trunc", "sign"):
    add(Case(_name, (lambda n: lambda x: getattr(tl, n)(x))(_name), [S], "nonint"))
add(Case("neg-0d", lambda x: -x, [()], covers=["neg"], gradgrad=True),
    Case("exp-0d", tl.exp, [()], covers=["exp"], gradgrad=True),
    Case("clamp", lambda x: tl.clamp(x, -0.5, 0.5), [S], "clampable", gradgrad=True),
    Case("clamp-min", lambda x: tl.clamp(x, min=-0.5), [S], "clampable", covers=["clamp"]),
    Case("clamp-max", lambda x: tl.clamp(x, max=0.5), [S], "clampable", covers=["clamp"]),
    Case("clamp-tensor", lambda x, lo: tl.clamp(x, min=lo), [S, S], "distinct",
         covers=["clamp"]))

# pointwise, binary (same shape, broadcast between inputs, Python scalars)
for _name, _doms in [("add", ("real", "real")), ("sub", ("real", "real")),
                     ("mul", ("real", "real")), ("div", ("real", "nonzero")),
                     ("pow", ("pos", "real")), ("maximum", ("distinct", "distinct")),
                     ("minimum", ("distinct", "distinct")), ("atan2", ("real", "nonzero")),
                     ("logaddexp", ("real", "real")), ("hypot", ("nonzero", "nonzero"))]:
    _f = (lambda n: lambda a, b: getattr(tl, n)(a, b))(_name)
    add(Case(_name, _f, [S, S], _doms, gradgrad=True),
        Case(f"{_name}-bcast", _f, [(3, 1), (1, 4)], _doms, covers=[_name], gradgrad=True),
        Case(f"{_name}-bcast-lead", _f, [(2, 3, 4), (4,)], _doms, covers=[_name]),
        Case(f"{_name}-0d", _f, [S, ()], _doms, covers=[_name]))
for _name in ("remainder", "fmod", "floor_divide"):
    _f = (lambda n: lambda a, b: getattr(tl, n)(a, b))(_name)
    add(Case(_name, _f, [S, S], make=_remainder_pair),
        Case(f"{_name}-bcast", _f, [S, (1, 4)], covers=[_name], make=_remainder_pair))
add(Case("add-scalar", lambda x: x + 2.5, [S], covers=["add"], gradgrad=True),
    Case("rsub-scalar", lambda x: 2.5 - x, [S], covers=["sub"]),
    Case("mul-scalar", lambda x: 3.0 * x, [S], covers=["mul"]),
    Case("div-scalar", lambda x: x / 3.0, [S], covers=["div"]),
    Case("rdiv-scalar", lambda x: 3.0 / x, [S], "nonzero", covers=["div"], gradgrad=True),
    Case("pow-scalar", lambda x: x ** 3, [S], covers=["pow"], gradgrad=True),
    Case("pow-frac", lambda x: x ** 2.5, [S], "pos", covers=["pow"], gradgrad=True),
    Case("pow-zero-exp", lambda x: x ** 0, [S], covers=["pow"]),
    Case("rpow-scalar", lambda x: 2.0 ** x, [S], covers=["pow"], gradgrad=True),
    Case("where", lambda a, b: tl.where(_mask(MASK_3x4, a), a, b), [S, S], gradgrad=True),
    Case("where-bcast", lambda a, b: tl.where(_mask(MASK_3x4, a), a, b), [(3, 1), (4,)],
         covers=["where"]),
    Case("where-scalar", lambda a: tl.where(_mask(MASK_3x4, a), a, 0.0), [S], covers=["where"]))

# reductions
add(Case("sum", lambda x: x.sum(), [S], gradgrad=True),
    Case("sum-dim", lambda x: x.sum(1), [S], covers=["sum"], gradgrad=True),
    Case("sum-dims-keepdim", lambda x: x.sum((0, 2), keepdim=True), [(2, 3, 2)],
         covers=["sum"], gradgrad=True),
    Case("sum-neg-dim", lambda x: x.sum(-1), [(2, 3, 2)], covers=["sum"]),
    Case("sum-0d", lambda x: x.sum(), [()], covers=["sum"]),
    Case("mean", lambda x: x.mean(), [S], gradgrad=True),
    Case("mean-dim", lambda x: x.mean(0, keepdim=True), [S], covers=["mean"], gradgrad=True),
    Case("mean-dims", lambda x: x.mean((0, 1)), [(2, 3, 2)], covers=["mean"]),
    Case("prod", lambda x: x.prod(), [S], "nonzero_pos", gradgrad=True),
    Case("prod-dim", lambda x: x.prod(1), [S], "real", covers=["prod"], gradgrad=True),
    Case("prod-keepdim", lambda x: x.prod(0, keepdim=True), [S], "real", covers=["prod"]),
    Case("amax", lambda x: x.amax(), [S], "distinct", gradgrad=True),
    Case("amax-dim", lambda x: x.amax(1), [S], "distinct", covers=["amax"], gradgrad=True),
    Case("amin-dims", lambda x: x.amin((0, 1), keepdim=True), [(2, 3, 2)], "distinct",
         covers=["amin"], gradgrad=True),
    Case("max-full", lambda x: x.max(), [S], "distinct", covers=["amax"]),
    Case("min-full", lambda x: tl.min(x), [S], "distinct", covers=["amin"]),
    Case("max_dim", lambda x: x.max(1)[0], [S], "distinct", gradgrad=True),
    Case("max_dim-keepdim", lambda x: tl.max(x, 0, keepdim=True).values, [S], "distinct",
         covers=["max_dim"]),
    Case("min_dim", lambda x: x.min(-1)[0], [S], "distinct", gradgrad=True),
    Case("sum_to_size", lambda x: x.sum_to_size(1, 4), [S], gradgrad=True),
    Case("sum_to_size-lead", lambda x: x.sum_to_size(4), [S], covers=["sum_to_size"]),
    Case("var", lambda x: tl.var(x), [S], gradgrad=True),
    Case("var-dim", lambda x: tl.var(x, 1, keepdim=True), [S], covers=["var"],
         gradgrad=True),
    Case("var-correction0", lambda x: tl.var(x, 0, correction=0), [S], covers=["var"]),
    Case("std", lambda x: tl.std(x), [S], gradgrad=True),
    Case("std-dim", lambda x: tl.std(x, 1), [S], covers=["std"]),
    Case("logsumexp", lambda x: tl.logsumexp(x, 1), [S], gradgrad=True),
    Case("softmax", lambda x: tl.softmax(x, 1), [S], gradgrad=True),
    Case("softmax-dim0", lambda x: tl.softmax(x, 0), [S], covers=["softmax"]),
    # the CPU's fused attention op (other devices take the composite path: still checked)
    Case("sdpa-causal", lambda q, k, v: tl.nn.functional.scaled_dot_product_attention(
        q, k, v, is_causal=True), [(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3)],
        covers=["scaled_dot_product_attention_fused"], layouts=("contiguous", "transposed")),
    # the CPU's packed self-attention op (multi-head attention's in-projection, one piece)
    Case("sdpa-packed", lambda p: _packed_attention(p, 2, None, True, 0.5), [(2, 3, 12)],
         covers=["scaled_dot_product_attention_packed"], layouts=("contiguous", "transposed"),
         cpu_only=True, gradgrad=True),
    # the CPU's fused grid_sample op (double backward through the composite path)
    Case("grid_sample-fused", lambda x, g: tl.nn.functional.grid_sample(
        x, g.tanh(), "bilinear", "reflection", False), [(1, 2, 4, 3), (1, 3, 2, 2)],
        covers=["grid_sampler_2d_fused"], gradgrad=True),
    # the CPU's fused LSTM cell op (strided layouts it declines take the composite path)
    Case("lstm_cell-fused", lambda ig, hg, c: _lstm_h_plus_c(ig, hg, c),
         [(3, 8), (3, 8), (3, 2)], covers=["lstm_cell_fused"], gradgrad=True),
    # cross entropy of logits and class targets: one op node over the fused kernels (an
    # ignored row, -100, in the targets; the mean divides by the rows kept)
    Case("cross_entropy-mean", lambda x: tl.nn.functional.cross_entropy(
        x, tl.tensor([0, 2, -100, 1], device=x.device)), [(4, 3)],
        covers=["cross_entropy_loss"], gradgrad=True),
    Case("cross_entropy-sum", lambda x: tl.nn.functional.cross_entropy(
        x, tl.tensor([0, 2, 1, 1], device=x.device), reduction="sum"), [(4, 3)],
        covers=["cross_entropy_loss"]),
    Case("cross_entropy-none", lambda x: tl.nn.functional.cross_entropy(
        x, tl.tensor([0, -100, 1, 2], device=x.device), reduction="none"), [(4, 3)],
        covers=["cross_entropy_loss"], gradgrad=True),
    Case("log_softmax", lambda x: tl.log_softmax(x, -1), [S], gradgrad=True),
    Case("log_softmax-dim0", lambda x: tl.log_softmax(x, 0), [S], covers=["log_softmax"]),
    Case("logsumexp-dims", lambda x: tl.logsumexp(x, (0, 1), keepdim=True), [S],
         covers=["logsumexp"]),
    Case("cumsum", lambda x: tl.cumsum(x, 1), [S], gradgrad=True),
    Case("cumsum-0", lambda x: tl.cumsum(x, 0), [S], covers=["cumsum"]),
    Case("cumprod", lambda x: tl.cumprod(x, 1), [S], "nonzero", gradgrad=True),
    Case("cummax", lambda x: tl.cummax(x, 1)[0], [S], "distinct"),
    Case("cummin", lambda x: tl.cummin(x, 0)[0], [S], "distinct"),
    Case("vector_norm", lambda x: tl.linalg.vector_norm(x), [S], "nonzero", gradgrad=True),
    Case("vector_norm-ord1", lambda x: tl.linalg.vector_norm(x, 1, dim=1), [S], "nonzero",
         covers=["vector_norm"]),
    Case("vector_norm-ord3", lambda x: tl.linalg.vector_norm(x, 3, dim=0, keepdim=True), [S],
         "nonzero", covers=["vector_norm"]),
    Case("vector_norm-inf", lambda x: tl.linalg.vector_norm(x, float("inf")), [S], "distinct",
         covers=["vector_norm"]))

# linalg
add(Case("matmul", lambda a, b: a @ b, [(3, 4), (4, 2)], gradgrad=True),
    Case("matmul-vec-mat", lambda a, b: tl.matmul(a, b), [(4,), (4, 2)], covers=["matmul"],
         gradgrad=True),
    Case("matmul-mat-vec", lambda a, b: tl.matmul(a, b), [(3, 4), (4,)], covers=["matmul"],
         gradgrad=True),
    Case("matmul-dot", lambda a, b: tl.matmul(a, b), [(4,), (4,)], covers=["matmul"],
         gradgrad=True),
    Case("matmul-batched", lambda a, b: a @ b, [(2, 3, 4), (2, 4, 2)], covers=["matmul"],
         gradgrad=True),
    Case("matmul-batch-bcast", lambda a, b: a @ b, [(2, 1, 2, 3), (3, 3, 2)],
         covers=["matmul"], gradgrad=True),
    Case("matmul-vec-batched", lambda a, b: a @ b, [(3,), (2, 3, 2)], covers=["matmul"]),
    Case("mm", lambda a, b: tl.mm(a, b), [(3, 4), (4, 2)], gradgrad=True),
    Case("addmm", lambda i, a, b: tl.addmm(i, a, b, beta=0.5, alpha=2), [(2,), (3, 4), (4, 2)],
         gradgrad=True),
    Case("addmm-full", lambda i, a, b: tl.addmm(i, a, b), [(3, 2), (3, 4), (4, 2)],
         covers=["addmm"], gradgrad=True))

# shape ops and views
add(Case("view", lambda x: x.view(3, 2, 2), [S], layouts=("contiguous", "sliced")),
    Case("view-flat", lambda x: x.view(-1), [S], covers=["view"], layouts=("contiguous",)),
    Case("reshape", lambda x: x.reshape(2, 6), [S]),
    Case("flatten", lambda x: x.flatten(), [(2, 3, 2)]),
    Case("flatten-part", lambda x: tl.flatten(x, 1), [(2, 3, 2)], covers=["flatten"]),
    Case("squeeze", lambda x: x.squeeze(1), [(3, 1, 4)]),
    Case("squeeze-all", lambda x: x.squeeze(), [(3, 1, 4)], covers=["squeeze"]),
    Case("unsqueeze", lambda x: x.unsqueeze(1), [S]),
    Case("permute", lambda x: x.permute(2, 0, 1), [(2, 3, 4)]),
    Case("permute-neg", lambda x: x.permute(-1, 0, 1), [(2, 3, 4)], covers=["permute"]),
    Case("transpose", lambda x: x.transpose(0, 1), [S]),
    Case("t", lambda x: x.t(), [S]),
    Case("t-1d", lambda x: x.t(), [(4,)], covers=["t"]),
    Case("mT", lambda x: x.mT, [(2, 3, 4)], covers=["transpose"]),
    Case("expand", lambda x: x.expand(2, 3, 4), [(3, 1)]),
    Case("expand_as", lambda x: x.expand_as(_ones(2, 3, 4, like=x)), [(1, 4)], covers=["expand"]),
    Case("view_as", lambda x: x.view_as(_ones(4, 3, like=x)), [S], covers=["view"],
         layouts=("contiguous",)),
    Case("reshape_as", lambda x: x.reshape_as(_ones(4, 3, like=x)), [S], covers=["reshape"]),
    Case("narrow", lambda x: x.narrow(1, 1, 2), [S]),
    Case("split_with_sizes", lambda x: x.split([1, 2, 1], 1), [S], gradgrad=True),
    Case("split_with_sizes-some", lambda x: x.split(1, 1)[1] * x.chunk(2, 0)[1].sum(), [S],
         covers=["split_with_sizes"], gradgrad=True),
    Case("select", lambda x: x.select(0, 1), [S]),
    Case("select-neg", lambda x: x.select(-1, -2), [S], covers=["select"]),
    Case("unfold", lambda x: x.unfold(1, 2, 1), [S]),
    Case("unfold-step", lambda x: x.unfold(0, 2, 2), [(5, 2)], covers=["unfold"]),
    Case("as_strided", lambda x: x.as_strided((2, 2), (1, 2), 1), [S],
         layouts=("contiguous",)),
    Case("diagonal", lambda x: x.diagonal(), [S]),
    Case("diagonal-offset", lambda x: x.diagonal(1), [S], covers=["diagonal"]),
    Case("diagonal-dims", lambda x: x.diagonal(0, 1, 2), [(2, 3, 3)], covers=["diagonal"]),
    Case("clone", lambda x: x.clone(), [S]),
    Case("contiguous", lambda x: x.contiguous(), [S], covers=["clone"],
         layouts=("transposed", "sliced")),
    Case("to_copy", lambda x: x.to(tl.float64, copy=True), [S]))

# indexing
add(Case("getitem-int", lambda x: x[1], [S], covers=["getitem"]),
    Case("getitem-slice", lambda x: x[:, 1:3], [S], covers=["getitem"]),
    Case("getitem-step", lambda x: x[::2, 1::2], [S],
         covers=["getitem"]),
    Case("getitem-none-ellipsis", lambda x: x[None, ..., 2], [S], covers=["getitem"]),
    Case("getitem-index", lambda x: x[_long([0, 2, 0], x)], [S], covers=["getitem"]),
    Case("getitem-index-dim1", lambda x: x[:, [3, 1, 1]], [S], covers=["getitem"]),
    Case("getitem-index-2d", lambda x: x[_long([[0, 1], [2, 2]], x)], [S], covers=["getitem"]),
    Case("take_flat", lambda x: _ops("indexing").take_flat(x, _long([[0, 5], [11, 5]], x)), [S]),
    Case("index_put", lambda x, v: _ops("indexing").index_put(x, (_long([0, 2], x),), v),
         [S, (2, 4)]),
    Case("index_put-accumulate",
         lambda x, v: _ops("indexing").index_put(x, (_long([1, 1, 0], x), _long([3, 3, 0], x)), v,
                                                 accumulate=True), [S, (3,)],
         covers=["index_put"]),
    Case("setitem-index", lambda a, b: _setitem(a * 1, (_long([2, 0], a),), b) * a, [S, (4,)],
         covers=["index_put"]),
    Case("index_add_flat",
         lambda x: _ops("indexing").index_add_flat(x, _long([0, 5, 5, 2], x), (2, 3)), [(4,)]))

# joining
add(Case("cat", lambda a, b: tl.cat([a, b], 0), [S, (2, 4)]),
    Case("cat-dim1", lambda a, b, c: tl.cat((a, b, c), dim=1), [S, (3, 1), S],
         covers=["cat"]),
    Case("stack", lambda a, b: tl.stack([a, b], 1), [S, S]),
    Case("flip", lambda x: tl.flip(x, (0, 1)), [S]),
    Case("roll", lambda x: tl.roll(x, 1, 1), [S]),
    Case("roll-flat", lambda x: tl.roll(x, -5), [S], covers=["roll"]),
    Case("repeat", lambda x: x.repeat(2, 1, 3), [S]),
    Case("repeat_interleave", lambda x: tl.repeat_interleave(x, 2, dim=0), [S]),
    Case("repeat_interleave-tensor",
         lambda x: tl.repeat_interleave(x, _long([1, 0, 2, 1], x), dim=1), [S],
         covers=["repeat_interleave"]),
    Case("tril", lambda x: tl.tril(x), [S]),
    Case("triu", lambda x: tl.triu(x, 1), [S]),
    Case("diag", lambda x: tl.diag(x), [S]),
    Case("diag-vec", lambda x: tl.diag(x, -1), [(4,)], covers=["diag"]),
    Case("diag_embed", lambda x: tl.diag_embed(x), [S]),
    Case("trace", lambda x: tl.trace(x), [S]),
    Case("constant_pad_nd", lambda x: tl.constant_pad_nd(x, (1, 2, 0, 1), 0.5), [S]),
    Case("pad-reflect", lambda x: _ops("joining").pad(x, (2, 1), mode="reflect"), [S],
         covers=["pad"]),
    Case("pad-replicate", lambda x: _ops("joining").pad(x, (1, 2), mode="replicate"),
         [S], covers=["pad"]),
    Case("pad-replicate-2d", lambda x: _ops("joining").pad(x, (1, 2, 1, 0), mode="replicate"),
         [(2, 3, 4)], covers=["pad"]),
    Case("pad-circular", lambda x: _ops("joining").pad(x, (1, 2), mode="circular"), [S],
         covers=["pad"]))

# gather / scatter / index / masked / sort
IDX = [[0, 2, 1, 0], [2, 2, 0, 1]]
add(Case("gather", lambda x: tl.gather(x, 0, _long(IDX, x)), [S]),
    Case("take_along_dim", lambda x: tl.take_along_dim(x, _long([[0], [3], [1]], x), 1), [S]),
    Case("take_along_dim-flat", lambda x: tl.take_along_dim(x, _long([0, 7, 7], x)), [S],
         covers=["take_along_dim"]),
    Case("scatter_add", lambda x, s: tl.scatter_add(x, 0, _long(IDX, x), s), [S, (2, 4)]),
    Case("scatter", lambda x, s: tl.scatter(x, 1, _long([[0, 1], [2, 3], [3, 0]], x), s),
         [S, (3, 2)]),
    Case("scatter_value", lambda x: tl.scatter(x, 1, _long([[0, 1], [2, 3], [3, 0]], x),
                                               value=2.0), [S]),
    Case("scatter_reduce-sum", lambda x, s: tl.scatter_reduce(x, 0, _long(IDX, x), s, "sum"),
         [S, (2, 4)], covers=["scatter_reduce"]),
    Case("scatter_reduce-mean", lambda x, s: tl.scatter_reduce(x, 0, _long(IDX, x), s, "mean"),
         [S, (2, 4)], covers=["scatter_reduce"]),
    Case("scatter_reduce-prod", lambda x, s: tl.scatter_reduce(x, 0, _long(IDX, x), s, "prod"),
         [S, (2, 4)], "nonzero", covers=["scatter_reduce"]),
    Case("scatter_reduce-amax", lambda x, s: tl.scatter_reduce(x, 0, _long(IDX, x), s, "amax"),
         [S, (2, 4)], "distinct", covers=["scatter_reduce"]),
    Case("index_select", lambda x: tl.index_select(x, 1, _long([3, 0, 3], x)), [S]),
    Case("index_add", lambda x, s: tl.index_add(x, 0, _long([2, 0, 2], x), s, alpha=2.0),
         [S, S]),
    Case("index_copy", lambda x, s: tl.index_copy(x, 1, _long([3, 0], x), s), [S, (3, 2)]),
    Case("index_fill", lambda x: tl.index_fill(x, 0, _long([1], x), -1.0), [S]),
    Case("masked_fill", lambda x: tl.masked_fill(x, _mask(MASK_3x4, x), 0.25), [S]),
    Case("masked_fill-bcast", lambda x: tl.masked_fill(x, _mask([True, False, False, True], x),
                                                       0.25), [S], covers=["masked_fill"]),
    Case("masked_select", lambda x: tl.masked_select(x, _mask(MASK_3x4, x)), [S]),
    Case("masked_scatter", lambda x, s: tl.masked_scatter(x, _mask(MASK_3x4, x), s),
         [S, (8,)], layouts=("contiguous", "transposed")),
    Case("sort", lambda x: tl.sort(x, 1)[0], [S], "distinct"),
    Case("sort-desc", lambda x: tl.sort(x, 0, descending=True)[0], [S], "distinct",
         covers=["sort"]),
    Case("topk", lambda x: tl.topk(x, 2, 1)[0], [S], "distinct"),
    Case("topk-smallest", lambda x: tl.topk(x, 2, 0, largest=False)[0], [S], "distinct",
         covers=["topk"]),
    Case("kthvalue", lambda x: tl.kthvalue(x, 2, 1)[0], [S], "distinct"),
    Case("kthvalue-keepdim", lambda x: tl.kthvalue(x, 1, 0, keepdim=True)[0], [S],
         "distinct", covers=["kthvalue"]))

# in-place writes recorded as graph nodes (copy_, fill_, writes through views)
add(Case("copy_", lambda a, b: (a * 1).copy_(b) * a, [S, S]),
    Case("copy_-bcast", lambda a, b: (a * 1).copy_(b) * a, [S, (4,)], covers=["copy_"]),
    Case("fill_", lambda a: (a * 1).fill_(0.5) * a, [S]),
    Case("copy_slices", lambda a, b: _setitem(a * 1, (0,), b * 2) * a, [S, (4,)]),
    Case("copy_slices-scalar", lambda a: _setitem(a * 1, (slice(None), 1), 3.0) * a, [S],
         covers=["copy_slices"]),
    Case("inplace-view-add_", lambda a, b: _view_add(a * 1, b), [S, (3,)],
         covers=["copy_slices"]))


def _setitem(t, key, value):
    t[key] = value
    return t


def _view_add(t, b):
    t[:, 2].add_(b)
    return t


# Registered formulas that are deliberately not covered here, with the reason.
NOT_COVERED = {
    "alias": "not recorded by any public op",
    "contiguous": "contiguous() records CloneBackward0",
    "expand_as": "expand_as() records ExpandBackward0",
    "view_as": "view_as() records ViewBackward0",
    "reshape_as": "reshape_as() records ReshapeBackward0",
    "put_along_dim": "internal: the adjoint of take_along_dim, reached through its backward",
}


def draw_inputs(case, shapes, seed, device=None):
    """The case's input values for `shapes`: float64 numpy arrays (the same values whatever
    the device), or, given a device, contiguous float64 tensors on it."""
    rng = np.random.default_rng(seed)
    state = {}
    if case.make is not None:
        values = case.make(rng, shapes, state)
    else:
        values = [DOMAINS[d](rng, s, state) for d, s in zip(case.domain, shapes)]
    values = [np.asarray(v, dtype=np.float64) for v in values]
    if device is None:
        return values
    return [tl.tensor(v, dtype=tl.float64, device=device) for v in values]


# ---- nn layers with their own derivative ops (tensorlib.nn._functional) ----------------------
F = tl.nn.functional
add(Case("conv1d", lambda x, w: F.conv1d(x, w, padding=1), [(2, 3, 5), (4, 3, 2)],
         covers=["conv1d", "conv1d_weight_grad", "conv_transpose1d"], gradgrad=True),
    Case("conv2d", lambda x, w: F.conv2d(x, w, stride=2, padding=1, groups=2),
         [(2, 4, 5, 5), (4, 2, 3, 3)],
         covers=["conv2d", "conv2d_weight_grad", "conv_transpose2d"], gradgrad=True),
    Case("conv2d_bias", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2),
         [(2, 4, 5, 5), (4, 2, 3, 3), (4,)], gradgrad=True),
    Case("conv3d", lambda x, w: F.conv3d(x, w), [(1, 2, 3, 3, 3), (2, 2, 2, 2, 2)],
         covers=["conv3d", "conv3d_weight_grad", "conv_transpose3d"]),
    Case("conv_transpose2d", lambda x, w: F.conv_transpose2d(x, w, stride=2),
         [(1, 2, 3, 3), (2, 3, 2, 2)], gradgrad=True),
    Case("im2col", lambda x: F.unfold(x, 2, padding=1), [(1, 2, 4, 4)], gradgrad=True),
    Case("col2im", lambda c: F.fold(c, (4, 4), 2), [(1, 8, 9)], gradgrad=True),
    Case("max_pool", lambda x: F.max_pool2d(x, 2), [(1, 2, 4, 4)], "distinct",
         covers=["max_pool", "max_pool_backward"], gradgrad=True))
add(Case("linear", lambda x, w, b: tl.ops.linalg.linear(x, w, b), [(3, 4), (5, 4), (5,)],
         gradgrad=True),
    Case("linear-nobias-3d", lambda x, w: tl.ops.linalg.linear(x, w), [(2, 3, 4), (5, 4)],
         covers=["linear"]))

from . import op_cases_math  # noqa: E402,F401 - special functions and decompositions
from . import op_cases_complex  # noqa: E402,F401 - complex ops, fft, eig
