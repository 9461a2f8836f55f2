"""mask_kernels (a bool mask's True count, nonzero's coordinates, mask_positions' flat
positions as threaded two-pass C loops) against numpy, and the ops built on them (nonzero,
argwhere, where(cond), x[mask], masked_select) against torch on every layout."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib._C.dtypes as dt
from tensorlib._C.factory import empty
from tensorlib_cpu import mask_kernels as mk


def _masks():
    """(name, numpy bool array): dense and sparse, sizes past the threads' 65536 minimum,
    runs of True and False longer than the 8-element blocks, 1-D to 4-D."""
    rng = np.random.default_rng(0)
    runs = np.zeros(200_003, bool)
    runs[1000:1100] = runs[70_000:140_000] = runs[-9:] = True
    return [("dense 2-D", rng.random((1024, 1024)) > 0.5),
            ("sparse 2-D", rng.random((700, 300)) > 0.999),
            ("runs 1-D", runs),
            ("odd 3-D", rng.random((37, 61, 53)) > 0.3),
            ("4-D", rng.random((5, 7, 9, 311)) > 0.7),
            ("all True", np.ones((300, 257), bool)),
            ("none True", np.zeros((300, 257), bool)),
            ("small", np.array([[True, False, True], [False, False, True]]))]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name,m", _masks())
def test_kernels_match_numpy(name, m, threads):
    before = tl.get_num_threads()
    tl.set_num_threads(threads)
    try:
        mask = tl.from_numpy(m.copy())
        assert mk.count(mask) == int(m.sum()), name
        coords = empty((int(m.sum()), m.ndim), dt.int64, mask._device)
        assert mk.nonzero(coords, mask), name
        np.testing.assert_array_equal(coords.numpy(), np.argwhere(m), err_msg=name)
        flat = mask.reshape(-1)
        positions = empty((int(m.sum()),), dt.int64, mask._device)
        assert mk.mask_positions(positions, flat), name
        np.testing.assert_array_equal(positions.numpy(), np.flatnonzero(m), err_msg=name)
        planar = empty((m.ndim, int(m.sum())), dt.int64, mask._device)   # rows per dim
        assert mk.nonzero(planar.t(), mask), name
        np.testing.assert_array_equal(planar.numpy(), np.nonzero(m), err_msg=name)
    finally:
        tl.set_num_threads(before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.float16, np.bool_,
                                   np.int64])
def test_masked_select_matches_numpy(dtype):
    rng = np.random.default_rng(4)
    for m in (rng.random((700, 301)) > 0.5, rng.random(100_003) > 0.99,
              np.ones((3, 5), bool), np.zeros((3, 5), bool)):
        x_np = (rng.standard_normal(m.shape) * 50).astype(dtype)
        x, mask = tl.from_numpy(x_np), tl.from_numpy(m.copy())
        out = empty((int(m.sum()),), x._dtype, x._device)
        assert mk.masked_select(out, x, mask)
        np.testing.assert_array_equal(out.numpy(), x_np[m])
    x = tl.from_numpy(rng.standard_normal((8, 8)))
    mask = tl.from_numpy(rng.random((8, 8)) > 0.5)
    out = empty((int(mask.numpy().sum()),), x._dtype, x._device)
    assert not mk.masked_select(out, x.t(), mask)            # the op's general path takes
    assert not mk.masked_select(out, x[:1], mask[:1].expand(8, 8))   # these


def test_kernels_refuse_and_check():
    m = tl.from_numpy(np.random.default_rng(1).random((64, 48)) > 0.5)
    n = int(m.numpy().sum())
    assert mk.count(m.t()) is None                         # not contiguous: numpy's
    assert not mk.nonzero(empty((n, 2), dt.int64, m._device), m.t())
    assert mk.count(tl.ones(4)) is None                    # not bool
    with pytest.raises(RuntimeError, match="True elements"):
        mk.nonzero(empty((n + 1, 2), dt.int64, m._device), m)
    scalar = tl.tensor(True)
    assert mk.count(scalar) == 1 and mk.nonzero(empty((1, 0), dt.int64, m._device), scalar)


def test_ops_match_torch_on_every_layout():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x_np = rng.standard_normal((513, 300)).astype(np.float32)
    x_np[rng.random(x_np.shape) < 0.3] = 0.0
    x_np[0, :4] = [np.nan, -0.0, np.inf, -np.inf]
    x64 = x_np.astype(np.float64)
    for a_np in (x_np, x_np.T, x64, x_np[::2, 1::3], x_np.reshape(-1)):
        a, ta = tl.from_numpy(np.ascontiguousarray(a_np)), torch.from_numpy(
            np.ascontiguousarray(a_np))
        if a_np is x_np.T:                                 # a transposed view, not a copy
            a, ta = tl.from_numpy(x_np).t(), torch.from_numpy(x_np).t()
        np.testing.assert_array_equal(a.nonzero().numpy(), ta.nonzero().numpy())
        np.testing.assert_array_equal(tl.argwhere(a > 0).numpy(),
                                      torch.argwhere(ta > 0).numpy())
        for got, want in zip(tl.where(a > 0.5), torch.where(ta > 0.5)):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
            assert got.stride() == want.stride()            # one contiguous row per dim
        for got, want in zip(a.nonzero(as_tuple=True), ta.nonzero(as_tuple=True)):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
        np.testing.assert_array_equal(a[a > 0].numpy(), ta[ta > 0].numpy())
        np.testing.assert_array_equal(tl.masked_select(a, a < 0).numpy(),
                                      torch.masked_select(ta, ta < 0).numpy())
        assert tl.count_nonzero(a).item() == torch.count_nonzero(ta).item()
    rows = x_np[:, 0] > 0
    np.testing.assert_array_equal(tl.from_numpy(x_np)[tl.from_numpy(rows)].numpy(),
                                  torch.from_numpy(x_np)[torch.from_numpy(rows)].numpy())
    assert tl.tensor(3.0).nonzero().shape == torch.tensor(3.0).nonzero().shape
    assert tl.tensor(0.0).nonzero().shape == torch.tensor(0.0).nonzero().shape
    assert tl.zeros(0, 3).nonzero().shape == torch.zeros(0, 3).nonzero().shape


def test_masked_read_gradient():
    rng = np.random.default_rng(3)
    x = tl.tensor(rng.standard_normal((6, 5)), dtype=tl.float64, requires_grad=True)
    mask = tl.from_numpy(rng.random((6, 5)) > 0.4)
    assert tl.autograd.gradcheck(lambda t: t[mask] * 2, (x,))
    assert tl.autograd.gradcheck(lambda t: tl.masked_select(t, mask[0]), (x,))
