"""The older top-level linear-algebra names against torch: chain_matmul, matrix_exp,
triangular_solve, frobenius_norm, nuclear_norm (values, gradients, warnings) and the removed
matrix_rank's error; svd_lowrank / pca_lowrank (reconstruction, singular values, seeding)."""
import warnings

import numpy as np
import pytest

import tensorlib

torch = pytest.importorskip("torch")


def _pair(array, device, grad=False):
    return (tensorlib.tensor(array, device=device, requires_grad=grad),
            torch.tensor(array, requires_grad=grad))


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("unitriangular", [True, False])
def test_triangular_solve(device, upper, transpose, unitriangular):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((2, 4, 4)) + 4 * np.eye(4)
    b = rng.standard_normal((2, 4, 3))
    (oA, tA), (ob, tb) = _pair(A, device, True), _pair(b, device, True)
    ours = tensorlib.triangular_solve(ob, oA, upper, transpose, unitriangular)
    want = torch.triangular_solve(tb, tA, upper, transpose, unitriangular)
    assert isinstance(ours, tensorlib.return_types.triangular_solve)
    np.testing.assert_allclose(ours.solution.detach().cpu().numpy(),
                               want.solution.detach().numpy(), rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(ours.cloned_coefficient.detach().cpu().numpy(), A)
    ours.solution.sum().backward()
    want.solution.sum().backward()
    np.testing.assert_allclose(oA.grad.cpu().numpy(), tA.grad.numpy(), rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(ob.grad.cpu().numpy(), tb.grad.numpy(), rtol=1e-8, atol=1e-9)
    o2 = ob.detach().triangular_solve(oA.detach(), upper)
    np.testing.assert_allclose(o2.solution.cpu().numpy(),
                               torch.triangular_solve(tb.detach(), tA.detach(), upper).solution.numpy(),
                               rtol=1e-9, atol=1e-9)


def test_norms_chain_and_exp(device):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4, 5))
    (oa, ta) = _pair(a, device, True)
    for dim, keep in (((1, 2), False), ((0,), True), (2, False)):
        ours, want = tensorlib.frobenius_norm(oa, dim, keep), torch.frobenius_norm(ta, dim, keep)
        assert tuple(ours.shape) == tuple(want.shape)
        np.testing.assert_allclose(ours.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-10)
    for args in ((), ((0, 2),), ((1, 2), True), (True,)):
        ours, want = tensorlib.nuclear_norm(oa, *args), torch.nuclear_norm(ta, *args)
        assert tuple(ours.shape) == tuple(want.shape)
        np.testing.assert_allclose(ours.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-10)
    tensorlib.nuclear_norm(oa).sum().backward()
    torch.nuclear_norm(ta).sum().backward()
    np.testing.assert_allclose(oa.grad.cpu().numpy(), ta.grad.numpy(), rtol=1e-7, atol=1e-9)
    m = [rng.standard_normal(s) for s in ((3, 4), (4, 2), (2, 5))]
    ours = tensorlib.chain_matmul(*[tensorlib.tensor(x, device=device) for x in m])
    np.testing.assert_allclose(ours.cpu().numpy(), m[0] @ m[1] @ m[2], rtol=1e-10)
    sq = rng.standard_normal((2, 3, 3)) / 3
    ours_exp = tensorlib.matrix_exp(tensorlib.tensor(sq, device=device))
    np.testing.assert_allclose(ours_exp.cpu().numpy(), torch.matrix_exp(torch.tensor(sq)).numpy(),
                               rtol=1e-10)
    assert tensorlib.tensor(sq, device=device).matrix_exp().shape == (2, 3, 3)


def test_errors_and_warnings_match_torch():
    x = tensorlib.eye(3)
    with pytest.raises(RuntimeError, match="torch.linalg.matrix_rank"):
        tensorlib.matrix_rank(x)
    with pytest.raises(RuntimeError, match="torch.linalg.matrix_rank"):
        torch.matrix_rank(torch.eye(3))
    with pytest.raises(RuntimeError, match="Expected one or more matrices"):
        tensorlib.chain_matmul()
    with pytest.raises(TypeError):
        tensorlib.frobenius_norm(x)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        tensorlib.chain_matmul(x, x)
    assert any("linalg.multi_dot" in str(w.message) for w in seen)


def test_svd_lowrank_recovers_a_low_rank_matrix(device):
    rng = np.random.default_rng(2)
    low = rng.standard_normal((40, 3)) @ rng.standard_normal((3, 25))
    for A in (low, low.T):
        U, S, V = tensorlib.svd_lowrank(tensorlib.tensor(A, device=device), q=5)
        assert tuple(U.shape) == (A.shape[0], 5) and tuple(V.shape) == (A.shape[1], 5)
        np.testing.assert_allclose(S.cpu().numpy()[:3], np.linalg.svd(A)[1][:3], rtol=1e-9)
        rebuilt = (U * S.unsqueeze(0)) @ V.mT
        np.testing.assert_allclose(rebuilt.cpu().numpy(), A, atol=1e-9)
    tensorlib.manual_seed(5)
    first = tensorlib.svd_lowrank(tensorlib.tensor(low, device=device), q=2, niter=0)[0]
    tensorlib.manual_seed(5)
    again = tensorlib.svd_lowrank(tensorlib.tensor(low, device=device), q=2, niter=0)[0]
    assert tensorlib.equal(first, again)


def test_pca_lowrank_matches_torch(device):
    rng = np.random.default_rng(3)
    A = rng.standard_normal((30, 4)) @ rng.standard_normal((4, 12)) + 5.0
    _, S, V = tensorlib.pca_lowrank(tensorlib.tensor(A, device=device), q=4)
    _, tS, tV = torch.pca_lowrank(torch.tensor(A), q=4)
    np.testing.assert_allclose(S.cpu().numpy(), tS.numpy(), rtol=1e-8)
    np.testing.assert_allclose(np.abs(V.mT.cpu().numpy() @ tV.numpy()), np.eye(4), atol=1e-8)
    S_raw = tensorlib.pca_lowrank(tensorlib.tensor(A, device=device), q=5, center=False)[1]
    np.testing.assert_allclose(S_raw.cpu().numpy(), np.linalg.svd(A)[1][:5], rtol=1e-8)
    with pytest.raises(ValueError, match="must be non-negative integer and not greater"):
        tensorlib.pca_lowrank(tensorlib.tensor(A), q=13)
