"""var/std, logsumexp, scans, order statistics, NaN-aware and counting reductions, norm:
values against numpy in float64 over layouts and devices, random shapes (hypothesis), result
dtypes and tie/NaN conventions against PyTorch, errors, and derivatives."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from scipy import special

import tensorlib as tl
from tensorlib.autograd import gradcheck, gradgradcheck
from tests.ops.layouts import LAYOUTS, make

rng = np.random.default_rng(11)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_var_std(layout, device):
    x = make(rng.standard_normal((4, 5)), layout, device)
    a = x.cpu().numpy()
    cases = [((), {}, a.var(ddof=1)), ((1,), {}, a.var(1, ddof=1)),
             ((0,), {"correction": 0}, a.var(0)), ((1, False), {}, a.var(1)),
             ((False,), {}, a.var()), (((0, 1),), {"correction": 2}, a.var(ddof=2)),
             ((1,), {"keepdim": True}, a.var(1, ddof=1, keepdims=True))]
    for args, kwargs, expected in cases:
        np.testing.assert_allclose(tl.var(x, *args, **kwargs).cpu().numpy(), expected,
                                   rtol=1e-12)
        np.testing.assert_allclose(x.std(*args, **kwargs).cpu().numpy(), np.sqrt(expected),
                                   rtol=1e-12)
    v, m = tl.var_mean(x, 0)
    np.testing.assert_allclose(v.cpu().numpy(), a.var(0, ddof=1), rtol=1e-12)
    np.testing.assert_allclose(m.cpu().numpy(), a.mean(0), rtol=1e-12)
    s, m = tl.std_mean(x, dim=1, correction=0, keepdim=True)
    np.testing.assert_allclose(s.cpu().numpy(), a.std(1, keepdims=True), rtol=1e-12)
    assert np.isnan(tl.var(tl.tensor([1.0])).item())                      # dof 0


@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_var_logsumexp_random_shapes(shape, data):
    a = rng.standard_normal(shape) * 10
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    keepdim = data.draw(st.booleans())
    x = tl.tensor(a)
    np.testing.assert_allclose(tl.var(x, dim, correction=0, keepdim=keepdim).numpy(),
                               a.var(dim, keepdims=keepdim), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tl.logsumexp(x, dim, keepdim).numpy(),
                               special.logsumexp(a, dim, keepdims=keepdim), rtol=1e-12)
    np.testing.assert_allclose(tl.cumsum(x, dim).numpy(), np.cumsum(a, dim), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(tl.cumprod(x, dim).numpy(), np.cumprod(a, dim), rtol=1e-10)
    np.testing.assert_array_equal(tl.cummax(x, dim).values.numpy(),
                                  np.maximum.accumulate(a, dim))
    np.testing.assert_array_equal(tl.cummin(x, dim)[0].numpy(), np.minimum.accumulate(a, dim))
    np.testing.assert_allclose(tl.logcumsumexp(x, dim).numpy(),
                               np.logaddexp.accumulate(a, dim), rtol=1e-12)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_logsumexp_and_scans(layout, device):
    x = make(rng.standard_normal((4, 5)) * 30, layout, device)
    a = x.cpu().numpy()
    np.testing.assert_allclose(tl.logsumexp(x, 1).cpu().numpy(), special.logsumexp(a, 1),
                               rtol=1e-13)
    np.testing.assert_allclose(x.logsumexp((0, 1)).cpu().numpy(), special.logsumexp(a),
                               rtol=1e-13)
    big = tl.tensor([[1000.0, 1000.0], [-np.inf, -np.inf]], device=device)
    np.testing.assert_allclose(tl.logsumexp(big, 1).cpu().numpy(),
                               [1000 + np.log(2), -np.inf])
    for dim in (0, 1, -1):
        np.testing.assert_allclose(x.cumsum(dim).cpu().numpy(), np.cumsum(a, dim), rtol=1e-12)
        np.testing.assert_allclose(x.cumprod(dim).cpu().numpy(), np.cumprod(a, dim),
                                   rtol=1e-12)
        np.testing.assert_allclose(x.logcumsumexp(dim).cpu().numpy(),
                                   np.logaddexp.accumulate(a, dim), rtol=1e-12)
    spread = tl.tensor([-1000.0, 0.0, -2000.0])
    np.testing.assert_allclose(tl.logcumsumexp(spread, 0).numpy(), [-1000.0, 0.0, 0.0])


def test_scan_dtypes_match_torch():
    torch = pytest.importorskip("torch")
    for dtype in ("bool", "int8", "int32", "int64", "float16", "float32"):
        ours = tl.ones(3, dtype=getattr(tl, dtype))
        theirs = torch.ones(3, dtype=getattr(torch, dtype))
        for name in ("cumsum", "cumprod"):
            assert str(getattr(tl, name)(ours, 0).dtype).split(".")[-1] == \
                str(getattr(torch, name)(theirs, 0).dtype).split(".")[-1]
        if dtype != "bool":
            assert str(tl.nansum(ours).dtype).split(".")[-1] == \
                str(torch.nansum(theirs).dtype).split(".")[-1]
    assert tl.cumsum(tl.ones(3, dtype=tl.int32), 0, dtype=tl.float64).dtype is tl.float64
    assert tl.logsumexp(tl.tensor([1, 2]), 0).dtype is tl.float32
    assert tl.count_nonzero(tl.tensor([1.0, 0.0])).dtype is tl.int64
    assert tl.cumsum(tl.tensor(3.0), 0).tolist() == 3.0


def test_cummax_cummin_ties_and_nan_like_torch():
    torch = pytest.importorskip("torch")
    data = [[1.0, 3.0, 3.0, 2.0, 3.0, float("nan"), 5.0, float("nan")],
            [2.0, 2.0, 1.0, 1.0, 0.0, 0.0, 4.0, 4.0]]
    for name in ("cummax", "cummin"):
        ours = getattr(tl, name)(tl.tensor(data), 1)
        theirs = getattr(torch, name)(torch.tensor(data), 1)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
        assert ours.indices.tolist() == theirs.indices.tolist()
    ints = tl.cummax(tl.tensor([1, 1, 0, 2]), 0)
    assert ints.values.tolist() == [1, 1, 1, 2] and ints.indices.tolist() == [0, 1, 1, 3]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_median_mode_against_torch(layout, device):
    torch = pytest.importorskip("torch")
    a = rng.integers(0, 4, (5, 6)).astype(np.float64)
    x = make(a, layout, device)
    a = x.cpu().numpy()
    t = torch.tensor(a)
    assert tl.median(x).item() == torch.median(t).item()
    for dim in (0, 1, -1):
        for name in ("median", "nanmedian", "mode"):
            ours = getattr(tl, name)(x, dim)
            theirs = getattr(torch, name)(t, dim)
            np.testing.assert_array_equal(ours.values.cpu().numpy(), theirs.values.numpy())
            # the value at each returned index is the answer (torch's own index choice for
            # ties is not part of its contract except where checked below)
            np.testing.assert_array_equal(
                np.take_along_axis(a, np.expand_dims(ours.indices.cpu().numpy(), dim), dim),
                np.expand_dims(theirs.values.numpy(), dim))
    keep = tl.median(x, 1, keepdim=True)
    assert keep.values.shape == (5, 1) and keep.indices.shape == (5, 1)


def test_median_mode_nan_and_tie_conventions():
    torch = pytest.importorskip("torch")
    for data in ([3.0, 1.0, 2.0, 1.0, 2.0, 3.0], [3.0, 1.0, float("nan"), 1.0, float("nan"), 3.0],
                 [float("nan")] * 3, [5.0, 5.0, 1.0, 1.0, 0.0, 0.0], [3.0, float("nan"),
                                                                      float("nan"), 1.0]):
        for name in ("median", "nanmedian", "mode"):
            ours = getattr(tl, name)(tl.tensor(data), 0)
            theirs = getattr(torch, name)(torch.tensor(data), 0)
            np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
            if name != "mode" or not np.isnan(data).any():   # torch's NaN-case index varies
                assert ours.indices.item() == theirs.indices.item(), (name, data)
            np.testing.assert_array_equal(data[ours.indices.item()], ours.values.numpy())
        for name in ("median", "nanmedian"):
            np.testing.assert_array_equal(getattr(tl, name)(tl.tensor(data)).numpy(),
                                          getattr(torch, name)(torch.tensor(data)).numpy())
    assert tl.median(tl.tensor([4, 1, 3, 2])).item() == 2                  # lower median
    assert tl.mode(tl.tensor(3.0)).values.item() == 3.0
    assert np.isnan(tl.median(tl.zeros(0)).item())


def test_median_rows_with_and_without_nan_large_and_transposed():
    """median/nanmedian along a dim where some rows hold NaN and most do not (the sort's
    last element decides), over 300x301 (past the threads' minimum), a transposed view and
    a single row; values and indices as torch's, the gradient by gradcheck."""
    torch = pytest.importorskip("torch")
    g = np.random.default_rng(7)
    a = g.standard_normal((300, 301))                     # distinct values: unique indices
    a[::7, 3] = np.nan
    a[5, :] = np.nan
    for arr in (a, a.T, a[:1], a[1:2, :16].astype(np.float32)):
        x = tl.from_numpy(np.ascontiguousarray(arr)) if arr is not a.T else tl.from_numpy(a).t()
        t = torch.from_numpy(np.ascontiguousarray(arr))
        for name in ("median", "nanmedian"):
            for dim, keepdim in ((-1, False), (0, True)):
                ours = getattr(tl, name)(x, dim, keepdim)
                theirs = getattr(torch, name)(t, dim, keepdim)
                np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
                known = ~np.isnan(theirs.values.numpy()) if name == "nanmedian" else True
                np.testing.assert_array_equal(     # an all-NaN row: torch's index varies
                    np.where(known, ours.indices.numpy(), 0),
                    np.where(known, theirs.indices.numpy(), 0))
    x = tl.tensor(g.standard_normal((4, 5)), dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: tl.median(t, 1).values, (x,))
    assert tl.autograd.gradcheck(lambda t: tl.nanmedian(t, 0, True).values, (x,))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_nan_reductions_counting_aminmax_norm(layout, device):
    a = rng.standard_normal((4, 5))
    a[a > 1.0] = np.nan
    x = make(a, layout, device)
    a = x.cpu().numpy()
    np.testing.assert_allclose(tl.nansum(x).cpu().numpy(), np.nansum(a), rtol=1e-12)
    np.testing.assert_allclose(x.nansum(1).cpu().numpy(), np.nansum(a, 1), rtol=1e-12)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)         # an all-NaN column
        expected = np.nanmean(a, 0)
    np.testing.assert_allclose(tl.nanmean(x, 0).cpu().numpy(), expected, rtol=1e-12)
    b = np.nan_to_num(a)
    y = tl.tensor(b, device=device)
    assert tl.count_nonzero(y).item() == np.count_nonzero(b)
    assert tl.count_nonzero(y, dim=1).tolist() == np.count_nonzero(b, 1).tolist()
    assert tl.count_nonzero(y, (0, 1)).item() == np.count_nonzero(b)
    mn, mx = tl.aminmax(y)
    assert mn.item() == b.min() and mx.item() == b.max()
    res = y.aminmax(dim=0, keepdim=True)
    np.testing.assert_array_equal(res.min.cpu().numpy(), b.min(0, keepdims=True))
    np.testing.assert_array_equal(res.max.cpu().numpy(), b.max(0, keepdims=True))
    for p, kwargs in ((2, {}), (1, {"dim": 1}), (float("inf"), {"dim": 0}), ("fro", {}),
                      (3, {"dim": (0, 1)}), (0, {"dim": 1})):
        axis = kwargs.get("dim")
        ord_ = None if p == "fro" else p
        if axis is None or isinstance(axis, tuple):
            expected = np.linalg.norm(b.reshape(-1), ord_)
        else:
            expected = np.linalg.norm(b, ord_, axis=axis)
        np.testing.assert_allclose(tl.norm(y, p, **kwargs).cpu().numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(y.norm().cpu().numpy(), np.linalg.norm(b), rtol=1e-12)
    assert tl.tensor([[True, False]]).all(1).tolist() == [False]
    assert tl.tensor([[1, 0], [0, 0]]).any((0, 1)).item() is True


ERRORS = [
    (lambda: tl.var(tl.tensor([1, 2])), RuntimeError, "floating point"),
    (lambda: tl.std(tl.ones(3), unbiased=True, correction=1), RuntimeError, "both"),
    (lambda: tl.nanmean(tl.tensor([1, 2])), RuntimeError, "nanmean"),
    (lambda: tl.median(tl.zeros(2, 0), 1), IndexError, "non-zero size"),
    (lambda: tl.mode(tl.zeros(0)), IndexError, "non-zero size"),
    (lambda: tl.cumsum(tl.ones(2, 2), 2), IndexError, "Dimension out of range"),
    (lambda: tl.norm(tl.ones(2, 2, 2), "nuc"), RuntimeError, "dim must be a 2-tuple"),
    (lambda: tl.norm(tl.tensor([1, 2])), RuntimeError, "floating point"),
]


@pytest.mark.parametrize("dim, keepdim", [(None, False), ((1, 2), False), ((0, 2), True)])
def test_nuclear_norm_is_the_sum_of_singular_values(device, dim, keepdim):
    a = rng.standard_normal((2, 3, 4))
    x = a[0] if dim is None else a
    got = tl.norm(tl.tensor(x, device=device), p="nuc", dim=dim, keepdim=keepdim)
    moved = np.moveaxis(x, dim, (-2, -1)) if dim is not None else x
    want = np.linalg.svd(moved, compute_uv=False).sum(-1)
    if keepdim:
        want = np.expand_dims(want, dim)
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-10)


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    fn, error, message = ERRORS[case]
    with pytest.raises(error, match=message):
        fn()


