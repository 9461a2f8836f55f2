"""Differential fuzzer, part 6: the names #29 added (bit shifts, the view-scatter family,
the older linear-algebra names). test_fuzz_spellings runs their other spellings (methods,
in-place forms) from SPELLED here."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.parity import fuzz_inputs as fi
from tests.parity.compare import check
from tests.parity.test_fuzz_ops import FLOATS, FUZZ, _dim, _shape, _tensor, registrar

torch = pytest.importorskip("torch")

FUZZ_GAPS = settings(FUZZ, max_examples=8)
OPS, SPELLED = {}, {}
op = registrar(OPS, SPELLED)
INTS = ("uint8", "int8", "int16", "int32", "int64")


@st.composite
def _shift_amounts(draw, shape, dtype):
    bits = np.iinfo(dtype).bits
    low = 0 if dtype == "uint8" else -2
    values = np.array(draw(st.lists(st.integers(low, bits + 2), min_size=int(np.prod(shape)),
                                    max_size=int(np.prod(shape))))).reshape(shape)
    return fi.Operand(values=values.tolist(), dtype=dtype, shape=shape)


def _shift_args(draw):
    dtype = draw(st.sampled_from(INTS))
    x = _tensor(draw, dtypes=(dtype,))
    shape = _shape(x)
    if draw(st.booleans()):
        return (x, draw(st.integers(0, 5))), {}
    return (x, draw(_shift_amounts(shape, dtype))), {}


op("bitwise_left_shift")(_shift_args)
op("bitwise_right_shift")(_shift_args)


def _slice_shape(shape, dim, start, end, step):
    out = list(shape)
    out[dim] = len(range(*slice(start, end, step).indices(shape[dim])))
    return tuple(out)


@op("select_scatter")
def _select_scatter_args(draw):
    x = _tensor(draw, min_dims=1, dtypes=FLOATS)
    shape = _shape(x)
    dim = _dim(draw, len(shape), valid_only=True)
    size = shape[dim]
    index = draw(st.integers(-size, size - 1)) if size else 0
    src_shape = shape[:dim % len(shape)] + shape[dim % len(shape) + 1:]
    return (x, _tensor(draw, shape=src_shape, dtypes=(x.spec[1],)), dim, index), {}


@op("slice_scatter")
def _slice_scatter_args(draw):
    x = _tensor(draw, min_dims=1, dtypes=FLOATS)
    shape = _shape(x)
    dim = _dim(draw, len(shape), valid_only=True) % len(shape)
    start = draw(st.sampled_from([None, 0, 1]))
    end = draw(st.sampled_from([None, 2, 3]))
    step = draw(st.integers(1, 2))
    src = _tensor(draw, shape=_slice_shape(shape, dim, start, end, step), dtypes=(x.spec[1],))
    return (x, src), {"dim": dim, "start": start, "end": end, "step": step}


@op("diagonal_scatter")
def _diagonal_scatter_args(draw):
    x = _tensor(draw, min_dims=2, dtypes=FLOATS)
    shape = _shape(x)
    offset = draw(st.integers(-1, 1))
    view = np.zeros(shape).diagonal(offset, 0, 1)
    return (x, _tensor(draw, shape=view.shape, dtypes=(x.spec[1],))), {"offset": offset}


@op("as_strided_scatter")
def _as_strided_scatter_args(draw):
    rows, cols = draw(st.integers(1, 3)), draw(st.integers(2, 4))
    x = _tensor(draw, shape=(rows, cols), dtypes=FLOATS)
    size = (draw(st.integers(1, rows)), draw(st.integers(1, cols // 2)))
    stride = (cols, 2)
    return (x, _tensor(draw, shape=size, dtypes=(x.spec[1],)), size, stride), {}


@op("chain_matmul", method=False, scale=10)
def _chain_matmul_args(draw):
    dims = draw(st.lists(st.integers(1, 3), min_size=2, max_size=5))
    dtype = draw(st.sampled_from(FLOATS))
    return tuple(_tensor(draw, shape=(a, b), dtypes=(dtype,)) for a, b in zip(dims, dims[1:])), {}


@op("frobenius_norm", scale=10)
def _frobenius_args(draw):
    x = _tensor(draw, min_dims=2, dtypes=FLOATS)
    n = len(_shape(x))
    dim = draw(st.sampled_from([(0, 1), (-1,), (n - 1, 0), 1]))
    return (x, dim, draw(st.booleans())), {}


@op("nuclear_norm", scale=100)
def _nuclear_args(draw):
    x = _tensor(draw, min_dims=2, max_dims=3, dtypes=FLOATS)
    n = len(_shape(x))
    return (x, draw(st.sampled_from([(0, 1), (n - 2, n - 1), (-1, -2)])),
            draw(st.booleans())), {}


@op("triangular_solve", scale=100)
def _triangular_solve_args(draw):
    n = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 999)))
    a = np.round(rng.standard_normal((n, n)), 2) + 3 * n * np.eye(n)
    dtype = draw(st.sampled_from(FLOATS))
    b = _tensor(draw, shape=(n, draw(st.integers(1, 2))), dtypes=(dtype,))
    return (b, fi.Operand(values=a.tolist(), dtype=dtype, shape=a.shape)), {
        "upper": draw(st.booleans()), "transpose": draw(st.booleans()),
        "unitriangular": draw(st.booleans())}


def _gamma_pair(draw):
    a = _tensor(draw, dtypes=FLOATS)
    return (a, _tensor(draw, shape=_shape(a), dtypes=(a.spec[1],))), {}


op("igamma")(_gamma_pair)
op("igammac")(_gamma_pair)


def _index_vector(draw, n, bound):
    return fi.Operand(values=[draw(st.integers(0, bound - 1)) for _ in range(n)],
                      dtype="int64", shape=(n,))


@op("index_reduce")
def _index_reduce_args(draw):
    x = _tensor(draw, min_dims=1, dtypes=FLOATS + ("int64",))
    shape = _shape(x)
    dim = _dim(draw, len(shape), valid_only=True) % len(shape)
    n = draw(st.integers(0, 3))
    src_shape = shape[:dim] + (n,) + shape[dim + 1:]
    index = _index_vector(draw, n, shape[dim]) if shape[dim] else \
        fi.Operand(values=[], dtype="int64", shape=(0,))
    if not shape[dim]:
        src_shape = shape[:dim] + (0,) + shape[dim + 1:]
    return (x, dim, index, _tensor(draw, shape=src_shape, dtypes=(x.spec[1],)),
            draw(st.sampled_from(["prod", "mean", "amax", "amin"]))), {
        "include_self": draw(st.booleans())}


@op("put")
def _put_args(draw):
    x = _tensor(draw, dtypes=FLOATS + ("int64",))
    numel = int(np.prod(_shape(x)))
    n = draw(st.integers(0, 3)) if numel else 0
    index = fi.Operand(values=[draw(st.integers(-numel, numel - 1)) for _ in range(n)],
                       dtype="int64", shape=(n,))
    accumulate = draw(st.booleans())
    if not accumulate:       # repeated indices without accumulate: either write may win
        index = fi.Operand(values=list(dict.fromkeys(v % numel for v in index.values)),
                           dtype="int64")
        n = len(index.values)
    return (x, index, _tensor(draw, shape=(n,), dtypes=(x.spec[1],)), accumulate), {}


@op("nonzero_static")
def _nonzero_static_args(draw):
    return (_tensor(draw),), {"size": draw(st.integers(0, 5)),
                              "fill_value": draw(st.sampled_from([-1, 7]))}


@op("fill", method=False)
def _fill_args(draw):
    return (_tensor(draw), draw(st.sampled_from([0, 2.5, -3, True]))), {}


@op("segment_reduce", method=False)
def _segment_args(draw):
    lengths = draw(st.lists(st.integers(0, 2), min_size=1, max_size=4))
    x = _tensor(draw, shape=(sum(lengths),) + tuple(draw(st.lists(st.integers(1, 2),
                                                                  max_size=1))),
                dtypes=FLOATS)
    return (x, draw(st.sampled_from(["sum", "mean", "max", "min", "prod"]))), {
        "lengths": fi.Operand(values=lengths, dtype="int64"),
        "initial": draw(st.sampled_from([None, 1.5]))}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(OPS))
@FUZZ_GAPS
@given(data=st.data())
def test_op(name, data):
    strategy, call, scale = OPS[name]
    args, kwargs = data.draw(strategy)
    check(lambda m, ak: call(m, *ak), lambda m: (fi.materialize(m, args),
                                                 fi.materialize(m, kwargs)),
          lambda: f"{name}(*{args}, **{kwargs})", scale=scale,
          has_number=any(type(a) in (int, float) for a in args))
