"""Pooling (max/avg/adaptive/lp/unpool, functional and modules): forward and indices against
PyTorch over parameter grids, gradcheck in float64, errors and reprs."""
import itertools

import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(11)


def t64(a, requires_grad=False):
    return tensorlib.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def th(a):
    return torch.tensor(np.asarray(a, dtype=np.float64))


def close(ours, ref, tol=1e-12):
    np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=tol, atol=tol)


# ---- max pooling -----------------------------------------------------------------------------
MAX_GRID = list(itertools.product([2, 3, (3, 2)], [None, 1, 2, (2, 3)], [0, 1], [1, 2],
                                  [False, True]))


@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil_mode", MAX_GRID)
def test_max_pool2d_matches_torch(kernel, stride, padding, dilation, ceil_mode):
    x = RNG.standard_normal((2, 3, 9, 8))
    kw = dict(kernel_size=kernel, stride=stride, padding=padding, dilation=dilation,
              ceil_mode=ceil_mode)
    try:
        ref, ref_i = TF.max_pool2d(th(x), return_indices=True, **kw)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            F.max_pool2d(t64(x), **kw)
        return
    out, idx = F.max_pool2d(t64(x), return_indices=True, **kw)
    close(out, ref)
    assert idx.dtype == tensorlib.int64
    np.testing.assert_array_equal(idx.numpy(), ref_i.numpy())
    m = nn.MaxPool2d(kernel, stride, padding, dilation, ceil_mode=ceil_mode)
    close(m(t64(x)), ref)


@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil_mode",
                         [(2, None, 0, 1, False), (3, 2, 1, 1, True), (3, 2, 1, 2, False),
                          (4, 3, 2, 1, True)])
def test_max_pool1d_matches_torch(kernel, stride, padding, dilation, ceil_mode):
    x = RNG.standard_normal((2, 3, 11))
    args = (kernel, stride, padding, dilation, ceil_mode, True)
    out, idx = F.max_pool1d(t64(x), *args)
    ref, ref_i = TF.max_pool1d(th(x), *args)
    close(out, ref)
    np.testing.assert_array_equal(idx.numpy(), ref_i.numpy())
    out2, idx2 = nn.MaxPool1d(kernel, stride, padding, dilation, return_indices=True,
                              ceil_mode=ceil_mode)(t64(x[0]))          # unbatched
    close(out2, ref[0])


def test_max_pool3d_matches_torch():
    x = RNG.standard_normal((1, 2, 5, 6, 5))
    out, idx = F.max_pool3d(t64(x), 2, (1, 2, 2), 1, return_indices=True)
    ref, ref_i = TF.max_pool3d(th(x), 2, (1, 2, 2), 1, return_indices=True)
    close(out, ref)
    np.testing.assert_array_equal(idx.numpy(), ref_i.numpy())


def test_max_pool_gradients():
    x = t64(RNG.standard_normal((2, 2, 6, 5)), True)
    assert gradcheck(lambda a: F.max_pool2d(a, 3, 2, 1, ceil_mode=True), (x,))
    assert gradcheck(lambda a: F.max_pool2d(a, (2, 3), 1, (1, 0), dilation=(2, 1)), (x,))
    x1 = t64(RNG.standard_normal((2, 3, 9)), True)
    assert gradcheck(lambda a: F.max_pool1d(a, 3, 2, 1), (x1,))
    # ties: the whole gradient goes to the first maximum, as in torch
    z = np.ones((1, 1, 4, 4))
    a = t64(z, True)
    r = torch.tensor(z, requires_grad=True)
    F.max_pool2d(a, 2).sum().backward()
    TF.max_pool2d(r, 2).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), r.grad.numpy())


def test_max_pool_float32_and_nan():
    x = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
    x[0, 0, 1, 1] = np.nan
    out = F.max_pool2d(tensorlib.tensor(x), 2)
    ref = TF.max_pool2d(torch.tensor(x), 2)
    assert out.dtype == tensorlib.float32
    np.testing.assert_array_equal(np.isnan(out.numpy()), np.isnan(ref.numpy()))
    np.testing.assert_allclose(np.nan_to_num(out.numpy()), np.nan_to_num(ref.numpy()))


# ---- average pooling --------------------------------------------------------------------------
AVG_GRID = list(itertools.product([2, 3, (3, 2)], [None, 2, (1, 3)], [0, 1], [False, True],
                                  [True, False], [None, 5]))