# ---- derivatives ---------------------------------------------------------------------------
def _leaf(*shape):
    return tl.tensor(rng.standard_normal(shape), dtype=tl.float64, requires_grad=True)


GRAD = {
    "var": lambda x: tl.var(x, 1),
    "var_all_correction0": lambda x: tl.var(x, correction=0),
    "std": lambda x: tl.std(x, 0, keepdim=True),
    "std_all": lambda x: x.std(),
    "var_mean": lambda x: tl.var_mean(x, 1),
    "std_mean": lambda x: tl.std_mean(x, (0, 1)),
    "logsumexp": lambda x: tl.logsumexp(x, 1),
    "logsumexp_all": lambda x: tl.logsumexp(x, (0, 1), keepdim=True),
    "cumsum": lambda x: tl.cumsum(x, 1),
    "cumprod": lambda x: tl.cumprod(x, 0),
    "cummax": lambda x: tl.cummax(x, 1).values,
    "cummin": lambda x: tl.cummin(x, 0).values,
    "logcumsumexp": lambda x: tl.logcumsumexp(x, 1),
    "median": lambda x: tl.median(x),
    "median_dim": lambda x: tl.median(x, 1).values,
    "nanmedian_dim": lambda x: tl.nanmedian(x, 0, keepdim=True).values,
    "mode": lambda x: tl.mode(x, 1).values,
    "nansum": lambda x: tl.nansum(x, 0),
    "nanmean": lambda x: tl.nanmean(x, 1),
    "norm2": lambda x: tl.norm(x),
    "norm1": lambda x: tl.norm(x, 1, dim=1),
    "norm_inf": lambda x: tl.norm(x, float("inf"), dim=0),
    "norm3": lambda x: tl.norm(x, 3, dim=1, keepdim=True),
    "aminmax": lambda x: tl.aminmax(x, dim=1),
}


