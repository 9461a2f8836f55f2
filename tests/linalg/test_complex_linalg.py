"""linalg on complex matrices and the general eigendecomposition against torch: values of
eig/eigvals (batched, real and complex input), complex inv/solve/det/slogdet/svd/svdvals/
eigh/qr/solve_triangular, their gradients, QR's backward for wide matrices, and the
gradient of det at singular matrices (torch's SVD form)."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(31)
REAL = RNG.standard_normal((2, 4, 4))
CPLX = RNG.standard_normal((2, 3, 3)) + 1j * RNG.standard_normal((2, 3, 3)) + 2 * np.eye(3)
RHS = RNG.standard_normal((2, 3, 2)) + 1j * RNG.standard_normal((2, 3, 2))


def _np(t):
    return t.detach().resolve_conj().numpy()


def _by_eigenvalue(L, V):
    """Eigenpairs in a fixed order and V's columns with a fixed phase (LAPACK libraries may
    order them differently)."""
    order = np.lexsort((np.round(L.imag, 8), np.round(L.real, 8)), axis=-1)
    L = np.take_along_axis(L, order, -1)
    V = np.take_along_axis(V, order[..., None, :], -1)
    pivot = np.take_along_axis(V, np.abs(V).argmax(-2)[..., None, :], -2)
    return L, V * (np.abs(pivot) / pivot)


@pytest.mark.parametrize("data", [REAL, CPLX, REAL.astype(np.float32)], ids=["real", "complex",
                                                                           "float32"])
def test_eig_values_match_torch(data):
    L, V = tl.linalg.eig(tl.tensor(data))
    tL, tV = torch.linalg.eig(torch.tensor(data))
    assert L.dtype.name == str(tL.dtype).split(".")[-1] and V.shape == tuple(tV.shape)
    tol = 1e-4 if data.dtype == np.float32 else 1e-10
    for ours, theirs in zip(_by_eigenvalue(_np(L), _np(V)), _by_eigenvalue(_np(tL), _np(tV))):
        np.testing.assert_allclose(ours, theirs, atol=tol)
    np.testing.assert_allclose(np.linalg.norm(_np(V), axis=-2), 1.0, atol=tol)
    np.testing.assert_allclose(np.sort_complex(_np(tl.linalg.eigvals(tl.tensor(data))).ravel()),
                               np.sort_complex(_np(tL).ravel()), atol=tol)


def _eig_loss(lib, L, V):
    """Invariant under the order of the eigenpairs and the phase of each eigenvector."""
    weights = lib.arange(V.shape[-2], dtype=lib.float64).unsqueeze(-1) + 1
    return ((L.real * L.imag.cos()).sum()
            + ((V.abs() ** 2 * weights).sum(-2) * L.real).sum())


@pytest.mark.parametrize("data", [REAL, CPLX], ids=["real", "complex"])
def test_eig_gradients_match_torch(data):
    grads = []
    for lib in (tl, torch):
        a = lib.tensor(data, requires_grad=True)
        _eig_loss(lib, *lib.linalg.eig(a)).backward()
        grads.append(_np(a.grad))
    assert grads[0].dtype == data.dtype
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-10)


def test_eig_gradcheck():
    a = tl.tensor(CPLX[0], requires_grad=True)
    assert gradcheck(tl.linalg.eigvals, (a,))
    assert gradcheck(lambda a: (lambda L, V: (L, V.abs()))(*tl.linalg.eig(a)), (a,))
    r = tl.tensor(REAL[0, :3, :3], requires_grad=True)
    assert gradcheck(lambda a: _eig_loss(tl, *tl.linalg.eig(a)), (r,))


LA_CASES = {
    "inv": lambda L, a, b: L.linalg.inv(a),
    "solve": lambda L, a, b: L.linalg.solve(a, b),
    "solve_vector": lambda L, a, b: L.linalg.solve(a, b[..., 0]),
    "solve_triangular": lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True),
    "det": lambda L, a, b: L.linalg.det(a),
    "slogdet": lambda L, a, b: tuple(L.linalg.slogdet(a)),
    "matmul": lambda L, a, b: a @ b,
    "svdvals": lambda L, a, b: L.linalg.svdvals(a),
    "svd_reconstruct": lambda L, a, b: (lambda u, s, vh: (u * s.unsqueeze(-2)) @ vh)(
        *L.linalg.svd(a, full_matrices=False)),
    "eigvalsh": lambda L, a, b: L.linalg.eigvalsh(a + a.mH),
    "eigh": lambda L, a, b: (lambda w, q: (w, q.abs()))(*L.linalg.eigh(a + a.mH)),
    "qr": lambda L, a, b: tuple(L.linalg.qr(a)),
    "qr_tall": lambda L, a, b: tuple(L.linalg.qr(b)),
    "qr_wide": lambda L, a, b: tuple(L.linalg.qr(b.mH)),
    "cholesky": lambda L, a, b: L.linalg.cholesky(_hpd(L, a)),
    "cholesky_upper": lambda L, a, b: L.linalg.cholesky(_hpd(L, a), upper=True),
    "cholesky_ex": lambda L, a, b: L.linalg.cholesky_ex(_hpd(L, a)).L,
    "cholesky_solve": lambda L, a, b: L.cholesky_solve(b, L.linalg.cholesky(_hpd(L, a))),
    "cholesky_solve_upper": lambda L, a, b: L.cholesky_solve(
        b, L.linalg.cholesky(_hpd(L, a), upper=True), upper=True),
    "cholesky_inverse": lambda L, a, b: L.cholesky_inverse(L.linalg.cholesky(_hpd(L, a))),
    "lstsq": lambda L, a, b: L.linalg.lstsq(L.cat([a, b.mH], -2), L.cat([b, b[..., :2, :] * 2j], -2))[0],
    "pinv": lambda L, a, b: L.linalg.pinv(b),
    "pinv_hermitian": lambda L, a, b: L.linalg.pinv(a + a.mH, hermitian=True),
}


def _hpd(L, a):
    """A Hermitian positive-definite matrix made from a."""
    return a @ a.mH + a.new_ones(()).real * 0.5 * (a.shape[-1] ** 0)


def _loss(lib, outs):
    outs = outs if isinstance(outs, tuple) else (outs,)
    return sum((lib.view_as_real(o.resolve_conj()) if o.is_complex() else o).cos().sum()
               for o in outs)


@pytest.mark.parametrize("name", sorted(LA_CASES))
def test_complex_values_and_gradients_match_torch(name):
    results = []
    for lib in (tl, torch):
        a, b = lib.tensor(CPLX, requires_grad=True), lib.tensor(RHS, requires_grad=True)
        outs = LA_CASES[name](lib, a, b)
        _loss(lib, outs).backward()
        outs = outs if isinstance(outs, tuple) else (outs,)
        results.append([_np(o) for o in outs] + [_np(a.grad) if a.grad is not None else 0,
                                                 _np(b.grad) if b.grad is not None else 0])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, atol=1e-10)


@pytest.mark.parametrize("name", ["inv", "solve", "det", "slogdet", "svdvals", "eigvalsh",
                                  "qr", "qr_wide", "solve_triangular", "svd_reconstruct",
                                  "cholesky", "cholesky_upper", "cholesky_solve",
                                  "cholesky_inverse", "lstsq", "pinv_hermitian"])
def test_complex_gradcheck(name):
    a, b = tl.tensor(CPLX[0], requires_grad=True), tl.tensor(RHS[0], requires_grad=True)
    assert gradcheck(lambda a, b: LA_CASES[name](tl, a, b), (a, b))


@pytest.mark.parametrize("shape, mode", [((3, 5), "reduced"), ((2, 3, 4), "complete"),
                                         ((3, 3), "complete")])
def test_qr_backward_wide_and_complete_matches_torch(shape, mode):
    data = RNG.standard_normal(shape)
    grads = []
    for lib in (tl, torch):
        a = lib.tensor(data, requires_grad=True)
        q, r = lib.linalg.qr(a, mode=mode)
        ((q * lib.cos(q)).sum() + (r ** 2).sum()).backward()
        grads.append(_np(a.grad))
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-10)
    a = tl.tensor(data, requires_grad=True)
    assert gradcheck(lambda a: tl.linalg.qr(a, mode=mode), (a,))


def test_qr_backward_errors_match_torch():
    a = tl.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
        tl.linalg.qr(a, mode="complete")[0].sum().backward()
    with pytest.raises(RuntimeError, match="mode='r'"):
        tl.linalg.qr(a, mode="r")[1].sum().backward()


SINGULAR = np.array([[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]],     # rank 2
                     [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [3.0, 6.0, 9.0]],      # rank 1
                     [[2.0, 0.5, 0.0], [0.1, 1.0, 0.3], [0.0, 0.2, 3.0]]])     # invertible


@pytest.mark.parametrize("data", [SINGULAR, SINGULAR[:2] * (1 + 0.5j)], ids=["real", "complex"])
def test_det_gradient_at_singular_matrices_matches_torch(data):
    """torch 2.13 applies its SVD formula only while recording (create_graph=True); its
    first-order backward returns zeros at exactly singular matrices, which its own gradcheck
    rejects. tensorlib uses the SVD formula in both cases."""
    grads = []
    for lib in (tl, torch):
        a = lib.tensor(data, requires_grad=True)
        d = lib.linalg.det(a)
        g, = lib.autograd.grad((lib.view_as_real(d) if d.is_complex() else d).sum(), a,
                               create_graph=True)
        grads.append(_np(g))
    a = tl.tensor(data, requires_grad=True)
    d = tl.linalg.det(a)
    (tl.view_as_real(d) if d.is_complex() else d).sum().backward()
    np.testing.assert_allclose(_np(a.grad), grads[0], atol=1e-12)
    assert np.abs(grads[0][0]).max() > 1                 # the cofactors of a rank-2 matrix
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-10)
    a = tl.tensor(data[0], requires_grad=True)
    assert gradcheck(tl.linalg.det, (a,))


@pytest.mark.parametrize("driver", [None, "gelsy", "gelsd", "gelss", "gels"])
def test_complex_lstsq_results_follow_the_driver_as_torch(driver):
    A = np.concatenate([CPLX[0], RHS[0].conj().T], 0)              # 5 x 3, full rank
    B = np.concatenate([RHS[0], RHS[0] * 2j], 0)[:5]
    ours = tl.linalg.lstsq(tl.tensor(A), tl.tensor(B), driver=driver)
    theirs = torch.linalg.lstsq(torch.tensor(A), torch.tensor(B), driver=driver)
    for o, t in zip(ours, theirs):
        assert o.dtype.name == str(t.dtype).split(".")[-1] and o.shape == tuple(t.shape)
        np.testing.assert_allclose(_np(o), t.numpy(), atol=1e-10)
    with pytest.raises(RuntimeError, match="parameter `driver` should be one of"):
        tl.linalg.lstsq(tl.tensor(A), tl.tensor(B), driver="gesv")


def test_complex_matrix_rank_and_cholesky_errors_match_torch():
    low = CPLX[0][:, :2] @ CPLX[1][:2]                              # rank 2
    for hermitian, data in ((False, np.stack([CPLX[0], low])), (True, low @ low.conj().T)):
        assert tl.linalg.matrix_rank(tl.tensor(data), hermitian=hermitian).tolist() == \
            torch.linalg.matrix_rank(torch.tensor(data), hermitian=hermitian).tolist()
    bad = np.stack([CPLX[0] @ CPLX[0].conj().T, -np.eye(3) + 0j])
    with pytest.raises(tl.linalg.LinAlgError, match=r"\(Batch element 1\).*order 1 is not"):
        tl.linalg.cholesky(tl.tensor(bad))
    L, info = tl.linalg.cholesky_ex(tl.tensor(bad))
    assert info.tolist() == torch.linalg.cholesky_ex(torch.tensor(bad)).info.tolist()
    np.testing.assert_allclose(_np(L[0]), torch.linalg.cholesky(torch.tensor(bad[0])).numpy(),
                               atol=1e-12)


def test_eig_on_other_devices_raises(device):
    if tl.device(device).type == "cpu":
        return
    with pytest.raises(RuntimeError, match=r"linalg.eig: its complex results \(complex128\) are only"):
        tl.linalg.eig(tl.tensor(REAL, device=device))
