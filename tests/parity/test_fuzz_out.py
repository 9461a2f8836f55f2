"""Differential fuzzer, part 3: `out=`. The ops' generated arguments (test_fuzz_ops' strategies
and simple unary/binary/reduction ones) run with an `out` tensor (or tuple) of the right
shape, no elements, or a wrong shape; of the result's dtype or another; contiguous or not;
sometimes requiring grad. Compared: the exception class, or the returned object being `out`
itself with torch's values, and whether a resize warning was given."""
import warnings

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.parity import fuzz_inputs as fi
from tests.parity import test_fuzz_surface as surface
from tests.parity.compare import TOLERANCE, check
from tests.parity.spellings import _resolve
from tests.parity.test_fuzz_ops import FUZZ, OPS

torch = pytest.importorskip("torch")

EXAMPLES = 8
FUZZ_OUT = settings(FUZZ, max_examples=EXAMPLES)


def _unary(draw):
    return (fi.Operand(spec=draw(fi.tensor_specs())),), {}


def _binary(draw):
    a = draw(fi.tensor_specs())
    b = draw(fi.tensor_specs(shape=draw(fi.broadcast_partner(a[0]))))
    return (fi.Operand(spec=a), fi.Operand(spec=b) if draw(st.integers(0, 3)) else
            draw(fi.numbers())), {}


def _reduction(draw):
    spec = draw(fi.tensor_specs())
    n = max(len(spec[0]), 1)
    return (fi.Operand(spec=spec), draw(st.integers(-n, n - 1))), {"keepdim": draw(
        st.booleans())}


def _std(draw):
    """(no half-precision input: torch's std_var_all has no BFloat16 kernel when out's dtype
    differs, a refusal of its kernel, not of the arguments)"""
    spec = draw(fi.tensor_specs(dtypes=("float32", "float64", "int64", "bool")))
    n = max(len(spec[0]), 1)
    return (fi.Operand(spec=spec), draw(st.integers(-n, n - 1))), {"keepdim": draw(
        st.booleans())}


def _scan(draw):
    return _reduction(draw)[0], {}


def _where(draw):
    a = draw(fi.tensor_specs(dtypes=("float32", "int64")))
    cond = fi.Operand(spec=(a[0], "bool", "contiguous", a[3]))
    return (cond, fi.Operand(spec=a), fi.Operand(spec=draw(fi.tensor_specs(shape=a[0])))), {}


def _clamp(draw):
    return (fi.Operand(spec=draw(fi.tensor_specs())), draw(st.sampled_from([-1, 0.5, None])),
            draw(st.sampled_from([2, 1.5, None]))), {}


def _borrowed(name, ops=OPS):
    return lambda draw: draw(ops[name][0])


def _with_dim_kw(name):
    def strategy(draw):
        args, kwargs = draw(OPS[name][0])
        return args, {k: v for k, v in kwargs.items() if k in ("dim", "descending", "stable",
                                                                 "largest", "keepdim")}
    return strategy


UNARY = ["exp", "abs", "neg", "sqrt", "sin", "tanh", "floor", "sign", "sigmoid", "reciprocal",
         "logical_not", "bitwise_not", "isposinf", "nan_to_num"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "lt", "logical_and",
          "remainder", "floor_divide", "atan2", "bitwise_and", "hypot"]
REDUCTIONS = ["sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "std",
              "var", "logsumexp", "all", "any", "nansum", "median"]
BORROWED = ["matmul", "mm", "bmm", "dot", "outer", "cat", "stack", "index_select", "gather",
            "take", "masked_select", "tril", "triu", "zeros", "ones", "full", "arange",
            "linspace", "logspace", "eye", "searchsorted"]
# linalg and nn.functional: the decompositions whose results are unique (no sign or order
# freedom), on the fuzzer's own arguments
NAMESPACED = {**{n: _borrowed(n) for n in ("linalg.det", "linalg.inv", "linalg.solve",
                                           "linalg.vector_norm", "linalg.matrix_norm",
                                           "linalg.norm")},
              **{n: _borrowed(n, surface.OPS) for n in (
                  "linalg.cholesky", "linalg.cholesky_ex", "linalg.cross", "linalg.eigvalsh",
                  "linalg.multi_dot", "linalg.pinv", "linalg.matrix_rank", "linalg.svdvals",
                  "linalg.vecdot", "linalg.slogdet", "linalg.inv_ex",
                  "linalg.solve_triangular", "nn.functional.normalize")},
              "linalg.matmul": _borrowed("matmul"),
              "linalg.matrix_power": _borrowed("matrix_power", surface.OPS)}
