"""Convolutions (F.conv1d/2d/3d, conv_transpose1d/2d/3d, unfold/fold and the modules): forward
against PyTorch over grids of stride/padding/dilation/groups/padding_mode, gradients by
gradcheck/gradgradcheck in float64, errors, state_dict/repr/init. Every conv2d test runs twice:
on the decomposition into primitives and on the CPU backend's composite kernels."""
import itertools
import math
import warnings

import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(7)
CONV2D_OPS = ("conv2d", "conv2d_weight_grad", "conv_transpose2d")


@pytest.fixture(params=["composite", "cpu_kernel"])
def impl(request):
    """Run on the decomposition (no kernel registered) or on the CPU composite kernels."""
    from tensorlib._C.dispatch import table
    t = table("cpu")
    saved = {k: t[k] for k in CONV2D_OPS if k in t}
    if request.param == "composite":
        for k in CONV2D_OPS:
            t.pop(k, None)
    else:
        kernels = pytest.importorskip("tensorlib_cpu.conv_kernels")
        t.update(kernels.KERNELS)
    yield request.param
    for k in CONV2D_OPS:
        t.pop(k, None)
    t.update(saved)


def t64(a, requires_grad=False):
    return tensorlib.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def th(a):
    return torch.tensor(np.asarray(a, dtype=np.float64))


def close(ours, ref, tol=1e-10):
    np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=tol, atol=tol)


# ---- F.conv2d forward grid ------------------------------------------------------------------
GRID_2D = list(itertools.product([1, 2, (2, 1)], [0, 1, (2, 0)], [1, 2], [1, 2]))


