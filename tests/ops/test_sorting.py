"""gather/scatter, index_*, masked_*, sort/topk/kthvalue, searching and counting: against numpy
in float64 over every layout, hypothesis for shapes and indices (duplicates, negatives), PyTorch's
errors, in-place variants, and gradcheck/gradgradcheck for every differentiable op."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib as tl
from tensorlib.autograd import gradcheck, gradgradcheck
from tensorlib.ops.sorting import one_hot
from tests.ops.layouts import LAYOUTS, make

rng = np.random.default_rng(7)


def _x(layout, shape=(4, 5), device="cpu"):
    a = rng.standard_normal(shape)
    t = make(a, layout, device)           # broadcast layout rewrites `a` to the broadcast values
    return a, t


def _np(t):
    return t.detach().cpu().numpy()


def _i(a, device="cpu"):
    return tl.tensor(np.asarray(a, dtype=np.int64), device=device)


def _scatter_ref(x, dim, index, src, fn):
    """numpy reference of a scatter along dim: fn(out, positions, values) (np.add.at, ...)."""
    out = x.copy()
    grid = list(np.indices(index.shape))
    grid[dim] = index
    fn(out, tuple(grid), src[tuple(slice(0, n) for n in index.shape)])
    return out


def _assign(out, pos, vals):
    for p, v in zip(zip(*(g.reshape(-1) for g in pos)), vals.reshape(-1)):
        out[p] = v                       # row-major order: the last write wins


# ---- gather / scatter ------------------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_scatter_add_match_numpy(layout, dim):
    a, x = _x(layout)
    d = dim % 2
    index = rng.integers(0, a.shape[d], (3, 4))
    np.testing.assert_array_equal(_np(tl.gather(x, dim, _i(index))), _gather_ref(a, d, index))
    src = rng.standard_normal((4, 5))
    got = tl.scatter_add(x, dim, _i(index), tl.tensor(src))
    np.testing.assert_allclose(_np(got), _scatter_ref(a, d, index, src, np.add.at), 1e-12)
    assert x.gather(dim, _i(index)).shape == (3, 4)


def _gather_ref(a, d, index):
    grid = list(np.indices(index.shape))
    grid[d] = index
    return a[tuple(grid)]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_scatter_last_write_wins(layout):
    a, x = _x(layout)
    index = np.array([[0, 0, 3, 1, 1], [0, 2, 3, 1, 0]])          # duplicates in columns 0, 2, 3
    src = rng.standard_normal((2, 5))
    np.testing.assert_array_equal(_np(tl.scatter(x, 0, _i(index), tl.tensor(src))),
                                  _scatter_ref(a, 0, index, src, _assign))
    np.testing.assert_array_equal(_np(x.scatter(1, _i(index), -2.5)),
                                  _scatter_ref(a, 1, index, np.full((2, 5), -2.5), _assign))


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_scatter_reduce_matches_numpy(reduce, include_self, layout):
    a, x = _x(layout)
    index = rng.integers(0, 4, (3, 5))
    src = rng.standard_normal((3, 5))
    got = _np(tl.scatter_reduce(x, 0, _i(index), tl.tensor(src), reduce,
                                include_self=include_self))
    np.testing.assert_allclose(got, _scatter_reduce_ref(a, index, src, reduce, include_self),
                               rtol=1e-12)


def _scatter_reduce_ref(a, index, src, reduce, include_self):
    ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
             "amin": np.minimum}[reduce]
    out = a.copy()
    hit = _scatter_ref(np.zeros_like(a), 0, index, np.ones_like(src), np.add.at)
    if not include_self:
        identity = {"sum": 0, "mean": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}[reduce]
        out[hit > 0] = identity
    out = _scatter_ref(out, 0, index, src, ufunc.at)
    if reduce == "mean":
        out = out / np.maximum(hit + include_self, 1)
        out[hit == 0] = a[hit == 0]
    return out


def test_scatter_reduce_integers_and_reduce_kw():
    x = tl.tensor([1, 2, 3])
    got = x.scatter_reduce(0, _i([0, 0, 1]), tl.tensor([4, 4, 5]), "mean", include_self=False)
    assert got.tolist() == [4, 5, 3] and got.dtype == tl.int64
    assert x.scatter_reduce(0, _i([0, 0, 1]), tl.tensor([4, 4, 5]), "mean").tolist() == [3, 3, 3]
    assert x.scatter(0, _i([0, 0]), tl.tensor([2, 3]), reduce="multiply").tolist() == [6, 2, 3]
    assert x.scatter(0, _i([2, 2]), 5, reduce="add").tolist() == [1, 2, 13]
    nan = tl.tensor([0.0, 0.0]).scatter_reduce(0, _i([0, 0]), tl.tensor([float("nan"), 1.0]),
                                               "amax")
    assert np.isnan(nan[0].item()) and nan[1].item() == 0.0


def test_scatter_overwrite_is_exact():
    x = tl.tensor([1e30, float("inf"), 1.0, float("nan")], dtype=tl.float64)
    src = tl.tensor([1.0, -0.0, float("nan"), 2.0], dtype=tl.float64)
    got = _np(x.scatter(0, _i([0, 1, 2, 3]), src))
    assert got[0] == 1.0 and got[1] == 0 and np.signbit(got[1]) and np.isnan(got[2])
    assert got[3] == 2.0


@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 5), st.integers(0, 1),
       st.integers(0, 2**31))
def test_gather_scatter_add_hypothesis(n0, n1, k, dim, seed):
    r = np.random.default_rng(seed)
    a = r.standard_normal((n0, n1))
    shape = (k, n1) if dim == 0 else (n0, k)
    index = r.integers(0, a.shape[dim], shape)
    np.testing.assert_array_equal(_np(tl.gather(tl.tensor(a), dim, _i(index))),
                                  np.take_along_axis(a, index, dim))
    src = r.standard_normal(shape)
    np.testing.assert_allclose(_np(tl.scatter_add(tl.tensor(a), dim, _i(index), tl.tensor(src))),
                               _scatter_ref(a, dim, index, src, np.add.at), rtol=1e-12)
    np.testing.assert_array_equal(_np(tl.scatter(tl.tensor(a), dim, _i(index), tl.tensor(src))),
                                  _scatter_ref(a, dim, index, src, _assign))


def test_scatter_add_is_deterministic():
    index = _i(rng.integers(0, 3, 2000))
    src = tl.tensor(rng.standard_normal(2000) * 1e8)
    runs = {tuple(tl.zeros(3, dtype=tl.float64).scatter_add(0, index, src).tolist())
            for _ in range(3)}
    assert len(runs) == 1


def test_gather_scatter_errors():
    x = tl.zeros(3, 4)
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 0 with size 3"):
        x.gather(0, _i([[7]]))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1"):
        x.gather(1, _i([[-1]]))
    with pytest.raises(RuntimeError, match="Expected dtype int32/int64 for index"):
        x.gather(0, tl.tensor([[0.0]]))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        x.gather(0, _i([0]))
    with pytest.raises(RuntimeError, match=r"expected index \[1, 9\] to be no larger than self"):
        x.gather(0, _i(np.zeros((1, 9))))
    with pytest.raises(RuntimeError, match=r"no larger size than src \[1, 1\]"):
        x.scatter(0, _i([[0, 1]]), tl.ones(1, 1))
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
        x.scatter(0, _i([[0]]), 1.0, reduce="mean")
    with pytest.raises(RuntimeError, match="must be either sum, prod, mean, amax or amin"):
        x.scatter_reduce(0, _i([[0]]), tl.ones(1, 1), "max")
    with pytest.raises(IndexError, match="index 3 is out of bounds"):
        x.scatter_add(0, _i([[3]]), tl.ones(1, 1))
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        x.scatter_add(0, _i([[0]]), tl.ones(1, 1, dtype=tl.float64))


# ---- index_* ---------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dim", [0, 1])
def test_index_ops_match_numpy(layout, dim):
    a, x = _x(layout)
    n = a.shape[dim]
    index = np.array([n - 1, 0, n - 1, 1])                         # a repeat
    np.testing.assert_array_equal(_np(x.index_select(dim, _i(index))), np.take(a, index, dim))
    shape = list(a.shape)
    shape[dim] = 4
    src = rng.standard_normal(shape)
    ref = a.copy()
    np.add.at(ref, (slice(None),) * dim + (index,), 2 * src)
    np.testing.assert_allclose(_np(x.index_add(dim, _i(index), tl.tensor(src), alpha=2)), ref,
                               rtol=1e-12)
    ref = a.copy()
    for j, i in enumerate(index):                                   # the last copy wins
        ref[(slice(None),) * dim + (i,)] = np.take(src, j, dim)
    np.testing.assert_array_equal(_np(x.index_copy(dim, _i(index), tl.tensor(src))), ref)
    ref = a.copy()
    ref[(slice(None),) * dim + (index,)] = -1.5
    np.testing.assert_array_equal(_np(x.index_fill(dim, _i(index), -1.5)), ref)
    np.testing.assert_array_equal(_np(tl.index_fill(x, dim, _i(index), tl.tensor(3.0))),
                                  np.where(ref == -1.5, 3.0, ref))


def test_index_select_int32_and_scalar():
    x = tl.arange(6.0).view(2, 3)
    assert x.index_select(1, tl.tensor([2, 0], dtype=tl.int32)).tolist() == [[2, 0], [5, 3]]
    assert tl.tensor(4.0).index_select(0, _i([0])).item() == 4.0


def test_index_errors():
    x = tl.zeros(3, 4)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 1 with size 4"):
        x.index_select(1, _i([5]))
    with pytest.raises(IndexError, match="Index is supposed to be a vector"):
        x.index_select(0, _i([[0]]))
    with pytest.raises(RuntimeError, match="Expected dtype int32 or int64 for index"):
        x.index_select(0, tl.tensor([0.0]))
    with pytest.raises(RuntimeError, match=r"Number of indices \(2\) should be equal to "
                                           r"source.size\(dim\) \(3\)"):
        x.index_add(0, _i([0, 1]), tl.ones(3, 4))
    with pytest.raises(RuntimeError, match="source tensor shape must match self tensor shape"):
        x.index_add(0, _i([0, 1]), tl.ones(2, 3))
    with pytest.raises(RuntimeError, match="only supports a 0-dimensional value tensor"):
        x.index_fill(0, _i([0]), tl.ones(2))


# ---- masked_* --------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
def test_masked_ops_match_numpy(layout):
    a, x = _x(layout)
    m = rng.random(a.shape) > 0.5
    np.testing.assert_array_equal(_np(x.masked_fill(tl.tensor(m), 2.0)), np.where(m, 2.0, a))
    np.testing.assert_array_equal(_np(x.masked_select(tl.tensor(m))), a[m])
    np.testing.assert_array_equal(_np(x.masked_select(tl.tensor(m[0]))),
                                  a[np.broadcast_to(m[0], a.shape)])
    src = rng.standard_normal(30)
    ref = a.copy()
    ref[m] = src[:m.sum()]
    np.testing.assert_array_equal(_np(x.masked_scatter(tl.tensor(m), tl.tensor(src))), ref)
    np.testing.assert_array_equal(_np(tl.nonzero(tl.tensor(m))), np.argwhere(m))
    np.testing.assert_array_equal(_np(tl.argwhere(x > 0)), np.argwhere(a > 0))
    for got, want in zip(tl.nonzero(x > 0, as_tuple=True), np.nonzero(a > 0)):
        np.testing.assert_array_equal(_np(got), want)


def test_masked_fill_broadcasts_and_errors():
    x = tl.zeros(3)
    assert x.masked_fill(tl.ones(2, 3, dtype=tl.bool), 1).shape == (2, 3)
    with pytest.raises(RuntimeError, match="only supports boolean masks"):
        x.masked_fill(tl.ones(3), 1)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        x.masked_fill_(tl.ones(2, 3, dtype=tl.bool), 1)
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones"):
        x.masked_scatter(tl.ones(3, dtype=tl.bool), tl.ones(2))
    assert tl.nonzero(tl.tensor(5)).shape == (1, 0)
    assert tl.nonzero(tl.zeros(2, 0)).shape == (0, 2)


# ---- take, take_along_dim --------------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
def test_take_and_take_along_dim(layout):
    a, x = _x(layout)
    index = rng.integers(-20, 20, (2, 3))
    np.testing.assert_array_equal(_np(tl.take(x, _i(index))), np.take(a, index))
    idx = np.argsort(a, 1)
    np.testing.assert_array_equal(_np(tl.take_along_dim(x, _i(idx), 1)),
                                  np.take_along_axis(a, idx, 1))
    np.testing.assert_array_equal(_np(x.take_along_dim(_i(idx[:1]), 1)),
                                  np.take_along_axis(a, np.broadcast_to(idx[:1], a.shape), 1))
    np.testing.assert_array_equal(_np(tl.take_along_dim(x, _i([3, 0]))), a.reshape(-1)[[3, 0]])
    with pytest.raises(IndexError, match="out of range: tried to access index 20 on a tensor "
                                         "of 20 elements"):
        tl.take(x, _i([20]))
    with pytest.raises(RuntimeError, match="Expected a long tensor for index"):
        tl.take(x, tl.tensor([0], dtype=tl.int32))


# ---- sort, topk, kthvalue --------------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_numpy(layout, dim, descending):
    a = rng.integers(0, 3, (4, 5)).astype(np.float64)                # many ties
    x = make(a, layout)
    values, indices = tl.sort(x, dim, descending, stable=True)
    key = -a if descending else a
    order = np.argsort(key, dim, kind="stable")
    np.testing.assert_array_equal(_np(indices), order)
    np.testing.assert_array_equal(_np(values), np.take_along_axis(a, order, dim))
    np.testing.assert_array_equal(_np(x.argsort(dim, descending)), order)
    assert type(tl.sort(x)).__name__ == "sort" and tl.sort(x).values is not None


def test_sort_nan_msort_and_scalars():
    x = tl.tensor([2.0, float("nan"), -1.0, 5.0])
    assert _np(x.sort().indices).tolist() == [2, 0, 3, 1]
    assert _np(x.sort(descending=True).indices).tolist() == [1, 3, 0, 2]
    a = rng.standard_normal((3, 4))
    np.testing.assert_array_equal(_np(tl.msort(tl.tensor(a))), np.sort(a, 0))
    v, i = tl.sort(tl.tensor(3.0))
    assert v.item() == 3.0 and i.item() == 0


@pytest.mark.parametrize("layout", LAYOUTS)
def test_topk_kthvalue_match_numpy(layout):
    a, x = _x(layout)
    for largest in (True, False):
        values, indices = tl.topk(x, 3, 1, largest)
        order = np.argsort(-a if largest else a, 1, kind="stable")[:, :3]
        np.testing.assert_array_equal(_np(indices), order)
        np.testing.assert_array_equal(_np(values), np.take_along_axis(a, order, 1))
    values, indices = x.kthvalue(2, 0)
    order = np.argsort(a, 0, kind="stable")[1]
    np.testing.assert_array_equal(_np(values), np.sort(a, 0)[1])
    np.testing.assert_array_equal(_np(indices), order)
    assert x.kthvalue(2, 0, keepdim=True).values.shape == (1, 5)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        x.topk(6)
    with pytest.raises(RuntimeError, match="kthvalue\\(\\): selected number k out of range"):
        x.kthvalue(0)


# ---- searching and counting ------------------------------------------------------------------
@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_bucketize(right):
    b = np.sort(rng.integers(0, 10, 12)).astype(np.float64)         # repeated boundaries
    v = rng.integers(-1, 12, (3, 5)).astype(np.float64)
    side = "right" if right else "left"
    want = np.searchsorted(b, v, side)
    np.testing.assert_array_equal(_np(tl.searchsorted(tl.tensor(b), tl.tensor(v), right=right)),
                                  want)
    np.testing.assert_array_equal(_np(tl.searchsorted(tl.tensor(b), tl.tensor(v), side=side)),
                                  want)
    np.testing.assert_array_equal(_np(tl.bucketize(tl.tensor(v), tl.tensor(b), right=right)),
                                  want)
    rows = np.sort(rng.standard_normal((3, 6)), 1)
    vals = rng.standard_normal((3, 4))
    got = tl.searchsorted(tl.tensor(rows), tl.tensor(vals), right=right, out_int32=True)
    assert got.dtype == tl.int32
    np.testing.assert_array_equal(_np(got), [np.searchsorted(r, q, side)
                                             for r, q in zip(rows, vals)])
    assert tl.searchsorted(tl.tensor(b), 4.5).item() == np.searchsorted(b, 4.5)


@given(st.lists(st.integers(-5, 5), max_size=20), st.lists(st.integers(-7, 7), max_size=10),
       st.booleans())
def test_searchsorted_hypothesis(boundaries, values, right):
    b = np.sort(np.array(boundaries, dtype=np.int64))
    v = np.array(values, dtype=np.int64)
    got = tl.searchsorted(tl.tensor(b), tl.tensor(v), right=right)
    np.testing.assert_array_equal(_np(got), np.searchsorted(b, v, "right" if right else "left"))


def test_searchsorted_errors_and_sorter():
    with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
        tl.searchsorted(tl.tensor([1.0]), tl.tensor([1.0]), right=True, side="left")
    with pytest.raises(RuntimeError, match="boundaries tensor should be 1 dimension"):
        tl.searchsorted(tl.zeros(1, 3), tl.zeros(2, 2))
    with pytest.raises(RuntimeError, match=r"boundaries tensor must be 1 dimension, but got "
                                           r"dim\(2\)"):
        tl.bucketize(tl.zeros(2), tl.zeros(2, 2))
    seq = tl.tensor([3.0, 1.0, 2.0])
    assert tl.searchsorted(seq, tl.tensor([2.5]), sorter=_i([1, 2, 0])).tolist() == [2]


def test_bincount_histc():
    x = rng.integers(0, 6, 30)
    w = rng.standard_normal(30)
    np.testing.assert_array_equal(_np(tl.bincount(_i(x))), np.bincount(x))
    np.testing.assert_allclose(_np(tl.bincount(_i(x), tl.tensor(w), minlength=9)),
                               np.bincount(x, w, 9), rtol=1e-12)
    assert tl.bincount(_i(x), tl.tensor(w, dtype=tl.float32)).dtype == tl.float32
    assert tl.bincount(_i(x), _i(x)).dtype == tl.float64
    assert tl.bincount(_i([])).shape == (0,)
    with pytest.raises(RuntimeError, match="bincount only supports 1-d non-negative integral"):
        tl.bincount(_i([0, -1]))
    h = rng.standard_normal(200)
    want, _ = np.histogram(h, 7, (-1.0, 1.0))
    np.testing.assert_array_equal(_np(tl.histc(tl.tensor(h), 7, -1, 1)), want)
    want, _ = np.histogram(h, 10)
    np.testing.assert_array_equal(_np(tl.histc(tl.tensor(h), 10)), want)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        tl.histc(_i([1, 2]))


@pytest.mark.parametrize("return_inverse", [False, True])
@pytest.mark.parametrize("return_counts", [False, True])
def test_unique_matches_numpy(return_inverse, return_counts):
    a = rng.integers(0, 5, (3, 4))
    got = tl.unique(_i(a), return_inverse=return_inverse, return_counts=return_counts)
    want = np.unique(a, return_inverse=return_inverse, return_counts=return_counts)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(_np(g), np.asarray(w).reshape(_np(g).shape))
    flat = np.array([1, 1, 2, 2, 2, 1, 3, 3])
    values, inverse, counts = tl.unique_consecutive(_i(flat), return_inverse=True,
                                                    return_counts=True)
    assert values.tolist() == [1, 2, 1, 3] and counts.tolist() == [2, 3, 1, 2]
    assert inverse.tolist() == [0, 0, 1, 1, 1, 2, 3, 3]


def test_unique_along_dim_matches_numpy(device):
    rows = np.array([[2, 1], [1, 1], [2, 1], [0, 5]])
    values, inverse, counts = tl.unique(tl.tensor(rows, device=device), dim=0,
                                        return_inverse=True, return_counts=True)
    ref_values, ref_inverse, ref_counts = np.unique(rows, axis=0, return_inverse=True,
                                                    return_counts=True)
    assert values.tolist() == ref_values.tolist() and counts.tolist() == ref_counts.tolist()
    assert inverse.tolist() == ref_inverse.reshape(-1).tolist()
    runs, run_counts = tl.unique_consecutive(tl.tensor(rows.T, device=device), dim=1,
                                             return_counts=True)
    assert runs.tolist() == [[2, 1, 2, 0], [1, 1, 1, 5]] and run_counts.tolist() == [1, 1, 1, 1]


def test_one_hot():
    a = rng.integers(0, 4, (2, 3))
    np.testing.assert_array_equal(_np(one_hot(_i(a))), np.eye(a.max() + 1, dtype=np.int64)[a])
    assert one_hot(_i([1]), 5).shape == (1, 5)
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
        one_hot(_i([3]), 2)
    with pytest.raises(RuntimeError, match="only applicable to index tensor of type LongTensor"):
        one_hot(tl.tensor([1], dtype=tl.int32))


# ---- in-place variants -----------------------------------------------------------------------
INPLACE = {
    "scatter_": lambda t: t.scatter_(0, _i([[1, 0]]), tl.tensor([[5.0, 6.0]])),
    "scatter_add_": lambda t: t.scatter_add_(0, _i([[1, 1]]), tl.tensor([[5.0, 6.0]])),
    "scatter_reduce_": lambda t: t.scatter_reduce_(0, _i([[1, 1]]), tl.tensor([[5.0, 6.0]]),
                                                   "amax"),
    "index_add_": lambda t: t.index_add_(1, _i([0, 0]), tl.ones(2, 2)),
    "index_copy_": lambda t: t.index_copy_(0, _i([1]), tl.ones(1, 2)),
    "index_fill_": lambda t: t.index_fill_(1, _i([1]), 7.0),
    "masked_fill_": lambda t: t.masked_fill_(tl.tensor([True, False]), 7.0),
    "masked_scatter_": lambda t: t.masked_scatter_(tl.tensor([True, False]), tl.ones(3)),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_matches_out_of_place_and_bumps_version(name):
    x = tl.arange(4.0).view(2, 2)
    want = INPLACE[name](x.clone())
    version = x._version
    out = INPLACE[name](x)
    assert out is x and x._version > version
    assert x.tolist() == want.tolist()
    leaf = tl.zeros(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        INPLACE[name](leaf)


def test_inplace_under_autograd():
    w = tl.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    s = tl.tensor(rng.standard_normal((1, 2)), requires_grad=True)
    y = w * 2
    y.scatter_(0, _i([[2, 0]]), s)
    y.index_add_(0, _i([1]), s)
    y.sum().backward()
    np.testing.assert_array_equal(_np(w.grad), [[2, 0], [2, 2], [0, 2]])
    assert s.grad.tolist() == [[2.0, 2.0]]


def test_device(device):
    x = tl.tensor([[3.0, 1.0, 2.0]], device=device)
    assert x.sort().indices.cpu().tolist() == [[1, 2, 0]]
    assert x.gather(1, _i([[2, 2]], device)).cpu().tolist() == [[2.0, 2.0]]
    assert x.masked_select(x > 1.5).cpu().tolist() == [3.0, 2.0]
    assert x.scatter_add(1, _i([[0, 0]], device), tl.ones(1, 2, device=device)).cpu().tolist() \
        == [[5.0, 1.0, 2.0]]
    assert tl.unique(x).device == x.device


# ---- gradients -------------------------------------------------------------------------------
def _leaf(shape=(3, 4), layout="contiguous"):
    return make(rng.standard_normal(shape), layout).detach().requires_grad_()


IDX = _i([[2, 0, 1, 2], [0, 0, 2, 1]])                              # duplicates
MASK = tl.tensor([[True, False, True, True], [False, False, True, False], [True] * 4])

GRAD = {
    "gather": lambda x: x.gather(0, IDX),
    "gather_dim1": lambda x: x.gather(1, _i([[3, 3], [0, 1], [2, 2]])),
    "scatter_add": lambda x: x.scatter_add(0, IDX, x[:2] * x[:2]),
    "scatter": lambda x: (x * 3).scatter(0, IDX, x[1:] ** 2),
    "scatter_value": lambda x: x.scatter(1, _i([[0], [3], [1]]), 2.0),
    "scatter_reduce_sum": lambda x: x.scatter_reduce(0, IDX, x[:2] ** 2, "sum",
                                                     include_self=False),
    "scatter_reduce_mean": lambda x: x.scatter_reduce(0, IDX, x[1:] ** 2, "mean"),
    "scatter_reduce_mean_noself": lambda x: x.scatter_reduce(0, IDX, x[1:] ** 2, "mean",
                                                             include_self=False),
    "scatter_reduce_amax": lambda x: x.scatter_reduce(0, IDX, x[1:] * 2, "amax"),
    "scatter_reduce_amin": lambda x: x.scatter_reduce(0, IDX, x[1:] * 2, "amin",
                                                      include_self=False),
    "scatter_reduce_prod": lambda x: x.scatter_reduce(0, IDX, x[1:] + 1, "prod"),
    "index_select": lambda x: x.index_select(1, _i([3, 0, 3])),
    "index_add": lambda x: x.index_add(0, _i([2, 2]), x[:2] ** 2, alpha=-2),
    "index_copy": lambda x: x.index_copy(1, _i([1, 1, 3]), x[:, :3] ** 2),
    "index_fill": lambda x: x.index_fill(1, _i([1, 3]), 4.0),
    "masked_fill": lambda x: x.masked_fill(MASK, -1.0),
    "masked_select": lambda x: x.masked_select(MASK[0]),
    "masked_scatter": lambda x: x.masked_scatter(MASK, x.exp()),
    "take": lambda x: tl.take(x, _i([[-1, 0], [5, 5]])),
    "take_along_dim": lambda x: tl.take_along_dim(x, _i([[1, 0, 2, 2]]), 0),
    "sort": lambda x: x.sort(1, descending=True).values,
    "topk": lambda x: x.topk(2, 0).values,
    "kthvalue": lambda x: x.kthvalue(2, 1).values,
    "kthvalue_keepdim": lambda x: x.kthvalue(3, 0, keepdim=True).values,
    "msort": lambda x: tl.msort(x),
}


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("op", sorted(GRAD))
def test_gradcheck(op, layout):
    assert gradcheck(GRAD[op], (_leaf((3, 4), layout),))


def test_gradcheck_value_tensors():
    v = tl.tensor(0.5, dtype=tl.float64, requires_grad=True)
    x = _leaf()
    assert gradcheck(lambda a, b: a.masked_fill(MASK, b), (x, v))
    assert gradcheck(lambda a, b: a.index_fill(0, _i([2]), b), (x, v))
    src = _leaf((3, 4))
    assert gradcheck(lambda a, b: tl.scatter(a, 0, IDX, b), (x, src))


@pytest.mark.parametrize("op", ["gather", "scatter_add", "scatter", "index_add", "masked_select",
                                "masked_scatter", "scatter_reduce_prod", "sort", "index_copy"])
def test_gradgradcheck(op):
    assert gradgradcheck(lambda t: GRAD[op](t * t), (_leaf(),))


def test_duplicate_scatter_gradient_goes_to_the_winner():
    src = tl.tensor([[1.0, 2.0]], dtype=tl.float64, requires_grad=True)
    src2 = tl.tensor([[3.0, 4.0]], dtype=tl.float64, requires_grad=True)
    both = tl.cat([src, src2]) if hasattr(tl, "cat") else None
    if both is None:
        pytest.skip("cat is not available yet")
    out = tl.zeros(1, 2, dtype=tl.float64).scatter(0, _i([[0, 0], [0, 0]]), both)
    assert out.tolist() == [[3.0, 4.0]]
    out.sum().backward()
    assert src.grad.tolist() == [[0.0, 0.0]] and src2.grad.tolist() == [[1.0, 1.0]]


def test_not_differentiable_outputs():
    x = _leaf()
    assert not tl.argsort(x).requires_grad and not tl.nonzero(x).requires_grad
    assert not tl.unique(x).requires_grad and not tl.histc(x, 3).requires_grad
    assert x.sort().indices.requires_grad is False
    assert type(x.gather(0, IDX).grad_fn).__name__ == "GatherBackward0"


def test_histogram_takes_100_bins_by_default():
    """`torch.histogram(t, density=True)` (plots of activation statistics) uses 100 equal
    bins over the data's range, as numpy's edges give."""
    h = np.random.default_rng(5).standard_normal(1000)
    hist, edges = tl.histogram(tl.tensor(h), density=True)
    want, want_edges = np.histogram(h, 100, density=True)
    np.testing.assert_allclose(hist.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(edges.numpy(), want_edges, rtol=1e-6)
    assert tl.tensor(h).histogram().hist.shape == (100,)
