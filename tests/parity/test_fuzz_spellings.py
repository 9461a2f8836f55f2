"""Differential fuzzer, part 4: every other spelling of a fuzzed op (method, in-place,
alias, namespace copy; see spellings.py) on a few examples of the op's own arguments. An
in-place spelling is compared by its result, the tensor it wrote and whether it returned
that tensor (torch refuses a result dtype that the tensor cannot hold, or a broadcast that
would grow it). A spelling that torch refuses on every example checks nothing: the test
fails then, so the coverage it claims is real."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.parity import fuzz_inputs as fi
from tests.parity import spellings
from tests.parity import test_fuzz as families
from tests.parity.compare import check
from tests.parity import test_fuzz_surface as surface
from tests.parity import test_fuzz_gaps as gaps
from tests.parity.test_fuzz_layouts import COVERED as LAYOUTS
from tests.parity.test_fuzz_ops import FUZZ, OPS, SPELLED

torch = pytest.importorskip("torch")

EXAMPLES = 5
# the first (simplest) example draws the first dtype: a float, which every op takes
DTYPES = ("float32",) + fi.DTYPES


@st.composite
def _unary(draw):
    return (fi.Operand(spec=draw(fi.tensor_specs(dtypes=DTYPES))),), {}


@st.composite
def _binary(draw):
    a = draw(fi.tensor_specs(dtypes=DTYPES))
    b = draw(fi.tensor_specs(shape=draw(fi.broadcast_partner(a[0])), dtypes=DTYPES))
    if draw(st.integers(0, 3)) == 0:
        b = draw(fi.numbers())
    return (fi.Operand(spec=a), fi.Operand(spec=b) if isinstance(b, tuple) else b), {}


@st.composite
def _reduction(draw, op):
    """The arguments test_fuzz's reductions pass, as (args, kwargs)."""
    spec, dim, keepdim = draw(families._reduction_args(op))
    x = fi.Operand(spec=spec)
    if op in ("squeeze", "unsqueeze", "softmax", "log_softmax", "cumsum", "cumprod"):
        return ((x, dim) if dim is not None else (x,)), {}
    if op == "flip":
        return (x, (dim,)), {}
    if op in ("sort", "argsort"):
        return (x, dim if dim is not None else -1), {}
    return ((x,), {}) if dim is None else ((x, dim), {"keepdim": keepdim})


def _entries():
    """(primary name, spelling, strategy, call) for every spelling of every fuzz entry."""
    entries = []
    for names, strategy in ((families.UNARY, lambda op: _unary()),
                            (families.BINARY, lambda op: _binary()),
                            (families.REDUCTIONS, _reduction)):
        for name in names:
            if name == "where_operands":
                continue
            for path in spellings.of(name):
                entries.append((name, path, strategy(name), spellings.call(path)))
    for ops, spelled in ((OPS, SPELLED), (surface.OPS, surface.SPELLED),
                         (gaps.OPS, gaps.SPELLED)):
        for name, (paths, via) in spelled.items():
            for path in paths:
                entries.append((name, path, ops[name][0], via(path)))
    return entries


ENTRIES = {f"{name}>{path}": rest for name, path, *rest in _entries()}


@pytest.mark.parametrize("key", sorted(ENTRIES))
def test_spelling(key):
    strategy, call = ENTRIES[key]
    returned = []

    def body(data):
        args, kwargs = data.draw(strategy)
        returned.append(check(lambda m, ak: call(m, *ak), lambda m: (
            fi.materialize(m, args), fi.materialize(m, kwargs)),
            lambda: f"{key}(*{args}, **{kwargs})",
            has_number=any(isinstance(a, (int, float)) for a in args)))

    for examples in (EXAMPLES, 4 * EXAMPLES):       # a few more before giving up
        settings(FUZZ, max_examples=examples)(given(data=st.data())(body))()
        if any(returned):
            break
    assert any(returned), f"{key}: torch raised on every example, so nothing was compared"


def covered():
    """Every public path the fuzzer checks (primaries and spellings)."""
    paths = set(families.UNARY) | set(families.BINARY) | set(families.REDUCTIONS) | \
        set(OPS) | set(surface.OPS) | set(gaps.OPS) | LAYOUTS
    return paths | {key.split(">")[1] for key in ENTRIES}
