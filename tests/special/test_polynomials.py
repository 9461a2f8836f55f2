"""special's orthogonal polynomials (and spherical_bessel_j0, modified_bessel_i0/i1) against
torch.special: values over degrees 0..20 (past each closed-form switch) and x in and outside
[-1, 1] with the boundary points, degree tensors and numbers, dtypes, Hermite's NaN past its
limit, out=, and errors."""
import numpy as np
import pytest

import tensorlib
import tensorlib.special as S

torch = pytest.importorskip("torch")

NAMES = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w"]
X = np.concatenate([np.linspace(-1.3, 1.3, 27), [1.0, -1.0, 0.0, 0.5, 1e-9]])
N = np.arange(-2, 21, dtype=np.float64)


def _compare(got, want, rtol=1e-9):
    got, want = got.cpu().numpy(), want.numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=rtol, atol=1e-9 * np.abs(want[ok]).max(
        initial=1.0))


@pytest.mark.parametrize("name", NAMES)
def test_grid_matches_torch(device, name):
    x, n = np.meshgrid(X, N)
    got = getattr(S, name)(tensorlib.tensor(x, device=device), tensorlib.tensor(n, device=device))
    want = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n))
    assert got.dtype == tensorlib.float64 and got.device.type == tensorlib.device(device).type
    _compare(got, want)


@pytest.mark.parametrize("name", NAMES)
def test_number_operands_and_dtypes(name):
    fn, ref = getattr(S, name), getattr(torch.special, name)
    x32 = np.linspace(-0.9, 0.9, 7).astype(np.float32)
    _compare(fn(tensorlib.tensor(x32), 4), ref(torch.tensor(x32), 4), rtol=1e-5)
    got = fn(0.5, tensorlib.tensor([0, 3, 9]))
    want = ref(0.5, torch.tensor([0, 3, 9]))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    _compare(got, want, rtol=1e-5)
    ints = fn(tensorlib.tensor([1, 2]), tensorlib.tensor([2, 3]))
    assert ints.dtype == tensorlib.float32


def test_hermite_limit_is_nan_like_torch():
    for name in ("hermite_polynomial_h", "hermite_polynomial_he"):
        for dtype, limit in ((np.float32, 128), (np.float64, 512)):
            x = np.array([0.1, 0.1], dtype=dtype)
            n = np.array([limit, limit + 1], dtype=dtype)
            got = getattr(S, name)(tensorlib.tensor(x), tensorlib.tensor(n))
            want = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n))
            np.testing.assert_array_equal(np.isnan(got.numpy()), np.isnan(want.numpy()))


def test_out_and_no_graph():
    out = tensorlib.empty(0, dtype=tensorlib.float64)
    x = tensorlib.tensor([0.3, 0.7], dtype=tensorlib.float64, requires_grad=True)
    res = S.legendre_polynomial_p(x, 3, out=out)
    assert res is out and tuple(out.shape) == (2,)
    assert not S.chebyshev_polynomial_t(x, 3).requires_grad


@pytest.mark.parametrize("args", [(0.5, 3), ("half", 3)])
def test_errors_match_torch(args):
    def call(lib):
        x = lib.tensor([0.5], dtype=lib.float16) if args[0] == "half" else args[0]
        return lib.special.chebyshev_polynomial_t(x, args[1])
    with pytest.raises(Exception) as ref:
        call(torch)
    with pytest.raises(type(ref.value)):
        call(tensorlib)


def test_spherical_bessel_j0_matches_torch(device):
    x = np.concatenate([np.linspace(-20, 20, 81), [0.0, 0.49, -0.5, 1e-8, np.inf, -np.inf,
                                                   np.nan]])
    got = S.spherical_bessel_j0(tensorlib.tensor(x, device=device))
    _compare(got, torch.special.spherical_bessel_j0(torch.tensor(x)), rtol=1e-12)
    assert S.spherical_bessel_j0(tensorlib.tensor([1, 2])).dtype == tensorlib.float32
    with pytest.raises(NotImplementedError):
        S.spherical_bessel_j0(tensorlib.tensor([1.0], dtype=tensorlib.float16))


@pytest.mark.parametrize("name", ["modified_bessel_i0", "modified_bessel_i1"])
def test_modified_bessel_matches_torch(device, name):
    x = np.concatenate([np.linspace(-30, 30, 121), [0.0, np.nan]])
    xt = tensorlib.tensor(x, device=device, requires_grad=True)
    got = getattr(S, name)(xt)
    _compare(got, getattr(torch.special, name)(torch.tensor(x)), rtol=1e-12)
    assert not got.requires_grad        # no derivative in PyTorch either
    with pytest.raises(NotImplementedError):
        getattr(S, name)(tensorlib.tensor([1.0], dtype=tensorlib.float16))
