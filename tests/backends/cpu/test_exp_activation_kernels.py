"""exp_activation_kernels (ELU, softplus, logsigmoid, Mish and their backward) against numpy
in float64, on every layout they take, over values from -1000 to 1000 with the infinities and
NaN; the gradient also as one broadcast value; False where they decline."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib._C.factory import empty
from tensorlib_cpu import exp_activation_kernels as ek


def _sigmoid(x):
    return np.exp(-np.logaddexp(0, -x))


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.logaddexp(0, x * beta) / beta)


def _elu(x, alpha, scale, input_scale):
    return np.where(x > 0, x * scale, alpha * scale * np.expm1(np.minimum(x, 0) * input_scale))


def _elu_slope(x, alpha, scale, input_scale):
    neg = input_scale * alpha * scale * np.exp(np.minimum(x, 0) * input_scale)
    return np.where(np.isnan(x), np.nan, np.where(x > 0, scale, neg))


def _mish_slope(x):
    t = np.tanh(_softplus(x, 1.0, np.inf))
    return t + x * _sigmoid(x) * (1 - t * t)


def _mish(x):
    return np.where(np.isneginf(x), np.nan, x * np.tanh(_softplus(x, 1.0, np.inf)))


# kernel -> (params, forward, derivative), float64 references
REFERENCES = {
    "elu": ((0.7, 1.3, 0.5), _elu, _elu_slope),
    "softplus": ((2.0, 15.0), _softplus,
                 lambda x, b, t: np.where(x * b > t, 1.0, _sigmoid(x * b))),
    "log_sigmoid": ((), lambda x: -np.logaddexp(0, -x), lambda x: _sigmoid(-x)),
    "mish": ((), _mish, lambda x: np.where(np.isinf(x), np.nan, _mish_slope(x))),
}


def _values(n, dtype):
    rng = np.random.default_rng(n)
    x = np.concatenate([rng.standard_normal(n - 40) * 6,
                        [np.nan, -np.inf, np.inf, -1000, -200, -90, -30, -7.5, -1e-3, -1e-6,
                         -0.0, 0.0, 1e-6, 1e-3, 7.4, 7.6, 19.9, 20.1, 30, 90, 200, 1000],
                        np.linspace(-20, 20, 18)])
    return x.astype(dtype)


def _layouts(x2d):
    rows, cols = x2d.shape
    wide = np.zeros((rows, cols + 3), x2d.dtype)
    wide[:, 1:cols + 1] = x2d
    return [("contiguous", tl.from_numpy(x2d.copy())),
            ("1-D", tl.from_numpy(x2d.reshape(-1).copy())),
            ("narrowed rows", tl.from_numpy(wide).narrow(1, 1, cols))]


@pytest.mark.parametrize("name", sorted(REFERENCES))
@pytest.mark.parametrize("dtype,rtol", [(np.float32, 4e-6), (np.float64, 1e-13)])
@pytest.mark.parametrize("rows,cols", [(4, 20), (40, 2048)])     # 81920 floats: 2 threads
def test_kernels_match_float64(name, dtype, rtol, rows, cols):
    params, forward, slope = REFERENCES[name]
    x = _values(rows * cols, dtype).reshape(rows, cols)
    g = np.random.default_rng(3).standard_normal(x.shape).astype(dtype)
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        want, dwant = forward(x64, *params), g * slope(x64, *params)
    fwd, bwd = getattr(ek, name), getattr(ek, name + "_backward")
    for layout, t in _layouts(x):
        out = empty(t._sizes, t._dtype, t._device)
        assert fwd(out, t, *params), layout
        np.testing.assert_allclose(out.numpy().reshape(x.shape), want, rtol=rtol, atol=1e-30,
                                   err_msg=layout)
        # the derivatives are O(1) and cancel near their roots (Mish's at -1.19): absolute
        assert bwd(out, tl.from_numpy(g.reshape(t.shape).copy()), t, *params), layout
        np.testing.assert_allclose(out.numpy().reshape(x.shape), dwant, rtol=rtol,
                                   atol=rtol, err_msg=layout)
        assert bwd(out, tl.tensor(np.array(0.5, dtype)).expand(*t.shape), t, *params), layout
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(out.numpy().reshape(x.shape), 0.5 * slope(x64, *params),
                                       rtol=rtol, atol=rtol, err_msg=layout)


@pytest.mark.parametrize("name,params", [("elu", (1.0, 1.0, -0.5)), ("elu", (1.0, 1.0, 0.0)),
                                         ("softplus", (-1.0, 20.0)),
                                         ("softplus", (1.0, 100.0))])
def test_kernels_decline_parameters_past_their_range(name, params):
    """A negative input scale or beta could overflow exp; the op's composite takes them."""
    x = tl.from_numpy(np.linspace(-3, 3, 8))
    out = empty(x._sizes, x._dtype, x._device)
    assert not getattr(ek, name)(out, x, *params)
    assert not getattr(ek, name + "_backward")(out, tl.ones_like(x), x, *params)


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_kernels_decline_other_dtypes_and_layouts(name):
    params = REFERENCES[name][0]
    base = np.linspace(-3, 3, 12).reshape(3, 4)
    for x in (tl.from_numpy(base.T.copy()).t(), tl.from_numpy(base.astype(np.float16)),
              tl.from_numpy(base)[:, ::2]):
        out = empty(x._sizes, x._dtype, x._device)
        assert not getattr(ek, name)(out, x, *params)
        assert not getattr(ek, name + "_backward")(out, tl.ones_like(x), x, *params)
