"""linalg.ldl_factor(_ex) / ldl_solve: the factor and pivots equal torch's (both are LAPACK's
sytrf), D's blocks equal scipy.linalg.ldl's (so L D L^T rebuilds A), solves leave a small
residual, on every test device; errors and the missing derivative as PyTorch."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")
sla = pytest.importorskip("scipy.linalg")

R = np.random.default_rng(5)


def _symmetric(shape, dtype=np.float64):
    m = R.normal(size=shape)
    return (m + np.swapaxes(m, -1, -2)).astype(dtype)


# an indefinite matrix whose factorisation takes 2x2 pivots
BLOCKY = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 0.0]])


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-12), ("float32", 1e-5)])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (2, 0, 0)])
def test_factor_matches_torch_and_solves(device, dtype, tol, shape):
    a = _symmetric(shape, dtype)
    ours = tl.linalg.ldl_factor_ex(tl.tensor(a, device=device))
    theirs = torch.linalg.ldl_factor_ex(torch.tensor(a))
    np.testing.assert_allclose(ours.LD.cpu().numpy(), theirs.LD.numpy(), rtol=tol, atol=tol)
    np.testing.assert_array_equal(ours.pivots.cpu().numpy(), theirs.pivots.numpy())
    np.testing.assert_array_equal(ours.info.cpu().numpy(), theirs.info.numpy())
    assert ours.pivots.dtype == tl.int32 and ours.LD.device.type == device
    b = R.normal(size=shape[:-1] + (2,)).astype(dtype)
    x = tl.linalg.ldl_solve(ours.LD, ours.pivots, tl.tensor(b, device=device)).cpu().numpy()
    np.testing.assert_allclose(a @ x, b, rtol=0, atol=tol * 100)


def test_d_blocks_rebuild_a(device):
    for a in (BLOCKY, _symmetric((6, 6))):
        LD, pivots = tl.linalg.ldl_factor(tl.tensor(a, device=device))
        lu, d, _ = sla.ldl(a, lower=True)
        np.testing.assert_allclose(lu @ d @ lu.T, a, atol=1e-12)
        ld = LD.cpu().numpy()
        np.testing.assert_allclose(np.diag(ld), np.diag(d), rtol=1e-12)
        two = np.flatnonzero(np.diag(d, -1))
        np.testing.assert_allclose(ld[two + 1, two], np.diag(d, -1)[two], rtol=1e-12)
    np.testing.assert_array_equal(tl.linalg.ldl_factor(tl.tensor(BLOCKY)).pivots.numpy(),
                                  [-3, -3, 3])


def test_hermitian_complex():
    m = R.normal(size=(4, 4)) + 1j * R.normal(size=(4, 4))
    a = m + m.conj().T
    for hermitian in (True, False):
        matrix = a if hermitian else m + m.T
        ours = tl.linalg.ldl_factor(tl.tensor(matrix), hermitian=hermitian)
        theirs = torch.linalg.ldl_factor(torch.tensor(matrix), hermitian=hermitian)
        np.testing.assert_allclose(ours.LD.numpy(), theirs.LD.numpy(), atol=1e-12)
        b = R.normal(size=(4, 1)) + 0j
        x = tl.linalg.ldl_solve(ours.LD, ours.pivots, tl.tensor(b), hermitian=hermitian)
        np.testing.assert_allclose(matrix @ x.numpy(), b, atol=1e-10)


def test_broadcast_solve():
    LD, pivots = tl.linalg.ldl_factor(tl.tensor(BLOCKY))
    x = tl.linalg.ldl_solve(LD, pivots, tl.ones(2, 3, 1, dtype=tl.float64))
    assert tuple(x.shape) == (2, 3, 1)
    np.testing.assert_allclose(BLOCKY @ x.numpy(), np.ones((2, 3, 1)), atol=1e-12)


def test_singular_info_and_errors():
    zeros = tl.zeros(3, 3, dtype=tl.float64)
    assert int(tl.linalg.ldl_factor_ex(zeros).info) == 1
    with pytest.raises(tl.linalg.LinAlgError):
        tl.linalg.ldl_factor(zeros)
    with pytest.raises(RuntimeError, match="square"):
        tl.linalg.ldl_factor(tl.zeros(3, 2))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        tl.linalg.ldl_factor(tl.zeros(3))
    with pytest.raises(RuntimeError, match="floating point or complex"):
        tl.linalg.ldl_factor(tl.zeros(3, 3, dtype=tl.int64))
    with pytest.raises(NotImplementedError):
        tl.linalg.ldl_factor(tl.eye(3, dtype=tl.float16))
    LD, pivots = tl.linalg.ldl_factor(tl.eye(3))
    with pytest.raises(RuntimeError, match="Incompatible matrix sizes"):
        tl.linalg.ldl_solve(LD, pivots, tl.ones(2, 1))
    with pytest.raises(RuntimeError, match="same dtype"):
        tl.linalg.ldl_solve(LD, pivots, tl.ones(3, 1, dtype=tl.float64))


def test_no_derivative_as_torch():
    a = tl.tensor(BLOCKY, requires_grad=True)
    LD, pivots = tl.linalg.ldl_factor(a)
    assert LD.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex"):
        LD.sum().backward()
    b = tl.ones(3, 1, dtype=tl.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve"):
        tl.linalg.ldl_solve(LD.detach(), pivots, b).sum().backward()


def test_out():
    LD, pivots = tl.empty(0), tl.empty(0, dtype=tl.int32)
    tl.linalg.ldl_factor(tl.tensor(BLOCKY, dtype=tl.float32), out=(LD, pivots))
    np.testing.assert_array_equal(pivots.numpy(), [-3, -3, 3])
