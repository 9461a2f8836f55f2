"""Differential fuzzer, edge classes: the corners where tensorlib used to raise while
PyTorch returns (or raised another class). Drawn so that the corner comes up in most
examples: bool operands of the rounding divisions, advanced indexing whose result is
empty (indices out of bounds that PyTorch then never checks), and reductions over dim lists
with zero-size, repeated and out-of-range dims. Errors are compared by class (compare.py)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.parity import fuzz_inputs as fi
from tests.parity.compare import check

torch = pytest.importorskip("torch")

EXAMPLES = 25
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck))


def _spec(draw, shape, dtypes):
    return (shape, draw(st.sampled_from(dtypes)), draw(st.sampled_from(fi.LAYOUTS)),
            draw(st.integers(0, 2**16)))


# ---- division of bool operands ----------------------------------------------------------
DIVISIONS = {
    "div floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "div trunc": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "div": lambda m, a, b: m.div(a, b),
    "Tensor.div trunc": lambda m, a, b: a.div(b, rounding_mode="trunc"),
    "Tensor.div_ floor": lambda m, a, b: a.clone().div_(b, rounding_mode="floor"),
    "Tensor.div_ trunc": lambda m, a, b: a.clone().div_(b, rounding_mode="trunc"),
    "floor_divide": lambda m, a, b: m.floor_divide(a, b),
    "remainder": lambda m, a, b: m.remainder(a, b),
    "fmod": lambda m, a, b: m.fmod(a, b),
    "Tensor.remainder_": lambda m, a, b: a.clone().remainder_(b),
    "operator //": lambda m, a, b: a // b,
    "operator %": lambda m, a, b: a % b,
}


@st.composite
def _bool_pair(draw):
    """(a, b): a bool tensor and a bool, integer or float tensor or a Python number, in
    either order (a stays a tensor)."""
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    a = _spec(draw, shape, ("bool",))
    partner = draw(st.sampled_from(["bool", "int", "float", "number"]))
    if partner == "number":
        return a, draw(fi.numbers())
    dtypes = {"bool": ("bool",), "int": ("uint8", "int64"), "float": ("float32",)}[partner]
    b = _spec(draw, draw(fi.broadcast_partner(shape)), dtypes)
    return (b, a) if draw(st.booleans()) else (a, b)


@pytest.mark.parametrize("name", sorted(DIVISIONS))
@FUZZ
@given(pair=_bool_pair())
def test_division_of_bools(name, pair):
    a, b = pair
    operand = lambda m, s: fi.build(m, s) if isinstance(s, tuple) else s  # noqa: E731
    check(lambda m, ab: DIVISIONS[name](m, *ab),
          lambda m: (operand(m, a), operand(m, b)), lambda: f"{name}({a}, {b})",
          has_number=not isinstance(b, tuple))


# ---- advanced indexing with an empty result ----------------------------------------------
@st.composite
def _empty_index_case(draw):
    """A tensor with a zero-size dim (or an empty index) and an index tuple whose tensors
    may point far out of bounds."""
    shape = tuple(draw(st.lists(st.integers(0, 3), min_size=1, max_size=3)))
    if 0 not in shape and draw(st.booleans()):
        shape = shape[:-1] + (0,)
    x = fi.Operand(spec=_spec(draw, shape, ("float32", "int64", "bool")))
    items = []
    for size in shape[:draw(st.integers(1, len(shape)))]:
        kind = draw(st.sampled_from(["index", "index", "empty", "slice"]))
        if kind == "slice":
            items.append(slice(None))
            continue
        n = 0 if kind == "empty" else draw(st.integers(1, 2))
        seed = draw(st.integers(0, 999))
        values = fi.random_values((n,), -size - 4, size + 4, seed)
        items.append(fi.Operand(values=values, dtype="int64", shape=(n,)))
    return x, tuple(items), draw(st.sampled_from([0.0, 1.0]))


def _get(m, x, key, value):
    return x[key]


def _set(m, x, key, value):
    x = x.clone()
    x[key] = value
    return x


def _index_put(m, x, key, value, accumulate=False):
    key = tuple(k for k in key if not isinstance(k, slice)) if all(
        not isinstance(k, slice) for k in key) else None
    if key is None:              # index_put_ takes tensors only: no slices
        return x
    return x.clone().index_put_(key, m.tensor(value).to(x.dtype), accumulate=accumulate)


INDEXING = {"getitem": _get, "setitem": _set, "index_put_": _index_put,
            "index_put_ accumulate": lambda m, *a: _index_put(m, *a, accumulate=True)}


@pytest.mark.parametrize("name", sorted(INDEXING))
@FUZZ
@given(case=_empty_index_case())
def test_indexing_with_empty_results(name, case):
    x, key, value = case
    check(lambda m, args: INDEXING[name](m, *args),
          lambda m: fi.materialize(m, (x, key, value)), lambda: f"{name}({x}, {key})")


# ---- reductions over dim lists --------------------------------------------------------------
REDUCTIONS = ["amax", "amin", "sum", "mean", "nansum", "std", "var", "logsumexp",
              "count_nonzero", "all", "any"]


@st.composite
def _dim_list_case(draw):
    """A tensor with zero-size dims likely, and a dim list that may repeat a dim (as itself
    or its negative spelling) or hold one out of range."""
    shape = tuple(draw(st.lists(st.integers(0, 2), min_size=1, max_size=3)))
    x = _spec(draw, shape, ("float32", "float64", "int64", "bool"))
    n = len(shape)
    dims = draw(st.lists(st.integers(-n - 1, n), min_size=1, max_size=3))
    if draw(st.booleans()):
        d = draw(st.sampled_from(dims))
        dims.append(d - n if d >= 0 else d + n)         # the same dim spelled the other way
    return x, tuple(dims), draw(st.booleans())


@pytest.mark.parametrize("op", REDUCTIONS)
@FUZZ
@given(case=_dim_list_case())
def test_reductions_over_dim_lists(op, case):
    spec, dims, keepdim = case

    def call(m, x):
        if op == "count_nonzero":
            return m.count_nonzero(x, dims)
        return getattr(m, op)(x, dims, keepdim=keepdim)
    check(call, lambda m: fi.build(m, spec), lambda: f"{op}({spec}, {dims}, {keepdim})")


def test_edge_classes_are_reached():
    """The strategies do produce the corners (not only ordinary calls)."""
    np.random.default_rng(0)
    found = {"zero-size": False, "repeat": False}

    @settings(max_examples=EXAMPLES, derandomize=True, database=None)
    @given(case=_dim_list_case())
    def probe(case):
        (shape, *_), dims, _ = case
        wrapped = [d % len(shape) for d in dims if -len(shape) <= d < len(shape)]
        found["zero-size"] |= any(shape[d] == 0 for d in wrapped)
        found["repeat"] |= len(set(wrapped)) < len(wrapped)
    probe()
    assert all(found.values()), found
