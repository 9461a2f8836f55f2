"""resample_kernels (interpolate's linear step along one dim in one pass): bit for bit the
composition's result, PyTorch's values and gradients for the linear modes, and the cases it
does not take (strided, float16, forward AD) through the composition."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib._C.factory import empty
from tensorlib.nn._functional.upsampling import _blend
from tensorlib_cpu import resample_kernels

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_kernel_equals_the_composition_bit_for_bit(dtype, axis):
    rng = np.random.default_rng(0)
    x = tl.from_numpy(rng.standard_normal((4, 5, 6)).astype(dtype))
    n = 7
    i0 = tl.from_numpy(rng.integers(0, x.shape[axis], n))
    i1 = tl.from_numpy(rng.integers(0, x.shape[axis], n))
    shape = [n] + [1] * (x.dim() - axis - 1)
    w0 = tl.from_numpy(rng.random(n).astype(dtype)).reshape(shape)
    w1 = tl.from_numpy(rng.random(n).astype(dtype)).reshape(shape)
    sizes = list(x.shape)
    sizes[axis] = n
    out = empty(tuple(sizes), x.dtype, x.device)
    assert resample_kernels.linear_resample(out, x, axis, i0, i1, w0, w1)
    assert np.array_equal(out.numpy(), _blend(x, axis, i0, i1, w0, w1).numpy())
    assert not resample_kernels.linear_resample(out, x.double() if dtype == np.float32
                                                else x.float(), axis, i0, i1, w0, w1)


CASES = [((2, 3, 8, 9), dict(scale_factor=2, mode="bilinear")),
         ((2, 3, 8, 9), dict(size=(5, 13), mode="bilinear", align_corners=True)),
         ((2, 3, 8, 9), dict(scale_factor=0.5, mode="bilinear")),
         ((2, 3, 10), dict(scale_factor=3, mode="linear")),
         ((1, 2, 4, 5, 6), dict(size=(7, 3, 8), mode="trilinear", align_corners=False)),
         ((8, 16, 32, 32), dict(scale_factor=2, mode="bilinear"))]


@pytest.mark.parametrize("shape,kwargs", CASES)
@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float64, 1e-12)])
def test_values_and_gradients_match_torch(shape, kwargs, dtype, tol):
    a = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    results = []
    for m in (tl, torch):
        x = m.from_numpy(a.copy()).requires_grad_()
        y = m.nn.functional.interpolate(x, **kwargs)
        (y * y).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol * 10)


def test_declined_layouts_and_double_backward_match_torch():
    a = np.random.default_rng(2).standard_normal((2, 3, 6, 7))
    results = []
    for m in (tl, torch):
        x = m.from_numpy(a.copy()).requires_grad_()
        strided = m.nn.functional.interpolate(x.transpose(2, 3), scale_factor=2,
                                              mode="bilinear")
        last = m.nn.functional.interpolate(x.to(memory_format=m.channels_last),
                                           size=(9, 4), mode="bilinear")
        y = m.nn.functional.interpolate(x, scale_factor=1.5, mode="bilinear")
        (gx,) = m.autograd.grad((y ** 2).sum() + strided.sum() + last.sum(), x,
                                create_graph=True)
        (gx ** 2).sum().backward()
        results.append((strided.detach().numpy(), last.detach().numpy(), x.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)


def test_float16_and_forward_ad_take_the_composition():
    import tensorlib.autograd.forward_ad as fwAD
    x = tl.randn(1, 2, 4, 4)
    half = F.interpolate(x.half(), scale_factor=2, mode="bilinear")
    np.testing.assert_allclose(half.float().numpy(),
                               F.interpolate(x, scale_factor=2, mode="bilinear").numpy(),
                               rtol=1e-2, atol=1e-2)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, tl.ones_like(x))
        tangent = fwAD.unpack_dual(F.interpolate(dual, scale_factor=2, mode="bilinear")).tangent
    np.testing.assert_allclose(tangent.numpy(), np.ones((1, 2, 8, 8)), rtol=1e-6)