@pytest.mark.parametrize("kernel,stride,padding,ceil_mode,count_include_pad,divisor", AVG_GRID)
def test_avg_pool2d_matches_torch(kernel, stride, padding, ceil_mode, count_include_pad,
                                  divisor):
    x = RNG.standard_normal((2, 3, 9, 8))
    args = (kernel, stride, padding, ceil_mode, count_include_pad, divisor)
    try:
        ref = TF.avg_pool2d(th(x), *args)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            F.avg_pool2d(t64(x), *args)
        return
    close(F.avg_pool2d(t64(x), *args), ref)
    close(nn.AvgPool2d(*args)(t64(x)), ref)


@pytest.mark.parametrize("kernel,stride,padding,ceil_mode,count_include_pad",
                         [(2, None, 0, False, True), (3, 2, 1, True, False),
                          (3, 2, 1, True, True), (4, 3, 2, False, False)])
def test_avg_pool1d_matches_torch(kernel, stride, padding, ceil_mode, count_include_pad):
    x = RNG.standard_normal((2, 3, 11))
    args = (kernel, stride, padding, ceil_mode, count_include_pad)
    ref = TF.avg_pool1d(th(x), *args)
    close(F.avg_pool1d(t64(x), *args), ref)
    close(nn.AvgPool1d(*args)(t64(x[0])), ref[0])


def test_avg_pool_gradients():
    x = t64(RNG.standard_normal((2, 2, 6, 5)), True)
    assert gradcheck(lambda a: F.avg_pool2d(a, 3, 2, 1, ceil_mode=True,
                                            count_include_pad=False), (x,))
    assert gradcheck(lambda a: F.avg_pool2d(a, 2, divisor_override=3), (x,))
    x1 = t64(RNG.standard_normal((2, 3, 9)), True)
    assert gradcheck(lambda a: F.avg_pool1d(a, 3, 2, 1), (x1,))
    x3 = t64(RNG.standard_normal((1, 2, 4, 4, 3)), True)
    assert gradcheck(lambda a: F.avg_pool3d(a, 2, 1), (x3,))


def test_avg_pool3d_matches_torch():
    x = RNG.standard_normal((1, 2, 5, 6, 5))
    close(F.avg_pool3d(t64(x), 2, (1, 2, 2), 1, True, False),
          TF.avg_pool3d(th(x), 2, (1, 2, 2), 1, True, False))


# ---- adaptive ---------------------------------------------------------------------------------
@pytest.mark.parametrize("size", [1, 3, (4, 5), (None, 3), (9, 8), (2, 7), (7, 2), (12, 11)])
def test_adaptive_pool2d_matches_torch(size):
    x = RNG.standard_normal((2, 3, 9, 8))
    close(F.adaptive_avg_pool2d(t64(x), size), TF.adaptive_avg_pool2d(th(x), size))
    close(nn.AdaptiveAvgPool2d(size)(t64(x)), TF.adaptive_avg_pool2d(th(x), size))
    out, idx = F.adaptive_max_pool2d(t64(x), size, return_indices=True)
    ref, ref_i = TF.adaptive_max_pool2d(th(x), size, return_indices=True)
    close(out, ref)
    np.testing.assert_array_equal(idx.numpy(), ref_i.numpy())
    out2, _ = nn.AdaptiveMaxPool2d(size, return_indices=True)(t64(x[0]))
    close(out2, ref[0])


@pytest.mark.parametrize("size", [1, 4, 5, 11, 13])
def test_adaptive_pool1d_matches_torch(size):
    x = RNG.standard_normal((2, 3, 11))
    close(F.adaptive_avg_pool1d(t64(x), size), TF.adaptive_avg_pool1d(th(x), size))
    close(nn.AdaptiveAvgPool1d(size)(t64(x[0])), TF.adaptive_avg_pool1d(th(x[0]), size))
    out, idx = F.adaptive_max_pool1d(t64(x), size, True)
    ref, ref_i = TF.adaptive_max_pool1d(th(x), size, True)
    close(out, ref)
    np.testing.assert_array_equal(idx.numpy(), ref_i.numpy())


def test_adaptive_gradients():
    x = t64(RNG.standard_normal((2, 2, 7, 5)), True)
    assert gradcheck(lambda a: F.adaptive_avg_pool2d(a, (3, 2)), (x,))
    assert gradcheck(lambda a: F.adaptive_max_pool2d(a, (3, 4)), (x,))
    assert gradcheck(lambda a: F.adaptive_avg_pool2d(a, 1), (x,))
    x3 = t64(RNG.standard_normal((1, 2, 4, 5, 3)), True)
    assert gradcheck(lambda a: F.adaptive_avg_pool3d(a, (2, 3, 2)), (x3,))