@pytest.mark.parametrize("name", sorted(GRAD))
def test_gradients(name):
    fn = GRAD[name]
    x = _leaf(3, 4)
    assert gradcheck(fn, (x,))
    assert gradcheck(lambda t: fn(t.t().contiguous().t()), (x,))             # same values
    y = _leaf(4, 3)
    assert gradcheck(lambda t: fn(t.t()), (y,))                              # transposed
    z = _leaf(1, 4)
    if name not in ("median", "median_dim", "nanmedian_dim", "mode", "cummax", "cummin",
                    "norm_inf", "aminmax", "std", "std_all", "std_mean"):  # ties, std at 0
        assert gradcheck(lambda t: fn(t.expand(3, 4)), (z,))                 # broadcast
    assert gradgradcheck(fn, (x,))


def test_cumprod_gradient_with_zeros():
    x = tl.tensor([[2.0, 0.0, 3.0, 0.0, 4.0], [1.0, 2.0, 0.0, 5.0, 1.0], [1.5, 2, 3, 4, 5]],
                  dtype=tl.float64, requires_grad=True)
    assert gradcheck(lambda t: tl.cumprod(t, 1), (x,))


def test_std_gradient_zero_at_constant():
    x = tl.ones(4, dtype=tl.float64, requires_grad=True)
    tl.std(x).backward()
    assert x.grad.tolist() == [0.0] * 4


def test_norm_gradient_zero_at_origin():
    x = tl.zeros(3, dtype=tl.float64, requires_grad=True)
    tl.norm(x).backward()
    assert x.grad.tolist() == [0.0] * 3
