"""The CPU's pad and flip kernels (remap_kernels.pyx) against torch: every pad mode with
negative pads, every element size, strided inputs, outputs large enough to split over threads
by rows and (1-D) by columns, NaN and inf bits kept, the constant's conversion, gradients."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib_cpu import remap_kernels

torch = pytest.importorskip("torch")
TF = torch.nn.functional

MODES = ["constant", "reflect", "replicate", "circular"]


def _pair(a, view=None):
    ours, theirs = tl.tensor(a), torch.tensor(a)
    return (ours, theirs) if view is None else (view(ours), view(theirs))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape,pads", [((8, 64, 32, 32), (1, 1, 1, 1)),
                                        ((2, 300, 257), (3, 0, -2, 5)),
                                        ((4, 70000), (5, -7)), ((3, 5, 6), (-2, 4, 2, -3))])
@pytest.mark.parametrize("strided", [False, True])
def test_pad_modes_match_torch(mode, shape, pads, strided):
    """Large outputs (threads over rows), a last dim of 70000 under few rows (threads over
    columns), negative pads that crop, and inputs read through strides."""
    a = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    view = (lambda t: t.transpose(-1, -2).contiguous().transpose(-1, -2)) if strided else None
    ours, theirs = _pair(a, view)
    want = TF.pad(theirs, pads, mode=mode, value=-1.5 if mode == "constant" else None)
    got = F.pad(ours, pads, mode=mode, value=-1.5 if mode == "constant" else None)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 1), (0, 2), (2,), (0, 1, 2)])
@pytest.mark.parametrize("strided", [False, True])
def test_flip_matches_torch_large(dims, strided):
    a = np.random.default_rng(5).standard_normal((40, 50, 60))
    view = (lambda t: t.permute(2, 0, 1)) if strided else None
    ours, theirs = _pair(a, view)
    np.testing.assert_array_equal(ours.flip(dims).numpy(), theirs.flip(dims).numpy())


def test_flip_and_pad_of_a_long_vector():
    """One row of 2^20: the threads split its columns."""
    a = np.random.default_rng(6).standard_normal(1 << 20).astype(np.float32)
    ours, theirs = _pair(a)
    np.testing.assert_array_equal(ours.flip(0).numpy(), theirs.flip(0).numpy())
    for mode in MODES:
        np.testing.assert_array_equal(F.pad(ours, (7, 3), mode=mode).numpy(),
                                      TF.pad(theirs[None], (7, 3), mode=mode)[0].numpy())


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "float16", "bfloat16", "int32",
                                   "float64", "int64", "complex64", "complex128"])
def test_every_element_size(dtype):
    """1 to 16 bytes an element; a float constant into integers truncates, as torch (which
    has no replicate pad of bool: circular there)."""
    a = (np.random.default_rng(7).standard_normal((3, 70, 400)) * 50)
    value = True if dtype == "bool" else 3.75
    mode = "circular" if dtype == "bool" else "replicate"
    t = torch.tensor(a).to(getattr(torch, dtype))
    ours = tl.tensor(t.float().numpy() if dtype == "bfloat16" else t.numpy())
    ours = ours.to(getattr(tl, dtype))
    cases = [(lambda x: x.flip(0, 2)), (lambda x: x.flip(1)),
             (lambda x, m=F: m.pad(x, (2, 1, 1, 3), value=value)),
             (lambda x, m=F: m.pad(x, (2, 1, 1, 3), mode=mode))]
    for ours_fn, theirs_fn in zip(cases, [cases[0], cases[1],
                                          lambda x: TF.pad(x, (2, 1, 1, 3), value=value),
                                          lambda x: TF.pad(x, (2, 1, 1, 3), mode=mode)]):
        got, want = ours_fn(ours), theirs_fn(t)
        assert got.dtype == getattr(tl, dtype)
        if dtype == "bfloat16":
            got, want = got.float(), want.float()
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_bool_reflect_and_replicate_raise_as_torch():
    for mode in ("reflect", "replicate"):
        for pads in ((1, 1), (1, 1, 1, 1)):
            with pytest.raises(NotImplementedError) as theirs:
                TF.pad(torch.zeros(2, 3, 4, dtype=torch.bool), pads, mode=mode)
            with pytest.raises(NotImplementedError) as ours:
                F.pad(tl.zeros(2, 3, 4, dtype=tl.bool), pads, mode=mode)
            assert str(ours.value) == str(theirs.value)


def test_special_values_and_constant_conversion():
    """NaN and inf move bit for bit; a NaN constant fills floats; a float constant into an
    integer dtype truncates toward zero."""
    a = np.array([[np.nan, -np.inf, 1.0], [np.inf, -0.0, 2.0]])
    ours, theirs = _pair(a)
    np.testing.assert_array_equal(F.pad(ours, (1, 2), value=float("nan")).numpy(),
                                  TF.pad(theirs, (1, 2), value=float("nan")).numpy())
    got = ours.flip(1).numpy()
    assert np.signbit(got[1, 1]) and np.isnan(got[0, 2]) and got[0, 1] == -np.inf
    i8, ti8 = tl.tensor([[1, 2]], dtype=tl.int8), torch.tensor([[1, 2]], dtype=torch.int8)
    for value in (-2.9, 7.5, 127):
        np.testing.assert_array_equal(F.pad(i8, (1, 1), value=value).numpy(),
                                      TF.pad(ti8, (1, 1), value=value).numpy())


@pytest.mark.parametrize("mode", MODES)
def test_pad_and_flip_gradients(mode):
    """gradcheck in float64, and a large gradient against torch's (the constant pad's
    backward is a crop: the kernel again)."""
    x = tl.tensor(np.random.default_rng(8).standard_normal((2, 3, 5)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: F.pad(t, (2, 1, -1, 2), mode=mode), (x,))
    assert tl.autograd.gradcheck(lambda t: t.flip(0, 2), (x,))
    a = np.random.default_rng(9).standard_normal((4, 64, 30, 30))
    g = np.random.default_rng(10).standard_normal((4, 64, 32, 33))
    grads = []
    for lib, pad in ((tl, F.pad), (torch, TF.pad)):
        t = lib.tensor(a, requires_grad=True)
        pad(t.flip(1), (1, 2, 1, 1), mode=mode).backward(lib.tensor(g))
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)


def test_kernels_decline_what_they_do_not_handle():
    """A strided output or a dtype mismatch: False, nothing written (ops then compose)."""
    x = tl.ones(4, 6)
    out = tl.zeros(6, 4).t()
    assert remap_kernels.flip(out, x, (0,)) is False
    assert remap_kernels.pad(tl.zeros(4, 8, dtype=tl.float64), x, (1, 1), "constant", 0) is False
    assert out.abs().sum().item() == 0


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pads", [((8, 64, 30, 30), (2, 1, 1, 2)), ((70000,), (3, 2)),
                                        ((5, 6, 7, 8), (1, 2, 2, 1, 3, 0)),
                                        ((3, 9, 300), (-2, 4))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pad_backward_kernel_matches_torch(mode, shape, pads, dtype):
    """The adjoint kernel: threads over a kept first dim, one thread when the first dim is
    padded (its rows share input rows), a 1-D input, a cropping pad; the gradient of a sum
    (one value everywhere) and of a dense grad."""
    a = np.random.default_rng(11).standard_normal(shape).astype(dtype)
    if mode == "circular" and min(pads) < 0:
        pytest.skip("torch reads uninitialized memory for a circular pad that crops")
    batched = len(shape) == 1
    out_shape = TF.pad(torch.tensor(a)[None] if batched else torch.tensor(a), pads,
                       mode=mode).shape
    g = np.random.default_rng(12).standard_normal(tuple(out_shape)).astype(dtype)
    grads = []
    for lib, fn in ((tl, F.pad), (torch, TF.pad)):
        t = lib.tensor(a, requires_grad=True)
        out = fn(t[None] if batched and lib is torch else t, pads, mode=mode)
        out = out[0] if batched and lib is torch else out
        out.backward(lib.tensor(g[0] if batched else g))
        grads.append(t.grad.numpy())
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(grads[0], grads[1], rtol=tol, atol=tol)
    x = tl.tensor(a)
    gx = tl.empty(*shape, dtype=x.dtype)
    assert remap_kernels.pad_backward(gx, tl.tensor(g[0] if batched else g), pads, mode)
    np.testing.assert_allclose(gx.numpy(), grads[1], rtol=tol, atol=tol)


def test_pad_backward_declines_16_bit():
    gx = tl.empty(2, 5, dtype=tl.float16)
    assert remap_kernels.pad_backward(gx, tl.ones(2, 7, dtype=tl.float16), (1, 1),
                                      "reflect") is False
    x = tl.ones(2, 5, dtype=tl.float16, requires_grad=True)
    F.pad(x, (1, 1), mode="reflect").sum().backward()
    assert x.grad.tolist() == [[1.0, 2.0, 1.0, 2.0, 1.0]] * 2