def test_adaptive_3d_matches_torch():
    x = RNG.standard_normal((1, 2, 5, 6, 7))
    close(F.adaptive_avg_pool3d(t64(x), (2, 4, 3)), TF.adaptive_avg_pool3d(th(x), (2, 4, 3)))
    close(F.adaptive_max_pool3d(t64(x), (2, 4, 3)), TF.adaptive_max_pool3d(th(x), (2, 4, 3)))


# ---- lp pool, unpool ------------------------------------------------------------------------
def test_lp_pool_matches_torch():
    x = np.abs(RNG.standard_normal((2, 3, 8, 7))) + 0.1
    close(F.lp_pool2d(t64(x), 2, 2), TF.lp_pool2d(th(x), 2, 2), 1e-10)
    close(nn.LPPool2d(3, (2, 3), 2)(t64(x)), torch.nn.LPPool2d(3, (2, 3), 2)(th(x)), 1e-10)
    x1 = x[:, :, 0]
    close(F.lp_pool1d(t64(x1), 2, 3, 2), TF.lp_pool1d(th(x1), 2, 3, 2), 1e-10)


@pytest.mark.parametrize("kernel,stride,padding", [(2, None, 0), (3, 2, 1)])
def test_max_unpool_matches_torch(kernel, stride, padding):
    x = RNG.standard_normal((2, 3, 8, 7))
    out, idx = F.max_pool2d(t64(x), kernel, stride, padding, return_indices=True)
    ref, ref_i = TF.max_pool2d(th(x), kernel, stride, padding, return_indices=True)
    close(F.max_unpool2d(out, idx, kernel, stride, padding, (2, 3, 8, 7)),
          TF.max_unpool2d(ref, ref_i, kernel, stride, padding, (2, 3, 8, 7)))
    with pytest.raises(RuntimeError, match="invalid max index"):   # default size is smaller
        F.max_unpool2d(out, idx, kernel, stride, padding)
    close(nn.MaxUnpool2d(kernel, stride, padding)(out, idx, output_size=(8, 7)),
          TF.max_unpool2d(ref, ref_i, kernel, stride, padding, output_size=(8, 7)))
    x1 = RNG.standard_normal((2, 3, 8))
    o1, i1 = F.max_pool1d(t64(x1), 2, return_indices=True)
    r1, ri1 = TF.max_pool1d(th(x1), 2, return_indices=True)
    close(F.max_unpool1d(o1, i1, 2), TF.max_unpool1d(r1, ri1, 2))


# ---- errors and reprs ---------------------------------------------------------------------------
def test_pool_errors():
    x = tensorlib.randn(2, 3, 5, 5)
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool2d(x, 3, padding=2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.max_pool2d(x, 7)
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.avg_pool2d(x, 3, padding=2)
    with pytest.raises(RuntimeError):
        F.max_pool2d(x, 0)
    with pytest.raises(RuntimeError, match="stride should not be zero"):
        F.max_pool2d(x, 2, 0)
    with pytest.raises(RuntimeError, match="output_size must be 2"):
        F.adaptive_avg_pool2d(x, (2,))
    with pytest.raises(RuntimeError):
        F.max_pool2d(tensorlib.randn(5), 2)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        F.avg_pool2d(x, 2, divisor_override=0)


@pytest.mark.parametrize("expr", [
    "MaxPool2d(2)", "MaxPool1d(3, 2, 1, 2, True, True)", "MaxPool2d((3, 2), (1, 2), 1)",
    "AvgPool2d(2)", "AvgPool1d(3, 2, 1, True, False)", "AvgPool2d(3, divisor_override=2)",
    "AdaptiveAvgPool2d((2, 3))", "AdaptiveMaxPool2d(2, True)", "AdaptiveAvgPool1d(3)",
    "AdaptiveMaxPool1d(4)", "MaxUnpool2d(2)", "MaxUnpool1d(3, 2, 1)", "LPPool2d(2, 3)",
    "MaxPool3d(2)", "AvgPool3d(2)", "AdaptiveAvgPool3d(1)"])
def test_pool_reprs(expr):
    assert repr(eval("nn." + expr)) == repr(eval("torch.nn." + expr))
    assert list(eval("nn." + expr).state_dict()) == []
