"""Broadcasting of shapes matches numpy; clashes raise RuntimeError naming the sizes."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import tensorlib as tl
from tensorlib._C.broadcast import collapse_dims


@given(hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=4, max_side=4))
def test_broadcast_shapes_matches_numpy(shapes):
    assert tl.broadcast_shapes(*shapes.input_shapes) == shapes.result_shape


@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4),
       st.sampled_from(["add", "mul", "sub", "maximum", "lt"]))
def test_binary_ops_broadcast_like_numpy(shapes, op):
    a_shape, b_shape = shapes.input_shapes
    rng = np.random.default_rng(0)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    got = getattr(tl, op)(tl.from_numpy(a), tl.from_numpy(b)).numpy()
    expected = {"add": np.add, "mul": np.multiply, "sub": np.subtract, "maximum": np.maximum,
                "lt": np.less}[op](a.astype(np.float64), b.astype(np.float64))
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_clash_names_sizes():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of "
                                           r"tensor b \(4\) at non-singleton dimension 1"):
        tl.zeros(2, 3) + tl.zeros(2, 4)


def test_collapse_dims_merges_contiguous_runs():
    sizes, strides = collapse_dims((2, 3, 4), [(12, 4, 1), (0, 0, 0)])
    assert sizes == (24,) and strides == [(1,), (0,)]
    sizes, strides = collapse_dims((2, 3, 4), [(12, 4, 1), (1, 0, 0)])
    assert sizes == (2, 12) and strides == [(12, 1), (1, 0)]
    assert collapse_dims((1, 1), [(5, 5)]) == ((), [()])
