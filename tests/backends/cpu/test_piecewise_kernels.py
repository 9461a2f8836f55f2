"""piecewise_kernels (hardtanh/relu6, leaky_relu, hardsigmoid, hardswish and their backward)
against numpy's same operations in the same dtype, bit for bit, on every layout they take,
the gradient also as one broadcast value; False for the dtypes and layouts they do not take.
The ops built on them are checked against PyTorch in tests/nn/test_piecewise_activations.py."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib._C.factory import empty
from tensorlib_cpu import piecewise_kernels as pk

SIXTH = float(np.float32(1 / 6))


def _clamp(x, lo, hi):
    return np.where(x < lo, lo, np.where(x > hi, hi, x))


# name -> (params, forward, derivative): each kernel's operations, in numpy
REFERENCES = {
    "hardtanh": ((-0.5, 2.0), lambda x, a, b: _clamp(x, a, b),
                 lambda x, a, b: np.where((x > a) & (x < b), 1.0, 0.0).astype(x.dtype)),
    "leaky_relu": ((0.2,), lambda x, s: np.where(x > 0, x, x * s),
                   lambda x, s: np.where(x > 0, 1.0, s).astype(x.dtype)),
    "hardsigmoid": ((), lambda x: _clamp(x + 3, 0, 6) / 6,
                    lambda x: np.where((x > -3) & (x < 3), SIXTH, 0.0).astype(x.dtype)),
    "hardswish": ((), lambda x: x * _clamp(x + 3, 0, 6) / 6,
                  lambda x: np.where(x <= -3, 0.0, np.where(x >= 3, 1.0, x / 3 + 0.5))
                  .astype(x.dtype)),
}


def _values(dtype, n):
    """n values over the kinks' range, with each kink, and each kink's neighbours, in it."""
    rng = np.random.default_rng(n)
    x = rng.uniform(-5, 5, n)
    kinks = [-3.0, -0.5, 0.0, -0.0, 2.0, 3.0]
    x[:len(kinks)] = kinks
    x[len(kinks):2 * len(kinks)] = np.nextafter(np.array(kinks, dtype), 10).astype(np.float64)
    return x.astype(dtype)


def _layouts(x2d):
    """The layouts the kernels take: contiguous, 1-D, and rows narrowed from wider rows."""
    rows, cols = x2d.shape
    wide = np.zeros((rows, cols + 5), x2d.dtype)
    wide[:, 2:cols + 2] = x2d
    return [("contiguous", tl.from_numpy(x2d.copy())),
            ("1-D", tl.from_numpy(x2d.reshape(-1).copy())),
            ("narrowed rows", tl.from_numpy(wide).narrow(1, 2, cols))]


@pytest.mark.parametrize("name", sorted(REFERENCES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows,cols", [(3, 7), (64, 2048)])      # 2048 rows: 2 threads
def test_kernels_match_float64_on_every_layout(name, dtype, rows, cols):
    params, forward, slope = REFERENCES[name]
    x = _values(dtype, rows * cols).reshape(rows, cols)
    g = np.random.default_rng(1).standard_normal((rows, cols)).astype(dtype)
    want = forward(x, *params)
    fwd, bwd = getattr(pk, name), getattr(pk, name + "_backward")
    for layout, t in _layouts(x):
        out = empty(t._sizes, t._dtype, t._device)
        assert fwd(out, t, *params), layout
        np.testing.assert_array_equal(out.numpy().reshape(rows, cols), want, err_msg=layout)
        grad = tl.from_numpy(g.reshape(t.shape).copy())
        assert bwd(out, grad, t, *params), layout
        np.testing.assert_array_equal(out.numpy().reshape(rows, cols),
                                      g * slope(x, *params), err_msg=layout)
        one = tl.tensor(np.array(-1.5, dtype)).expand(*t.shape)
        assert bwd(out, one, t, *params), layout
        np.testing.assert_array_equal(out.numpy().reshape(rows, cols),
                                      dtype(-1.5) * slope(x, *params), err_msg=layout)


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_kernels_keep_nan_and_infinities(name):
    params, forward, _ = REFERENCES[name]
    x = np.array([np.nan, -np.inf, np.inf, 1.0], np.float32)
    t = tl.from_numpy(x)
    out = empty(t._sizes, t._dtype, t._device)
    assert getattr(pk, name)(out, t, *params)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(out.numpy(), forward(x, *params))
    assert np.isnan(out.numpy()[0])


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_kernels_decline_other_dtypes_and_layouts(name):
    params = REFERENCES[name][0]
    fwd, bwd = getattr(pk, name), getattr(pk, name + "_backward")
    base = np.arange(12.0).reshape(3, 4) - 6
    transposed = tl.from_numpy(base.T.copy()).t()           # rows of stride 3
    for x in (transposed, tl.from_numpy(base.astype(np.int32)),
              tl.from_numpy(base.astype(np.float16)), tl.from_numpy(base)[:, ::2]):
        out = empty(x._sizes, x._dtype, x._device)
        assert not fwd(out, x, *params)
        assert not bwd(out, tl.ones_like(x), x, *params)
    x = tl.from_numpy(base)
    out = empty(x._sizes, x._dtype, x._device)
    column = tl.from_numpy(np.arange(3.0)).unsqueeze(1).expand(3, 4)     # strides (1, 0)
    assert not bwd(out, column, x, *params)
    empty_x = tl.from_numpy(np.zeros((0, 4)))
    assert not fwd(empty(empty_x._sizes, empty_x._dtype, empty_x._device), empty_x, *params)


def test_backward_reads_a_gradient_repeated_along_rows():
    """A gradient broadcast along the leading dim (row stride 0) reads as rows."""
    params, _, slope = REFERENCES["hardswish"]
    x = _values(np.float64, 12).reshape(3, 4)
    g = np.arange(4.0) - 1.5
    out = empty((3, 4), tl.float64, tl.from_numpy(x)._device)
    assert pk.hardswish_backward(out, tl.from_numpy(g).expand(3, 4), tl.from_numpy(x))
    np.testing.assert_allclose(out.numpy(), g * slope(x), rtol=1e-15)