@pytest.mark.parametrize("stride,padding,dilation,groups", GRID_2D)
def test_conv2d_matches_torch(impl, stride, padding, dilation, groups):
    x = RNG.standard_normal((2, 4, 9, 8))
    w = RNG.standard_normal((6, 4 // groups, 3, 2))
    b = RNG.standard_normal(6)
    ours = F.conv2d(t64(x), t64(w), t64(b), stride, padding, dilation, groups)
    ref = TF.conv2d(th(x), th(w), th(b), stride, padding, dilation, groups)
    assert tuple(ours.shape) == tuple(ref.shape)
    close(ours, ref)
    assert ours.is_contiguous()


@pytest.mark.parametrize("padding", ["same", "valid"])
@pytest.mark.parametrize("kernel,dilation", [((3, 3), 1), ((4, 2), 1), ((2, 3), (2, 3)),
                                             ((1, 4), 2)])
def test_conv2d_padding_strings(impl, padding, kernel, dilation):
    x = RNG.standard_normal((2, 3, 9, 10))
    w = RNG.standard_normal((4, 3) + kernel)
    ours = F.conv2d(t64(x), t64(w), None, 1, padding, dilation)
    with warnings.catch_warnings():        # torch warns about its padded copy
        warnings.simplefilter("ignore")
        ref = TF.conv2d(th(x), th(w), None, 1, padding, dilation)
    close(ours, ref)
    if padding == "same":
        assert ours.shape[2:] == x.shape[2:]


def test_conv2d_float32_and_noncontiguous(impl):
    x = RNG.standard_normal((3, 8, 7, 2)).astype(np.float32)
    w = RNG.standard_normal((5, 2, 3, 3)).astype(np.float32)
    xt = tensorlib.tensor(x).permute(0, 3, 1, 2)      # (3, 2, 8, 7), non-contiguous
    ours = F.conv2d(xt, tensorlib.tensor(w), padding=1, stride=(1, 2))
    ref = TF.conv2d(torch.tensor(x).permute(0, 3, 1, 2), torch.tensor(w), padding=1,
                    stride=(1, 2))
    assert ours.dtype == tensorlib.float32
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)


def test_conv2d_unbatched(impl):
    x = RNG.standard_normal((3, 6, 6))
    w = RNG.standard_normal((2, 3, 3, 3))
    ours = F.conv2d(t64(x), t64(w), padding=1)
    assert ours.shape == (2, 6, 6)
    close(ours, TF.conv2d(th(x), th(w), padding=1))


@pytest.mark.parametrize("stride,padding,dilation,groups", [(1, 0, 1, 1), (2, 1, 1, 2),
                                                            (3, 2, 2, 1), (1, "same", 2, 2)])
def test_conv1d_matches_torch(stride, padding, dilation, groups):
    x = RNG.standard_normal((3, 4, 11))
    w = RNG.standard_normal((6, 4 // groups, 3))
    b = RNG.standard_normal(6)
    close(F.conv1d(t64(x), t64(w), t64(b), stride, padding, dilation, groups),
          TF.conv1d(th(x), th(w), th(b), stride, padding, dilation, groups))
    close(F.conv1d(t64(x[0]), t64(w), t64(b), stride, padding, dilation, groups),
          TF.conv1d(th(x[0]), th(w), th(b), stride, padding, dilation, groups))


@pytest.mark.parametrize("stride,padding,dilation,groups", [(1, 0, 1, 1), (2, 1, 1, 2),
                                                            ((1, 2, 1), (0, 1, 2), 2, 1)])
def test_conv3d_matches_torch(stride, padding, dilation, groups):
    x = RNG.standard_normal((2, 2, 6, 7, 6))
    w = RNG.standard_normal((4, 2 // groups, 2, 3, 2))
    b = RNG.standard_normal(4)
    close(F.conv3d(t64(x), t64(w), t64(b), stride, padding, dilation, groups),
          TF.conv3d(th(x), th(w), th(b), stride, padding, dilation, groups))


# ---- transposed ------------------------------------------------------------------------------
GRID_T = [(1, 0, 0, 1, 1), (2, 0, 1, 1, 1), (2, 1, 1, 2, 1), (3, 1, 2, 1, 3),
          ((2, 1), (1, 0), (1, 0), 1, (1, 2)), (1, 2, 0, 2, 2)]


@pytest.mark.parametrize("stride,padding,output_padding,groups,dilation", GRID_T)
def test_conv_transpose2d_matches_torch(impl, stride, padding, output_padding, groups,
                                        dilation):
    x = RNG.standard_normal((2, 4, 5, 6))
    w = RNG.standard_normal((4, 6 // groups, 3, 2))
    b = RNG.standard_normal(6)
    ours = F.conv_transpose2d(t64(x), t64(w), t64(b), stride, padding, output_padding, groups,
                              dilation)
    ref = TF.conv_transpose2d(th(x), th(w), th(b), stride, padding, output_padding, groups,
                              dilation)
    assert tuple(ours.shape) == tuple(ref.shape)
    close(ours, ref)


@pytest.mark.parametrize("stride,padding,output_padding,groups,dilation",
                         [(1, 0, 0, 1, 1), (2, 1, 1, 2, 1), (3, 0, 1, 1, 2)])
def test_conv_transpose1d_matches_torch(stride, padding, output_padding, groups, dilation):
    x = RNG.standard_normal((2, 4, 7))
    w = RNG.standard_normal((4, 3, 3))
    b = RNG.standard_normal(3 * groups)
    close(F.conv_transpose1d(t64(x), t64(w), t64(b), stride, padding, output_padding, groups,
                             dilation),
          TF.conv_transpose1d(th(x), th(w), th(b), stride, padding, output_padding, groups,
                              dilation))


def test_conv_transpose3d_matches_torch():
    x = RNG.standard_normal((1, 2, 3, 4, 3))
    w = RNG.standard_normal((2, 3, 2, 2, 3))
    close(F.conv_transpose3d(t64(x), t64(w), None, 2, 1, 1),
          TF.conv_transpose3d(th(x), th(w), None, 2, 1, 1))


# ---- gradients --------------------------------------------------------------------------------
@pytest.mark.parametrize("stride,padding,dilation,groups", [(1, 0, 1, 1), (2, 1, (1, 2), 2),
                                                            (1, "same", (2, 1), 1)])
def test_conv2d_gradcheck(impl, stride, padding, dilation, groups):
    x = t64(RNG.standard_normal((2, 4, 5, 6)), True)
    w = t64(RNG.standard_normal((4, 4 // groups, 2, 3)), True)
    b = t64(RNG.standard_normal(4), True)
    assert gradcheck(lambda a, c, d: F.conv2d(a, c, d, stride, padding, dilation, groups),
                     (x, w, b))


def test_conv2d_gradgradcheck(impl):
    x = t64(RNG.standard_normal((2, 2, 4, 5)), True)
    w = t64(RNG.standard_normal((4, 1, 2, 3)), True)
    assert gradgradcheck(lambda a, c: F.conv2d(a, c, None, (2, 1), 1, 1, 2), (x, w))


def test_conv2d_grads_match_torch(impl):
    x = RNG.standard_normal((3, 4, 8, 7)).astype(np.float32)
    w = RNG.standard_normal((6, 2, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(6).astype(np.float32)
    g = RNG.standard_normal((3, 6, 4, 4)).astype(np.float32)
    ins = [tensorlib.tensor(a, requires_grad=True) for a in (x, w, b)]
    refs = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    F.conv2d(*ins, stride=2, padding=1, groups=2).backward(tensorlib.tensor(g))
    TF.conv2d(*refs, stride=2, padding=1, groups=2).backward(torch.tensor(g))
    for a, r in zip(ins, refs):
        np.testing.assert_allclose(a.grad.numpy(), r.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_conv_transpose2d_gradcheck(impl):
    x = t64(RNG.standard_normal((2, 4, 3, 4)), True)
    w = t64(RNG.standard_normal((4, 1, 3, 2)), True)
    b = t64(RNG.standard_normal(2), True)
    fn = lambda a, c, d: F.conv_transpose2d(a, c, d, 2, 1, 1, 2, 1)  # noqa: E731
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_conv1d_conv3d_transpose1d_gradcheck():
    x = t64(RNG.standard_normal((2, 2, 7)), True)
    w = t64(RNG.standard_normal((3, 2, 3)), True)
    assert gradcheck(lambda a, c: F.conv1d(a, c, None, 2, 1, 2), (x, w))
    wt = t64(RNG.standard_normal((2, 3, 3)), True)
    assert gradcheck(lambda a, c: F.conv_transpose1d(a, c, None, 2, 1, 1), (x, wt))
    x3 = t64(RNG.standard_normal((1, 2, 3, 4, 3)), True)
    w3 = t64(RNG.standard_normal((2, 1, 2, 2, 2)), True)
    assert gradcheck(lambda a, c: F.conv3d(a, c, None, 1, 1, 1, 2), (x3, w3))


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv_module_padding_modes_gradcheck(mode):
    m = nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=mode).double()
    x = t64(RNG.standard_normal((1, 2, 4, 5)), True)
    assert gradcheck(m, (x,))


# ---- modules ---------------------------------------------------------------------------------
def _torch_copy(ours, ref):
    with torch.no_grad():
        for name, p in ours.named_parameters():
            getattr(ref, name).copy_(torch.tensor(p.detach().numpy()))


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [1, (2, 1), "same", "valid"])
def test_conv2d_module_matches_torch(impl, mode, padding):
    kw = dict(padding=padding, padding_mode=mode, dilation=(1, 2))
    ours = nn.Conv2d(4, 6, (3, 2), groups=2, **kw).double()
    ref = torch.nn.Conv2d(4, 6, (3, 2), groups=2, **kw).double()
    _torch_copy(ours, ref)
    x = RNG.standard_normal((2, 4, 7, 8))
    close(ours(t64(x)), ref(th(x)))


@pytest.mark.parametrize("cls,dims", [("Conv1d", 1), ("Conv2d", 2), ("Conv3d", 3)])
def test_conv_modules_state_repr_init(cls, dims):
    ours = getattr(nn, cls)(4, 6, 3, stride=2, padding=1, groups=2)
    ref = getattr(torch.nn, cls)(4, 6, 3, stride=2, padding=1, groups=2)
    assert repr(ours) == repr(ref)
    assert list(ours.state_dict()) == ["weight", "bias"]
    assert tuple(ours.weight.shape) == tuple(ref.weight.shape)
    bound = 1 / math.sqrt(2 * 3 ** dims)
    w = ours.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.5 * bound
    assert np.abs(ours.bias.detach().numpy()).max() <= bound
    nb = getattr(nn, cls)(2, 2, 1, bias=False)
    assert nb.bias is None and list(nb.state_dict()) == ["weight"]
    assert repr(nb) == repr(getattr(torch.nn, cls)(2, 2, 1, bias=False))


@pytest.mark.parametrize("args,kwargs", [
    ((3, 4, 3), {}),
    ((4, 4, (3, 5)), dict(stride=2, padding=1, dilation=2, groups=2, bias=False,
                          padding_mode="reflect")),
    ((3, 4, 2), dict(padding="same")),
    ((3, 4, 2), dict(padding="valid", padding_mode="circular")),
])
def test_conv2d_repr(args, kwargs):
    assert repr(nn.Conv2d(*args, **kwargs)) == repr(torch.nn.Conv2d(*args, **kwargs))


@pytest.mark.parametrize("kwargs", [dict(), dict(stride=2, output_padding=1),
                                    dict(stride=2, padding=1, groups=2, dilation=2,
                                         bias=False)])
def test_conv_transpose_modules(impl, kwargs):
    ours = nn.ConvTranspose2d(4, 6, 3, **kwargs).double()
    ref = torch.nn.ConvTranspose2d(4, 6, 3, **kwargs).double()
    assert repr(ours) == repr(ref)
    assert tuple(ours.weight.shape) == tuple(ref.weight.shape)
    assert list(ours.state_dict()) == list(ref.state_dict())
    _torch_copy(ours, ref)
    x = RNG.standard_normal((2, 4, 5, 4))
    close(ours(t64(x)), ref(th(x)))
    o1 = nn.ConvTranspose1d(4, 2, 3, stride=2)
    assert repr(o1) == repr(torch.nn.ConvTranspose1d(4, 2, 3, stride=2))
    assert ours.transposed and not nn.Conv2d(1, 1, 1).transposed


def test_conv_transpose_output_size(impl):
    ours = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1).double()
    ref = torch.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1).double()
    _torch_copy(ours, ref)
    x = RNG.standard_normal((1, 2, 4, 4))
    out = ours(t64(x), output_size=[8, 8])
    assert out.shape == (1, 3, 8, 8)
    close(out, ref(th(x), output_size=[8, 8]))
    assert ours(t64(x), output_size=(1, 3, 7, 8)).shape == (1, 3, 7, 8)
    with pytest.raises(ValueError):
        ours(t64(x), output_size=[10, 10])


def test_conv_module_backward_and_dtype():
    m = nn.Conv2d(1, 2, 3)
    x = tensorlib.randn(2, 1, 5, 5)
    m(x).sum().backward()
    assert m.weight.grad.shape == (2, 1, 3, 3) and m.bias.grad.shape == (2,)
    np.testing.assert_allclose(m.bias.grad.numpy(), [18.0, 18.0])
    assert m.weight.dtype == tensorlib.float32
    assert nn.Conv2d(1, 2, 3, dtype=tensorlib.float64).weight.dtype == tensorlib.float64


# ---- errors -----------------------------------------------------------------------------------
def _err(fn, exc, match=None):
    with pytest.raises(exc, match=match):
        fn()


def test_conv_errors():
    x = tensorlib.randn(2, 3, 5, 5)
    _err(lambda: F.conv2d(x, tensorlib.randn(4, 2, 3, 3)), RuntimeError,
         r"expected input\[2, 3, 5, 5\] to have 2 channels, but got 3 channels")
    _err(lambda: F.conv2d(x, tensorlib.randn(4, 3, 3, 3), padding="foo"), RuntimeError,
         "Invalid padding string: 'foo'")
    _err(lambda: F.conv2d(x, tensorlib.randn(4, 3, 3, 3), padding="same", stride=2),
         RuntimeError, "not supported for strided")
    _err(lambda: F.conv2d(x, tensorlib.randn(4, 3, 7, 7)), RuntimeError,
         "Kernel size can't be greater than actual input size")
    _err(lambda: F.conv2d(x, tensorlib.randn(4, 3, 3, 3, dtype=tensorlib.float64)),
         RuntimeError, "should be the same")
    _err(lambda: F.conv2d(x[0, 0], tensorlib.randn(4, 3, 3, 3)), RuntimeError,
         "Expected 3D \\(unbatched\\) or 4D \\(batched\\) input to conv2d")
    _err(lambda: F.conv2d(x, tensorlib.randn(4, 3, 3, 3), stride=0), RuntimeError,
         "non-positive stride")
    _err(lambda: F.conv2d(x, tensorlib.randn(4, 3, 3, 3), padding=-1), RuntimeError,
         "negative padding")
    _err(lambda: F.conv2d(x, tensorlib.randn(4, 3, 3, 3), bias=tensorlib.randn(3)),
         RuntimeError, "expected bias to be 1-dimensional with 4 elements")
    _err(lambda: F.conv_transpose2d(x, tensorlib.randn(3, 2, 3, 3), stride=2,
                                    output_padding=2), RuntimeError,
         "output padding must be smaller than either stride or dilation")
    _err(lambda: F.conv_transpose2d(x, tensorlib.randn(4, 2, 3, 3)), RuntimeError,
         "Given transposed=1")
    _err(lambda: F.conv2d([1.0], tensorlib.randn(4, 3, 3, 3)), TypeError)
    _err(lambda: nn.Conv2d(3, 4, 3, groups=2), ValueError, "in_channels must be divisible")
    _err(lambda: nn.Conv2d(4, 3, 3, groups=2), ValueError, "out_channels must be divisible")
    _err(lambda: nn.Conv2d(4, 4, 3, padding="foo"), ValueError, "Invalid padding string")
    _err(lambda: nn.Conv2d(4, 4, 3, padding="same", stride=2), ValueError,
         "not supported for strided")
    _err(lambda: nn.Conv2d(4, 4, 3, padding_mode="bad"), ValueError, "padding_mode must be")
    _err(lambda: nn.ConvTranspose2d(4, 4, 3, padding_mode="reflect"), ValueError,
         'Only "zeros" padding mode')


# ---- unfold / fold ---------------------------------------------------------------------------
@pytest.mark.parametrize("kernel,dilation,padding,stride", [
    (2, 1, 0, 1), ((2, 3), (1, 2), 1, 2), (3, 2, (1, 0), (1, 2))])
def test_unfold_fold_match_torch(kernel, dilation, padding, stride):
    x = RNG.standard_normal((2, 3, 8, 9))
    ours = F.unfold(t64(x), kernel, dilation, padding, stride)
    ref = TF.unfold(th(x), kernel, dilation, padding, stride)
    close(ours, ref)
    close(nn.Unfold(kernel, dilation, padding, stride)(t64(x)), ref)
    cols = RNG.standard_normal(tuple(ref.shape))
    close(F.fold(t64(cols), (8, 9), kernel, dilation, padding, stride),
          TF.fold(th(cols), (8, 9), kernel, dilation, padding, stride))
    close(nn.Fold((8, 9), kernel, dilation, padding, stride)(t64(cols[0])),
          TF.fold(th(cols[0]), (8, 9), kernel, dilation, padding, stride))
    xg = t64(x[:1, :2, :5, :6], True)
    assert gradcheck(lambda a: F.unfold(a, kernel, dilation, padding, stride), (xg,))
    cg = F.unfold(xg, kernel, dilation, padding, stride).detach().requires_grad_()
    assert gradcheck(lambda a: F.fold(a, (5, 6), kernel, dilation, padding, stride), (cg,))


def test_fold_unfold_errors_and_repr():
    _err(lambda: F.unfold(tensorlib.randn(5, 5), 2), NotImplementedError)
    _err(lambda: F.fold(tensorlib.randn(2, 5, 4), (3, 3), 2), RuntimeError,
         "divisible by the product of kernel_size")
    _err(lambda: F.fold(tensorlib.randn(2, 8, 5), (3, 3), 2), RuntimeError,
         "match the calculated number of sliding blocks")
    assert repr(nn.Fold((4, 5), 2)) == repr(torch.nn.Fold((4, 5), 2))
    assert repr(nn.Unfold(2, stride=2)) == repr(torch.nn.Unfold(2, stride=2))


# ---- kernel vs decomposition -------------------------------------------------------------------
def test_cpu_kernels_agree_with_decomposition():
    kernels = pytest.importorskip("tensorlib_cpu.conv_kernels")
    from tensorlib._C.dispatch import table
    t = table("cpu")
    x = tensorlib.randn(5, 4, 9, 7, requires_grad=True)
    w = tensorlib.randn(6, 2, 3, 2, requires_grad=True)
    results = []
    saved = {k: t[k] for k in CONV2D_OPS if k in t}
    try:
        for use in (False, True):
            for k in CONV2D_OPS:
                t.pop(k, None)
            if use:
                t.update(kernels.KERNELS)
            x.grad = w.grad = None
            out = F.conv2d(x, w, None, (2, 1), 1, (1, 2), 2)
            (out * out).sum().backward()
            results.append((out.detach().numpy(), x.grad.numpy(), w.grad.numpy()))
    finally:
        for k in CONV2D_OPS:
            t.pop(k, None)
        t.update(saved)
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
