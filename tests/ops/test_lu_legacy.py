"""torch.lu / Tensor.lu, torch.lu_unpack and torch.lu_solve / Tensor.lu_solve against torch on
the same matrices (square, wide, tall, batched), their gradients, and PyTorch's errors."""
import warnings

import numpy as np
import pytest

import tensorlib

torch = pytest.importorskip("torch")


def _pair(device, shape, seed, requires_grad=False):
    a = np.random.default_rng(seed).standard_normal(shape)
    ours = tensorlib.tensor(a, dtype=tensorlib.float64, device=device)
    theirs = torch.tensor(a, dtype=torch.float64)
    if requires_grad:
        ours.requires_grad_(True)
        theirs.requires_grad_(True)
    return ours, theirs


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (5, 3), (3, 5)])
def test_lu_and_lu_unpack_match_torch(device, shape):
    ours, theirs = _pair(device, shape, sum(shape))
    LU, piv, info = tensorlib.lu(ours, get_infos=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tLU, tpiv, tinfo = torch.lu(theirs, get_infos=True)
    np.testing.assert_allclose(LU.cpu().numpy(), tLU.numpy(), rtol=1e-12, atol=1e-12)
    assert piv.dtype is tensorlib.int32 and piv.cpu().tolist() == tpiv.tolist()
    assert info.cpu().tolist() == tinfo.tolist()
    for got, want in zip(tensorlib.lu_unpack(LU, piv), torch.lu_unpack(tLU, tpiv)):
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    method = ours.lu()
    assert len(method) == 2 and method[1].cpu().tolist() == tpiv.tolist()
    P, L, U = tensorlib.lu_unpack(LU, piv, unpack_data=False)
    assert tuple(L.shape) == tuple(U.shape) == (0,) and P.shape == torch.lu_unpack(tLU, tpiv)[0].shape
    assert tuple(tensorlib.lu_unpack(LU, piv, unpack_pivots=False).P.shape) == (0,)


def test_lu_solve_matches_torch(device):
    a, ta = _pair(device, (2, 4, 4), 1)
    b, tb = _pair(device, (2, 4, 3), 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.lu_solve(tb, *torch.lu(ta))
    got = tensorlib.lu_solve(b, *tensorlib.lu(a))
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.lu_solve(*a.lu()).cpu().numpy(), want.numpy(), rtol=1e-10,
                               atol=1e-12)


def test_gradient_through_lu_unpack_matches_torch(device):
    ours, theirs = _pair(device, (3, 3), 7, requires_grad=True)
    for lib, x in ((tensorlib, ours), (torch, theirs)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            P, L, U = lib.lu_unpack(*x.lu())
        (L.sum() + U.pow(2).sum() + (P @ L).abs().sum()).backward()
    np.testing.assert_allclose(ours.grad.cpu().numpy(), theirs.grad.numpy(), rtol=1e-9,
                               atol=1e-10)


def test_errors_as_torch():
    LU, piv = tensorlib.lu(tensorlib.randn(3, 3, dtype=tensorlib.float64))
    with pytest.raises(RuntimeError, match="2 or more dimensions"):
        tensorlib.lu_unpack(tensorlib.ones(3), piv)
    with pytest.raises(RuntimeError, match="LU_pivots"):
        tensorlib.lu_unpack(LU, piv[:2])
    with pytest.raises(RuntimeError, match="int32"):
        tensorlib.lu_unpack(LU, piv.long())
