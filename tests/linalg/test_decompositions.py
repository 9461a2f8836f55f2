"""tensorlib.linalg's decompositions and solvers against torch.linalg (values, shapes,
dtypes, errors, gradients), on every test device (LAPACK runs on the host; the results
come back on the input's device)."""
import numpy as np
import pytest

import tensorlib as tl

from ..autograd._util import require_float64

torch = pytest.importorskip("torch")

R = np.random.default_rng(11)
SQ = R.normal(size=(2, 3, 3)) + 2 * np.eye(3)
TALL = R.normal(size=(2, 5, 3))
WIDE = R.normal(size=(3, 4))
SPD = SQ @ np.swapaxes(SQ, -1, -2) + np.eye(3)
RHS = R.normal(size=(2, 3, 2))
VEC = R.normal(size=(2, 3))
# a nearly rank-deficient batch member: its third column is its first, slightly perturbed
NEAR = TALL.copy()
NEAR[0, :, 2] = NEAR[0, :, 0] + 1e-4 * NEAR[0, :, 2]


def _sign_fixed(u):
    """Columns with a positive first entry (singular/eigen vectors are defined up to sign)."""
    return u * np.sign(u[..., :1, :])


# name, function(lib, *inputs) -> tensor or tuple, inputs, post-processing of outputs
CASES = [
    ("svd", lambda L, a: L.linalg.svd(a, full_matrices=False), [TALL], "svd"),
    ("svd-full", lambda L, a: L.linalg.svd(a), [WIDE], "svd"),
    ("svdvals", lambda L, a: L.linalg.svdvals(a), [TALL], None),
    ("eigh", lambda L, a: L.linalg.eigh(a), [SPD], "eigh"),
    ("eigh-U", lambda L, a: L.linalg.eigh(a, UPLO="U"), [SPD], "eigh"),
    ("eigvalsh", lambda L, a: L.linalg.eigvalsh(a), [SPD], None),
    ("qr", lambda L, a: L.linalg.qr(a), [TALL], None),
    ("qr-complete", lambda L, a: L.linalg.qr(a, mode="complete"), [TALL], None),
    ("qr-r", lambda L, a: L.linalg.qr(a, mode="r")[1], [TALL], None),
    ("inv", lambda L, a: L.linalg.inv(a), [SQ], None),
    ("inverse", lambda L, a: L.inverse(a), [SQ], None),
    ("solve", lambda L, a, b: L.linalg.solve(a, b), [SQ, RHS], None),
    ("solve-vector", lambda L, a, b: L.linalg.solve(a, b), [SQ, VEC], None),
    ("solve-right", lambda L, a, b: L.linalg.solve(a, b, left=False), [SQ, RHS.swapaxes(-1, -2)],
     None),
    ("solve-bcast", lambda L, a, b: L.linalg.solve(a, b), [SQ[0], RHS], None),
    ("solve_triangular", lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True),
     [SQ, RHS], None),
    ("solve_triangular-lower-right-unit",
     lambda L, a, b: L.linalg.solve_triangular(a, b, upper=False, left=False,
                                               unitriangular=True),
     [SQ, RHS.swapaxes(-1, -2)], None),
    ("cholesky", lambda L, a: L.linalg.cholesky(a), [SPD], None),
    ("cholesky-upper", lambda L, a: L.linalg.cholesky(a, upper=True), [SPD], None),
    ("det", lambda L, a: L.linalg.det(a), [SQ], None),
    ("slogdet", lambda L, a: L.linalg.slogdet(a), [SQ - 2 * np.eye(3)], None),
    ("logdet", lambda L, a: L.logdet(a), [SPD], None),
    ("pinv", lambda L, a: L.linalg.pinv(a), [TALL], None),
    ("pinv-wide", lambda L, a: L.linalg.pinv(a), [WIDE], None),
    # the (A, rcond, hermitian) signature: rcond is rtol, by keyword or position, a number
    # or a tensor over the batch
    ("pinv-rcond", lambda L, a: L.linalg.pinv(a, rcond=1e-2), [NEAR], None),
    ("pinv-rcond-positional", lambda L, a: L.linalg.pinv(a, 1e-2), [NEAR], None),
    ("pinv-rcond-batched", lambda L, a: L.linalg.pinv(
        a, L.tensor([1e-2, 1e-9], dtype=L.float64, device=a.device)), [NEAR], None),
    ("pinv-rtol-batched", lambda L, a: L.linalg.pinv(
        a, rtol=L.tensor([1e-2, 1e-9], dtype=L.float64, device=a.device)), [NEAR], None),
    ("pinv-rcond-hermitian", lambda L, a: L.linalg.pinv(a @ a.mT, 1e-2, True), [NEAR], None),
    ("matrix_rank", lambda L, a: L.linalg.matrix_rank(a), [np.stack([TALL[0], TALL[0] * 0])],
     None),
    ("lstsq", lambda L, a, b: L.linalg.lstsq(a, b).solution, [TALL, R.normal(size=(2, 5, 2))],
     None),
    ("matrix_power", lambda L, a: L.linalg.matrix_power(a, 3), [SQ], None),
    ("matrix_power-neg", lambda L, a: L.linalg.matrix_power(a, -2), [SQ], None),
    ("matrix_power-0", lambda L, a: L.linalg.matrix_power(a, 0), [SQ], None),
    ("multi_dot", lambda L, a, b, c: L.linalg.multi_dot([a, b, c]),
     [R.normal(size=4), R.normal(size=(4, 2)), R.normal(size=(2, 5))], None),
    ("cross", lambda L, a, b: L.linalg.cross(a, b), [R.normal(size=(4, 3)), R.normal(size=(1, 3))],
     None),
    ("torch.cross", lambda L, a, b: L.cross(a, b, dim=0), [R.normal(size=(3, 2)),
                                                           R.normal(size=(3, 2))], None),
    ("vander", lambda L, x: L.linalg.vander(x, N=4), [R.normal(size=(2, 3))], None),
    ("cholesky_inverse", lambda L, a: L.cholesky_inverse(L.linalg.cholesky(a)), [SPD], None),
    ("torch.svd", lambda L, a: L.svd(a), [TALL], "svd"),
] + [(f"matrix_norm-{o}", (lambda o: lambda L, a: L.linalg.matrix_norm(a, o))(o), [TALL], None)
     for o in ("fro", "nuc", 2, -2, 1, -1, float("inf"), -float("inf"))] + [
    ("norm-nuc-dims", lambda L, a: L.linalg.norm(a, "nuc", dim=(0, 2)), [TALL], None),
]


