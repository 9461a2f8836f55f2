"""Reductions over dims against numpy float64, over layouts, keepdim and dtypes."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import tensorlib as tl
from tests.ops.layouts import LAYOUTS, make

rng = np.random.default_rng(2)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin", "prod"])
@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions(op, dim, keepdim, layout, device):
    a = rng.standard_normal((5, 6)).astype(np.float32)
    x = make(a, layout, device)
    ref = x.cpu().numpy().astype(np.float64)
    fn = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min, "prod": np.prod}[op]
    axis = dim if not isinstance(dim, list) else tuple(dim)
    expected = fn(ref, axis=axis, keepdims=keepdim) if dim is not None else fn(ref)
    got = getattr(tl, op)(x, dim, keepdim) if dim is not None else getattr(tl, op)(x)
    assert tuple(got.shape) == np.shape(expected)
    np.testing.assert_allclose(got.cpu().numpy(), expected, rtol=1e-5, atol=1e-5)


@given(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=6), st.data())
def test_sum_random_shapes_and_dims(shape, data):
    a = rng.standard_normal(shape).astype(np.float32)
    dims = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))))
    got = tl.from_numpy(a).sum(dims)
    np.testing.assert_allclose(got.numpy(), a.astype(np.float64).sum(dims), rtol=1e-5,
                               atol=1e-5)


def test_large_reductions_use_all_paths():
    a = rng.standard_normal((300, 1000)).astype(np.float32)
    x = tl.from_numpy(a)
    for dim in (0, 1):
        np.testing.assert_allclose(x.sum(dim).numpy(), a.astype(np.float64).sum(dim),
                                   rtol=1e-4, atol=1e-3)
        np.testing.assert_array_equal(x.amax(dim).numpy(), a.max(dim))
    np.testing.assert_allclose(x.t().sum(0).numpy(), a.astype(np.float64).sum(1), rtol=1e-4,
                               atol=1e-3)


def test_max_min_with_indices_and_nan():
    x = tl.tensor([[1.0, 5.0, 5.0], [float("nan"), 0.0, 2.0]])
    values, indices = x.max(1)
    assert indices.tolist() == [1, 0]
    assert values[0].item() == 5.0 and np.isnan(values[1].item())
    v, i = tl.min(x, dim=0, keepdim=True)
    assert v.shape == (1, 3) and i.tolist() == [[1, 1, 1]]
    assert x.argmax().item() == 3
    assert tl.max(tl.tensor([1, 2]), tl.tensor([3, 0])).tolist() == [3, 2]


def test_dtypes_of_reductions():
    ints = tl.tensor([[1, 2], [3, 4]], dtype=tl.int32)
    assert ints.sum().dtype is tl.int64 and ints.sum().item() == 10
    assert tl.tensor([True, True, False]).sum().item() == 2
    assert ints.sum(dtype=tl.float64).dtype is tl.float64
    assert ints.amax().dtype is tl.int32
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        ints.mean()


def test_empty_and_zero_dim():
    assert tl.zeros(0, 3).sum(0).tolist() == [0.0, 0.0, 0.0]
    assert tl.tensor(3.0).sum().item() == 3.0
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        tl.zeros(0, 3).amax(0)
    assert np.isnan(tl.zeros(0).mean().item())
