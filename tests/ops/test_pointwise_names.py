"""torch's elementwise names that were missing (divide, multiply, subtract, fix, sgn, signbit,
fmax, fmin, deg2rad, rad2deg, ravel, xlogy_) against torch: values, dtypes, NaN handling,
in-place variants and gradients."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck

torch = pytest.importorskip("torch")

SPECIAL = [1.5, -2.0, 0.0, -0.0, float("nan"), float("inf"), -float("inf"), 3.0]


def _pair(dtype, device):
    a = np.array(SPECIAL, dtype=dtype)
    b = np.array([1.5, float("nan"), -0.0, 0.0, 2.0, float("nan"), 1.0, 3.0], dtype=dtype)
    return (tl.tensor(a, device=device), tl.tensor(b, device=device), torch.tensor(a),
            torch.tensor(b))


def _same(got, want):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    wide = np.complex128 if want.is_complex() else np.float64
    np.testing.assert_allclose(got.cpu().numpy().astype(wide), want.numpy().astype(wide),
                               rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", ["fmax", "fmin"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fmax_fmin_ignore_one_nan(device, name, dtype):
    a, b, ta, tb = _pair(dtype, device)
    _same(getattr(tl, name)(a, b), getattr(torch, name)(ta, tb))
    _same(getattr(a, name)(b), getattr(ta, name)(tb))


def test_fmax_promotes_and_broadcasts(device):
    a = tl.tensor([[1, 5, -3]], device=device)
    b = tl.tensor([[2.5], [float("nan")]], device=device)
    _same(tl.fmax(a, b), torch.fmax(torch.tensor([[1, 5, -3]]),
                                    torch.tensor([[2.5], [float("nan")]])))
    _same(tl.fmin(a, a), torch.fmin(torch.tensor([[1, 5, -3]]), torch.tensor([[1, 5, -3]])))
    with pytest.raises(TypeError):
        tl.fmax(a, 1.0)


def test_fmax_fmin_gradients_go_to_the_one_chosen():
    a = tl.tensor([1.0, 2.0, 3.0, 4.0], dtype=tl.float64, requires_grad=True)
    b = tl.tensor([0.5, 2.0, 5.0, 4.5], dtype=tl.float64, requires_grad=True)
    ta, tb = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (a, b))
    for name in ("fmax", "fmin"):
        getattr(tl, name)(a, b).sum().backward()
        getattr(torch, name)(ta, tb).sum().backward()
        np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())
        np.testing.assert_array_equal(b.grad.numpy(), tb.grad.numpy())
        a.grad = b.grad = ta.grad = tb.grad = None
    x = tl.tensor([0.3, -1.2, 2.0], dtype=tl.float64, requires_grad=True)
    y = tl.tensor([0.1, -0.7, 2.5], dtype=tl.float64, requires_grad=True)
    assert gradcheck(tl.fmax, [x, y]) and gradcheck(tl.fmin, [x, y])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "uint8", "bool"])
def test_sign_family_and_angles(device, dtype):
    values = SPECIAL if dtype.startswith("float") else [3, -2, 0, 1, -1, 0, 7, 2]
    a = np.array(values).astype(dtype)
    x, tx = tl.tensor(a, device=device), torch.tensor(a)
    for name in ("signbit", "sgn", "fix", "deg2rad", "rad2deg"):
        if dtype == "bool" and name in ("sgn", "fix"):
            continue
        if dtype == "uint8" and name == "fix":
            continue
        _same(getattr(tl, name)(x), getattr(torch, name)(tx))
        _same(getattr(x, name)(), getattr(tx, name)())
    _same(tl.ravel(x.reshape(2, 4).t()), torch.ravel(tx.reshape(2, 4).t()))
    _same(x.reshape(2, 4).ravel(), tx.reshape(2, 4).ravel())


def test_sgn_of_complex():
    z = np.array([3 + 4j, 0j, -2j, -1 + 0j], dtype=np.complex64)
    _same(tl.sgn(tl.tensor(z)), torch.sgn(torch.tensor(z)))


def test_aliases_with_their_keywords(device):
    a = np.array([7.0, -7.5, 3.0, -1.0], dtype=np.float32)
    b = np.array([2.0, 2.0, -2.0, 3.0], dtype=np.float32)
    x, y, tx, ty = (tl.tensor(a, device=device), tl.tensor(b, device=device), torch.tensor(a),
                    torch.tensor(b))
    for mode in (None, "trunc", "floor"):
        _same(tl.divide(x, y, rounding_mode=mode), torch.divide(tx, ty, rounding_mode=mode))
        _same(x.divide(y, rounding_mode=mode), tx.divide(ty, rounding_mode=mode))
    _same(tl.subtract(x, y, alpha=2), torch.subtract(tx, ty, alpha=2))
    _same(tl.subtract(x, 1.5), torch.subtract(tx, 1.5))
    _same(tl.multiply(x, y), torch.multiply(tx, ty))
    ints = tl.tensor([7, -7], device=device)
    _same(tl.divide(ints, tl.tensor([2, 2], device=device)),
          torch.divide(torch.tensor([7, -7]), torch.tensor([2, 2])))
    with pytest.raises(RuntimeError):
        tl.subtract(tl.tensor([True], device=device), tl.tensor([False], device=device))


def test_inplace_variants(device):
    a = np.array([7.0, -7.5, 0.25, -1.0], dtype=np.float32)
    b = np.array([2.0, 2.0, -2.0, 3.0], dtype=np.float32)
    for name, args in (("divide_", (b,)), ("multiply_", (b,)), ("subtract_", (b,)),
                       ("fix_", ()), ("sgn_", ()), ("deg2rad_", ()), ("rad2deg_", ()),
                       ("xlogy_", (np.abs(b),))):
        x, tx = tl.tensor(a, device=device), torch.tensor(a)
        out = getattr(x, name)(*(tl.tensor(v, device=device) for v in args))
        getattr(tx, name)(*(torch.tensor(v) for v in args))
        assert out is x
        _same(x, tx)
    x = tl.tensor(a, device=device)
    x.divide_(tl.tensor(b, device=device), rounding_mode="floor")
    _same(x, torch.tensor(a).divide_(torch.tensor(b), rounding_mode="floor"))
    x = tl.tensor(a, device=device)
    x.subtract_(tl.tensor(b, device=device), alpha=0.5)
    _same(x, torch.tensor(a).subtract_(torch.tensor(b), alpha=0.5))
    with pytest.raises(RuntimeError):
        tl.tensor([1, 2], device=device).deg2rad_()


def test_gradients():
    x = tl.tensor([0.3, -1.2, 2.0], dtype=tl.float64, requires_grad=True)
    y = tl.tensor([1.1, 0.7, -2.5], dtype=tl.float64, requires_grad=True)
    assert gradcheck(lambda a, b: tl.divide(a, b), [x, y])
    assert gradcheck(lambda a, b: tl.subtract(a, b, alpha=3), [x, y])
    assert gradcheck(tl.multiply, [x, y])
    assert gradcheck(tl.deg2rad, [x]) and gradcheck(tl.rad2deg, [x])
    assert gradcheck(lambda a: tl.ravel(a.reshape(3, 1).t()), [x])
    z = x.detach().clone().requires_grad_()
    tz = torch.tensor(z.detach().numpy(), requires_grad=True)
    (tl.sgn(z) * z + tl.fix(z * 2)).sum().backward()
    (torch.sgn(tz) * tz + torch.fix(tz * 2)).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), tz.grad.numpy())