def _post(outs, kind):
    outs = [o.detach().cpu().numpy() if hasattr(o, "detach") else np.asarray(o) for o in outs]
    if kind == "svd":       # U (fixed signs), S; V's signs follow U's
        return [_sign_fixed(outs[0]), outs[1]]
    if kind == "eigh":
        return [outs[0], _sign_fixed(outs[1])]
    return outs


@pytest.mark.parametrize("name, fn, inputs, kind", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, fn, inputs, kind, device):
    require_float64(device)
    ours = fn(tl, *(tl.tensor(x, dtype=tl.float64, device=device) for x in inputs))
    theirs = fn(torch, *(torch.tensor(x, dtype=torch.float64) for x in inputs))
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for o in ours:
        assert o.device.type == tl.device(device).type
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape) and str(o.dtype).split(".")[-1] == \
            str(t.dtype).split(".")[-1]
    for o, t in zip(_post(ours, kind), _post(theirs, kind)):
        np.testing.assert_allclose(o, t, rtol=1e-8, atol=1e-10)


def test_float32_keeps_its_dtype():
    a = tl.tensor(SPD, dtype=tl.float32)
    assert tl.linalg.cholesky(a).dtype == tl.float32
    assert tl.linalg.svd(a).S.dtype == tl.float32
    assert tl.linalg.inv(a).dtype == tl.float32


