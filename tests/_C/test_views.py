"""Views share storage with their base and match numpy's strided semantics."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import tensorlib as tl

shapes = hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=5)


def arange_like(shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


@given(shapes, st.data())
def test_permute_matches_numpy_and_shares_storage(shape, data):
    base = arange_like(shape)
    perm = data.draw(st.permutations(range(len(shape))))
    t = tl.from_numpy(base.copy())
    v = t.permute(*perm)
    np.testing.assert_array_equal(v.numpy(), base.transpose(perm))
    assert v.untyped_storage() is t.untyped_storage()
    assert v.stride() == tuple(t.stride()[p] for p in perm)


@given(shapes, st.data())
def test_slicing_with_steps(shape, data):
    base = arange_like(shape)
    key = tuple(slice(data.draw(st.integers(-6, 6) | st.none()),
                      data.draw(st.integers(-6, 6) | st.none()),
                      data.draw(st.integers(1, 3) | st.none())) for _ in shape)
    t = tl.from_numpy(base.copy())
    np.testing.assert_array_equal(t[key].numpy(), base[key])


@given(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4), st.data())
def test_write_through_view_changes_base(shape, data):
    t = tl.zeros(shape)
    idx = tuple(data.draw(st.integers(0, s - 1)) for s in shape)
    view = t.permute(*reversed(range(len(shape))))
    view[tuple(reversed(idx))] = 7.0
    expected = np.zeros(shape, np.float32)
    expected[idx] = 7.0
    np.testing.assert_array_equal(t.numpy(), expected)


@given(shapes, st.data())
def test_reshape_is_view_when_possible_and_matches_numpy(shape, data):
    base = arange_like(shape)
    t = tl.from_numpy(base.copy())
    if data.draw(st.booleans()) and len(shape) >= 2:
        t = t.transpose(0, 1)
        base = base.swapaxes(0, 1)
    n = base.size
    factors = [d for d in range(1, n + 1) if n % d == 0] or [1]
    first = data.draw(st.sampled_from(factors)) if n else 0
    new_shape = (first, -1) if n else (0,)
    r = t.reshape(*new_shape)
    np.testing.assert_array_equal(r.numpy(), base.reshape(new_shape))
    if t.is_contiguous():
        assert r.untyped_storage() is t.untyped_storage()


@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), st.data())
def test_expand_uses_stride_zero(shape, data):
    src_shape = tuple(data.draw(st.sampled_from([1, s])) for s in shape)
    lead = data.draw(st.integers(0, 2))
    base = arange_like(src_shape)
    t = tl.from_numpy(base)
    target = (2,) * lead + shape
    e = t.expand(*target)
    np.testing.assert_array_equal(e.numpy(), np.broadcast_to(base, target))
    assert all(e.stride(i) == 0 for i in range(lead))
    assert e.untyped_storage() is t.untyped_storage()


@given(st.integers(1, 12), st.integers(1, 5), st.integers(1, 4))
def test_unfold_matches_sliding_windows(n, size, step):
    base = np.arange(n, dtype=np.float32)
    t = tl.from_numpy(base)
    if size > n:
        with pytest.raises(RuntimeError):
            t.unfold(0, size, step)
        return
    expected = np.lib.stride_tricks.sliding_window_view(base, size)[::step]
    np.testing.assert_array_equal(t.unfold(0, size, step).numpy(), expected)


def test_squeeze_unsqueeze_select_narrow_diagonal():
    base = arange_like((2, 1, 3))
    t = tl.from_numpy(base)
    assert t.squeeze().shape == (2, 3)
    assert t.squeeze(1).shape == (2, 3)
    assert t.squeeze(0).shape == (2, 1, 3)
    assert t.unsqueeze(-1).shape == (2, 1, 3, 1)
    np.testing.assert_array_equal(t.select(2, -1).numpy(), base[:, :, -1])
    np.testing.assert_array_equal(t.narrow(2, 1, 2).numpy(), base[:, :, 1:3])
    m = arange_like((3, 4))
    for off in (-2, 0, 1, 3):
        np.testing.assert_array_equal(tl.from_numpy(m).diagonal(off).numpy(), np.diagonal(m, off))


def test_as_strided_matches_numpy_and_checks_bounds():
    base = np.arange(10, dtype=np.float32)
    t = tl.from_numpy(base)
    v = t.as_strided((3, 3), (2, 1), 1)
    np.testing.assert_array_equal(v.numpy(), np.lib.stride_tricks.as_strided(
        base[1:], (3, 3), (8, 4)))
    with pytest.raises(RuntimeError, match="storage"):
        t.as_strided((4, 4), (4, 1))


def test_impossible_view_raises_and_reshape_copies():
    t = tl.from_numpy(arange_like((2, 3))).t()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.view(6)
    r = t.reshape(6)
    assert r.untyped_storage() is not t.untyped_storage()
    np.testing.assert_array_equal(r.numpy(), arange_like((2, 3)).T.reshape(6))


def test_view_errors_name_sizes():
    t = tl.zeros(2, 3)
    with pytest.raises(RuntimeError, match=r"shape '\[4, -1\]' is invalid for input of size 6"):
        t.view(4, -1)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                         r"\[-2, 1\], but got 2\)"):
        t.transpose(0, 2)
    with pytest.raises(RuntimeError, match="The expanded size of the tensor"):
        t.expand(2, 4)
    with pytest.raises(IndexError, match="out of bounds"):
        t.select(0, 2)


def test_contiguity():
    t = tl.zeros(2, 3, 4)
    assert t.is_contiguous()
    assert not t.transpose(0, 2).is_contiguous()
    assert t[:, :, :1].squeeze(-1).is_contiguous() is False
    assert t[:1].is_contiguous()
    assert t.transpose(0, 2).contiguous().is_contiguous()
