"""The CPU sort and topk kernels (sort_kernels: radix sort and the k-best heap) against torch:
every dtype they take, NaN/inf/signed zeros and ties, descending/smallest, rows along any dim of
strided views, heap and sort paths of topk (and kthvalue through it), and sizes large enough
for the threads."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck
from tensorlib_cpu import sort_kernels

torch = pytest.importorskip("torch")

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_INTS = ("uint8", "int8", "int16", "int32", "int64")


def _values(shape, dtype, seed=0):
    """Random values with many ties; floats also with NaN, infinities and both zeros."""
    rng = np.random.default_rng(seed)
    if dtype in _INTS:
        lo, hi = (0, 255) if dtype == "uint8" else (-100, 100)
        return torch.tensor(rng.integers(lo, hi, shape)).to(getattr(torch, dtype))
    a = np.round(rng.standard_normal(shape) * 4, 1)       # rounded: ties
    flat = a.reshape(-1)
    picks = rng.integers(0, flat.size, max(flat.size // 20, 6))
    flat[picks[0::6]] = np.nan
    flat[picks[1::6]] = np.inf
    flat[picks[2::6]] = -np.inf
    flat[picks[3::6]] = 0.0
    flat[picks[4::6]] = -0.0
    flat[picks[5::6]] = -np.nan
    return torch.tensor(a).to(getattr(torch, dtype))


def _ours(t):
    if t.dtype == torch.bfloat16:
        return tl.tensor(t.view(torch.int16).numpy()).view(tl.bfloat16)
    return tl.tensor(t.numpy())


def _bits(t):
    """(raw bits as unsigned integers, NaN mask) of a torch or tensorlib tensor."""
    if t.dtype in (torch.bfloat16, tl.bfloat16):
        bits = t.view(torch.int16 if isinstance(t, torch.Tensor) else tl.int16).numpy()
        return bits, np.isnan(t.double().numpy())
    a = np.ascontiguousarray(t.numpy())
    return a.view(f"u{a.itemsize}"), (np.isnan(a) if a.dtype.kind == "f"
                                      else np.zeros(a.shape, bool))


def _same(got, want):
    """Equal bit for bit (NaN where NaN, -0.0 and 0.0 told apart)."""
    (g, gnan), (w, wnan) = _bits(got), _bits(want)
    return np.array_equal(gnan, wnan) and np.array_equal(g[~gnan], w[~wnan])


def _views(t):
    """The tensor itself, its transpose and a strided slice (torch's and ours alike)."""
    x = _ours(t)
    return [(x, t), (x.transpose(0, -1), t.transpose(0, -1)),
            (x[..., ::2], t[..., ::2])]


@pytest.mark.parametrize("dtype", _FLOATS + _INTS + ("bool",))
@pytest.mark.parametrize("shape", [(7, 13), (3, 4, 257), (300, 700)])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_is_torchs_stable_sort(dtype, shape, descending):
    """Values and indices equal torch's stable sort along every dim, ties in index order."""
    t = _values(shape, "int8").bool() if dtype == "bool" else _values(shape, dtype)
    for x, tt in _views(t):
        for dim in range(tt.dim()):
            got = x.sort(dim, descending=descending)
            want = tt.sort(dim=dim, descending=descending, stable=True)
            assert _same(got.values, want.values)
            assert np.array_equal(got.indices.numpy(), want.indices.numpy())


def test_sort_one_long_row_and_empty_dims():
    t = _values((200_000,), "float32", seed=3)
    got, want = _ours(t).sort(0, descending=True), t.sort(dim=0, descending=True, stable=True)
    assert _same(got.values, want.values)
    assert np.array_equal(got.indices.numpy(), want.indices.numpy())
    empty = tl.zeros(0, 5)
    assert empty.sort(0).values.shape == (0, 5) and empty.sort(1).indices.shape == (0, 5)


def _long_values(n, dtype, spread, specials, seed):
    """A row of n values: spread over the dtype's range (many radix digits vary) or in a
    narrow range (large buckets of ties); floats with or without NaN and -0.0 (without them
    the sorted values are rebuilt from the keys, with them gathered from the input)."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return torch.tensor(rng.integers(0, 2, n).astype(bool))
    if dtype in _INTS:
        info = np.iinfo(dtype)
        lo, hi = (int(info.min), int(info.max)) if spread else (0, 7)
        return torch.tensor(rng.integers(lo, hi, n, endpoint=True).astype(dtype))
    a = rng.standard_normal(n) * (1e4 if spread else 1)
    if not spread:
        a = np.round(a, 1)
    if specials:
        picks = rng.integers(0, n, 40)
        a[picks[:10]], a[picks[10:20]], a[picks[20:30]] = np.nan, -0.0, np.inf
    return torch.tensor(a).to(getattr(torch, dtype))


@pytest.mark.parametrize("dtype", _FLOATS + _INTS + ("bool",))
@pytest.mark.parametrize("n", [5000, 70_000])
@pytest.mark.parametrize("case", ["spread", "narrow", "specials"])
def test_sort_long_rows_match_torch(dtype, n, case):
    """Rows past the radix sort's wider digits (4096) and its bucketing first pass (65536):
    one row (one thread, pooled scratch) and two rows of a transposed view (threads),
    ascending and descending, against torch's stable sort."""
    if case == "specials" and dtype not in _FLOATS:
        pytest.skip("integers have no NaN or -0.0")
    t = _long_values(n, dtype, case == "spread", case == "specials", seed=n)
    pair = torch.stack([t, t.flip(0)], 1)          # (n, 2): rows along dim 0 are strided
    for descending in (False, True):
        for x, tt in ((_ours(t), t), (_ours(pair.contiguous()), pair)):
            got = x.sort(0, descending=descending)
            want = tt.sort(dim=0, descending=descending, stable=True)
            assert _same(got.values, want.values)
            assert np.array_equal(got.indices.numpy(), want.indices.numpy())


def test_sort_long_row_of_equal_and_low_bit_keys():
    """All keys equal (no digit varies) and keys varying in their lowest bits only (one
    bucketing pass sorts them): the order is the positions'."""
    for t in (torch.full((100_000,), 3.5), torch.arange(100_000) % 1000,
              torch.arange(100_000, dtype=torch.float64) % 7):
        got, want = _ours(t).sort(0), t.sort(dim=0, stable=True)
        assert _same(got.values, want.values)
        assert np.array_equal(got.indices.numpy(), want.indices.numpy())


def _check_topk(x, t, k, dim, largest):
    """Values equal torch's (which of 0.0 and -0.0 comes first among ties is torch's choice);
    the indices point at them, and equal values come in index order (torch's own order
    among ties is unspecified)."""
    got = x.topk(k, dim, largest=largest)
    want = t.topk(k, dim, largest=largest)
    assert np.array_equal(got.values.double().numpy(), want.values.double().numpy(),
                          equal_nan=True)
    idx = got.indices.numpy()
    assert _same(_ours(t).gather(dim, got.indices), got.values)
    vals = got.values.float().numpy() if t.dtype == torch.bfloat16 else got.values.numpy()
    vals, idx = np.moveaxis(vals, dim, -1), np.moveaxis(idx, dim, -1)
    tie = (vals[..., 1:] == vals[..., :-1]) | (np.isnan(vals[..., 1:]) & np.isnan(vals[..., :-1]))
    assert np.all(idx[..., 1:][tie] > idx[..., :-1][tie])


@pytest.mark.parametrize("dtype", _FLOATS + _INTS)
@pytest.mark.parametrize("largest", [True, False])
def test_topk_heap_and_sort_paths(dtype, largest):
    """k from 1 (the heap) to the whole row (a sort), along every dim of strided views."""
    t = _values((9, 300), dtype, seed=1)
    for x, tt in _views(t):
        for dim in range(2):
            n = tt.shape[dim]
            for k in sorted({1, 5, min(32, n), min(33, n), n}):
                _check_topk(x, tt, k, dim, largest)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_topk_large_threaded(dtype):
    t = _values((400, 1000), dtype, seed=2)
    for k in (5, 200):
        _check_topk(_ours(t), t, k, 1, True)
        _check_topk(_ours(t), t, k, 0, False)
    row = _values((300_000,), dtype, seed=4)
    _check_topk(_ours(row), row, 40, 0, True)


def test_topk_on_sorted_rows_and_all_ties():
    """Ascending rows make every element enter the heap; a constant row keeps the first
    k positions."""
    up = torch.arange(5000, dtype=torch.float32).repeat(3, 1)
    _check_topk(_ours(up), up, 20, 1, True)
    _check_topk(_ours(up.flip(1)), up.flip(1), 20, 1, False)
    same = torch.full((2, 100), 1.5)
    assert _ours(same).topk(4, 1).indices.tolist() == [[0, 1, 2, 3]] * 2


def test_topk_gradient():
    x = tl.tensor(np.random.default_rng(5).standard_normal((4, 50)), requires_grad=True)
    assert gradcheck(lambda a: a.topk(6, 1).values, (x,))
    assert gradcheck(lambda a: a.topk(3, 0, largest=False).values, (x,))


def test_kernels_decline_what_they_do_not_take():
    x = tl.tensor([[3, 1, 2]], dtype=tl.uint16)
    out = tl.empty(1, 3, dtype=tl.uint16)
    assert sort_kernels.sort(out, tl.empty(1, 3, dtype=tl.int64), x, 1, False) is False
    assert x.sort(1).values.tolist() == [[1, 2, 3]]
    y = tl.tensor([[3.0, 1.0]])
    assert sort_kernels.topk(tl.empty(1, 0), tl.empty(1, 0, dtype=tl.int64), y, 1, 0,
                             True) is False
    assert y.topk(0, 1).values.shape == (1, 0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "bfloat16"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue_through_topk(dtype, keepdim):
    """kthvalue takes the k smallest from the topk kernel (a heap for small k, a sort for
    large): torch's value (NaN largest), an index holding it, along every dim of views."""
    t = _values((7, 300), dtype, seed=6)
    for x, tt in _views(t):
        for dim in range(2):
            n = tt.shape[dim]
            for k in sorted({1, 3, n // 2 + 1, n}):
                got = x.kthvalue(k, dim, keepdim)
                want = tt.kthvalue(k, dim, keepdim)
                assert np.array_equal(got.values.double().numpy(), want.values.double().numpy(),
                                      equal_nan=True)
                index = got.indices if keepdim else got.indices.unsqueeze(dim)
                picked = _ours(tt).gather(dim, index)
                assert _same(picked if keepdim else picked.squeeze(dim), got.values)


def test_kthvalue_gradient():
    x = tl.tensor(np.random.default_rng(8).standard_normal((5, 40)), requires_grad=True)
    assert gradcheck(lambda a: a.kthvalue(3, 1).values, (x,))
    assert gradcheck(lambda a: a.kthvalue(30, 1, True).values, (x,))