def test_errors_match_torch():
    singular = tl.zeros(3, 3, dtype=tl.float64)
    with pytest.raises(tl.linalg.LinAlgError, match="singular"):
        tl.linalg.inv(singular)
    with pytest.raises(RuntimeError, match="not positive-definite"):
        tl.linalg.cholesky(-tl.eye(3))
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        tl.linalg.inv(tl.zeros(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        tl.linalg.svd(tl.zeros(3))
    with pytest.raises(RuntimeError, match="Low precision"):
        tl.linalg.inv(tl.eye(2, dtype=tl.float16))
    with pytest.raises(RuntimeError, match="Expected a floating point"):
        tl.linalg.det(tl.eye(2, dtype=tl.int64))
    with pytest.raises(RuntimeError, match="singular"):
        tl.linalg.solve(singular, tl.ones(3, 1, dtype=tl.float64))
    assert issubclass(tl.linalg.LinAlgError, RuntimeError)
    with pytest.raises(torch.linalg.LinAlgError, match="singular"):
        torch.linalg.inv(torch.zeros(3, 3))


@pytest.mark.parametrize("lib", [tl, torch], ids=["tensorlib", "torch"])
@pytest.mark.parametrize("tolerance", ["atol", "rtol"])
def test_pinv_refuses_rcond_with_atol_or_rtol(lib, tolerance):
    with pytest.raises(TypeError):
        lib.linalg.pinv(lib.ones(3, 2), rcond=0.1, **{tolerance: 0.1})


def test_ex_variants_report_info():
    A = tl.tensor(np.stack([SPD[0], -SPD[1]]))
    L, info = tl.linalg.cholesky_ex(A)
    t_L, t_info = torch.linalg.cholesky_ex(torch.tensor(np.stack([SPD[0], -SPD[1]])))
    np.testing.assert_array_equal(info.numpy(), t_info.numpy())
    np.testing.assert_allclose(L.numpy()[0], t_L.numpy()[0])
    inv, info = tl.linalg.inv_ex(tl.tensor(np.stack([SQ[0], np.zeros((3, 3))])))
    assert info.tolist() == torch.linalg.inv_ex(
        torch.tensor(np.stack([SQ[0], np.zeros((3, 3))]))).info.tolist()


@pytest.mark.parametrize("name, fn, inputs", [
    ("svd", lambda L, a: (lambda u, s, v: (u * u).sum() + s.sum() + (v ** 2 * 3).sum())(
        *L.linalg.svd(a, full_matrices=False)), [TALL]),
    # full_matrices=True on non-square input: the factors' first k columns (rows of Vh)
    # carry the gradient; what reaches U's other columns is dropped, as in PyTorch
    ("svd_full_tall", lambda L, a: (lambda u, s, v: (u[..., :3] ** 2).sum() + s.sum() +
                                    (v ** 2 * 3).sum())(*L.linalg.svd(a)), [TALL]),
    ("svd_full_wide", lambda L, a: (lambda u, s, v: (u ** 2 * 3).sum() +
                                    (v[..., :3, :] ** 2).sum())(*L.linalg.svd(a)), [WIDE]),
    ("svd_full_other_columns", lambda L, a: (L.linalg.svd(a)[0][..., 3:] ** 2).sum(), [TALL]),
    ("eigh", lambda L, a: (lambda w, q: w.sum() + (q ** 4).sum())(*L.linalg.eigh(a)), [SPD]),
    ("qr", lambda L, a: (lambda q, r: (q * 2).sum() + (r * r).sum())(*L.linalg.qr(a)), [TALL]),
    ("cholesky", lambda L, a: (L.linalg.cholesky(a) ** 2).sum(), [SPD]),
    ("inv", lambda L, a: (L.linalg.inv(a) ** 2).sum(), [SQ]),
    ("solve", lambda L, a, b: L.linalg.solve(a, b).sum(), [SQ, RHS]),
    ("solve_triangular", lambda L, a, b: L.linalg.solve_triangular(a, b, upper=False).sum(),
     [SQ, RHS]),
    # the factor's gradient is the whole matrix (the chain rule through A = L L^H), not
    # its triangle; with L's batch broadcast against B's
    ("cholesky_solve", lambda L, a, b: (L.cholesky_solve(b, a) ** 2).sum(), [SQ, RHS]),
    ("cholesky_solve_upper", lambda L, a, b: (L.cholesky_solve(b, a, upper=True) ** 2).sum(),
     [SQ, RHS]),
    ("cholesky_solve_bcast", lambda L, a, b: (L.cholesky_solve(b, a) ** 2).sum(),
     [SQ[0], RHS]),
    ("det", lambda L, a: L.linalg.det(a).sum(), [SQ]),
    ("slogdet", lambda L, a: L.linalg.slogdet(a)[1].sum(), [SQ]),
    ("pinv", lambda L, a: (L.linalg.pinv(a) ** 2).sum(), [TALL]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_gradients_match_torch(name, fn, inputs, device):
    require_float64(device)
    ours = [tl.tensor(x, dtype=tl.float64, device=device, requires_grad=True) for x in inputs]
    theirs = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in inputs]
    fn(tl, *ours).backward()
    fn(torch, *theirs).backward()
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_with_a_zero_diagonal_gives_pytorchs_inf_and_nan(upper, left):
    """A singular triangular matrix is solved by substitution, as PyTorch's trsm does (inf
    and nan, no error): BoTorch falls back from a zeroed Cholesky factor on the NaNs."""
    rng = np.random.default_rng(3)
    a = rng.normal(size=(2, 3, 3))
    a[0, 1, 1] = 0.0
    a[1] = 0.0
    b = rng.normal(size=(2, 3, 3))
    ours = tl.linalg.solve_triangular(tl.tensor(a), tl.tensor(b), upper=upper, left=left)
    theirs = torch.linalg.solve_triangular(torch.tensor(a), torch.tensor(b), upper=upper,
                                           left=left)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("shape,nan_at", [((3, 3), (0, 0)), ((2, 3, 3), (1, 2, 1)),
                                          ((2, 2, 4, 3), (1, 0, 3, 2))])
@pytest.mark.parametrize("call", [lambda L, a: L.linalg.svd(a), lambda L, a: L.linalg.svdvals(a),
                                  lambda L, a: L.svd(a),
                                  lambda L, a: L.linalg.svd(a, full_matrices=False)])
def test_svd_of_a_nan_raises_torchs_linalg_error(shape, nan_at, call):
    """LAPACK does not converge on a NaN: PyTorch raises its LinAlgError (a RuntimeError,
    which kornia's DLT catches), naming the batch element."""
    a = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    a[nan_at] = np.nan
    with pytest.raises(torch.linalg.LinAlgError) as theirs:
        call(torch, torch.tensor(a))
    with pytest.raises(tl.linalg.LinAlgError) as ours:
        call(tl, tl.tensor(a))
    assert isinstance(ours.value, RuntimeError) and str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,inf_at", [((4, 4), (0, 0)), ((3, 4, 4), (1, 0, 0)),
                                          ((2, 2, 3, 5), (0, 1, 2, 4))])
def test_svd_of_an_infinity_gives_nan_singular_values_for_that_matrix(dtype, shape, inf_at):
    """LAPACK iterated forever on some matrices holding an infinity (numpy's batched float32
    svd hung); PyTorch gives NaN singular values for them and decomposes the rest."""
    a = np.random.default_rng(1).normal(size=shape).astype(dtype)
    a[inf_at] = -np.inf
    theirs = torch.linalg.svdvals(torch.tensor(a)).numpy()
    u, s, vh = tl.linalg.svd(tl.tensor(a), full_matrices=False)
    np.testing.assert_allclose(s.numpy(), theirs, rtol=1e-4, equal_nan=True)
    hit = inf_at[:-2]
    assert np.isnan(u.numpy()[hit]).all() and np.isnan(vh.numpy()[hit]).all()
    finite = np.ones(shape[:-2], bool)
    finite[hit] = False
    assert np.isfinite(u.numpy()[finite]).all() and np.isfinite(s.numpy()[finite]).all()