STRATEGIES = {**{n: _unary for n in UNARY}, **{n: _binary for n in BINARY},
              **{n: _reduction for n in REDUCTIONS}, **{n: _borrowed(n) for n in BORROWED},
              "sort": _with_dim_kw("sort"), "topk": _with_dim_kw("topk"), "where": _where,
              "clamp": _clamp, "cumsum": _scan, "cumprod": _scan, **NAMESPACED,
              "std": _std}

TUPLES = {"max", "min", "median", "sort", "topk",     # (values, indices) outs
          "linalg.cholesky_ex", "linalg.slogdet", "linalg.inv_ex"}
# ties make topk's indices ambiguous: its values are compared, and what its indices point at
GATHERED = {"topk"}


FACTORIES = {"zeros", "ones", "full"}


def _out_spec(draw, n_outputs):
    """What each out tensor is: its shape ('right' is the result's, known at run time), its
    dtype (None: the result's), contiguous or not, and whether it requires grad."""
    return [(draw(st.sampled_from(["right", "right", "empty", "wrong"])),
             draw(st.one_of(st.none(), st.none(), st.sampled_from(fi.DTYPES))),
             draw(st.booleans()), draw(st.integers(0, 9)) == 0) for _ in range(n_outputs)]


def _make_out(m, spec, ref):
    shape_kind, dtype, transposed, grad = spec
    shape = {"right": tuple(ref.shape) if ref is not None else (2,), "empty": (0,),
             "wrong": (2, 5)}[shape_kind]
    name = dtype or (str(ref.dtype).split(".")[-1] if ref is not None else "float32")
    dt = getattr(m, name)
    if transposed and len(shape) >= 2:
        out = m.zeros(shape[::-1], dtype=dt).permute(*range(len(shape) - 1, -1, -1))
    else:
        out = m.zeros(shape, dtype=dt)
    if grad and out.dtype.is_floating_point:
        out.requires_grad_()
    return out


def _reference(name, args, kwargs):
    try:
        result = _resolve(torch, name)(*fi.materialize(torch, args),
                                      **fi.materialize(torch, kwargs))
    except Exception:  # noqa: BLE001 - the out= call then raises too; any shape will do
        return None
    return result


@pytest.mark.parametrize("name", sorted(STRATEGIES))
@FUZZ_OUT
@given(data=st.data())
def test_out(name, data):
    args, kwargs = data.draw(st.composite(lambda draw: STRATEGIES[name](draw))())
    if name in FACTORIES:       # torch makes an out of negative size there (its bug)
        assume(not isinstance(args[0], tuple) or all(s >= 0 for s in args[0]))
    ref = _reference(name, args, kwargs)
    n_outputs = 2 if name in TUPLES else 1
    refs = tuple(ref) if ref is not None and n_outputs == 2 else (ref,) * n_outputs
    specs = _out_spec(data.draw, n_outputs)

    def call(m, built):
        a, k = built
        outs = tuple(_make_out(m, s, r) for s, r in zip(specs, refs))
        out = outs[0] if len(outs) == 1 else outs
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = _resolve(m, name)(*a, out=out, **k)
        returned = (result,) if len(outs) == 1 else tuple(result)
        assert all(r is o for r, o in zip(returned, outs)), f"{m.__name__} returned a copy"
        warned = any(issubclass(w.category, UserWarning) and "resized" in str(w.message)
                     for w in caught)            # (std's degrees-of-freedom warning aside)
        values = [o.detach() for o in outs]
        if name in GATHERED:
            values[1] = a[0].gather(k.get("dim", -1), values[1])
        return values, warned

    # invalid inputs (torch raises without out=) are the other fuzzers' subject: here both
    # must raise, in whichever order each library checks inputs and out
    check(call, lambda m: (fi.materialize(m, args), fi.materialize(m, kwargs)),
          lambda: f"{name}(*{args}, out={specs}, **{kwargs})", scale=10,
          has_number=any(isinstance(a, (int, float)) for a in args[1:]),
          any_exception=ref is None, tolerance=_input_tolerance(args))


def _input_tolerance(args):
    """The widest tolerance of the inputs' float dtypes (the result carries their roundings)."""
    names = [a.spec[1] for a in args if isinstance(a, fi.Operand) and a.spec is not None]
    tolerances = [TOLERANCE[n] for n in names if n in TOLERANCE]
    return max(tolerances) if tolerances else None


def test_fuzzer_size():
    """What the report quotes: ops with out= fuzzed here."""
    assert len(STRATEGIES) >= 60
