"""Derivatives of the matrix decompositions (tensorlib/ops/decompositions.py), real case, as
PyTorch's FunctionsManual.cpp writes them; in tensorlib ops, so they run on the device and
are differentiable again (the solves inside call the decompositions' own ops)."""
import tensorlib
from tensorlib.autograd.recording import formula


def _la():
    from tensorlib.ops import decompositions
    return decompositions


def _skew(X):
    return X - X.mT


def _safe_gap(values):
    """E[i, j] = v[j] - v[i], with ones on the diagonal (divided by, then masked)."""
    E = values.unsqueeze(-2) - values.unsqueeze(-1)
    n = values.shape[-1]
    eye = tensorlib.eye(n, dtype=values.dtype, device=values.device)
    return E + eye


@formula("linalg_svd", save=(0,), save_output=True)
def linalg_svd(ctx, gU=None, gS=None, gVh=None):
    A, full_matrices = ctx.args
    U, S, Vh = ctx.out
    m, n = A.shape[-2:]
    k = min(m, n)
    if full_matrices and (gU is not None or gVh is not None) and m != n:
        raise RuntimeError("linalg_svd_backward: Setting full_matrices=True in forward is not "
                           "supported in backward for non-square matrices; use "
                           "full_matrices=False")
    if gU is None and gVh is None:
        return (U[..., :k] * gS.unsqueeze(-2)) @ Vh[..., :k, :], None
    U, Vh = U[..., :k], Vh[..., :k, :]
    if gU is not None:
        gU = gU[..., :k]
    if gVh is not None:
        gVh = gVh[..., :k, :]
    S2 = S * S
    E = _safe_gap(S2)
    gA = 0
    if gU is not None:
        gA = _skew(U.mT @ gU) * S.unsqueeze(-2)
    if gVh is not None:
        gA = gA + S.unsqueeze(-1) * _skew(Vh @ gVh.mT)
    gA = gA / E
    if gS is not None:
        gA = gA + tensorlib.diag_embed(gS)
    if m > n and gU is not None:
        gA = U @ gA
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - U @ (U.mT @ gUSinv)
        gA = gA @ Vh
    elif m < n and gVh is not None:
        gA = gA @ Vh
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA + SinvgVh - (SinvgVh @ Vh.mT) @ Vh
        gA = U @ gA
    else:
        gA = U @ gA @ Vh
    return gA, None


@formula("linalg_eigh", save_output=True)
def linalg_eigh(ctx, gL=None, gQ=None):
    """gA = Q (diag(gL) + (Q^T gQ) / E) Q^T with E[i, j] = l_j - l_i off the diagonal,
    symmetrised (A is read as a symmetric matrix; PyTorch's convention)."""
    L, Q = ctx.out
    inner = 0
    if gQ is not None:
        n = L.shape[-1]
        off = 1 - tensorlib.eye(n, dtype=L.dtype, device=L.device)
        inner = (Q.mT @ gQ) / _safe_gap(L) * off
    if gL is not None:
        inner = inner + tensorlib.diag_embed(gL)
    gA = Q @ inner @ Q.mT
    return 0.5 * (gA + gA.mT), None


@formula("linalg_qr", save_output=True)
def linalg_qr(ctx, gQ=None, gR=None):
    """m >= n, reduced (or square complete): gA = (gQ + Q copyltu(M)) R^-T with
    M = R gR^T - gQ^T Q, copyltu(M) the symmetric matrix built from M's lower triangle."""
    A, mode = ctx.args
    Q, R = ctx.out
    m, n = A.shape[-2:]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr.")
    if m < n or (mode == "complete" and m > n):
        raise NotImplementedError("the derivative of linalg.qr is implemented for m >= n "
                                  "(reduced mode, or complete with square A) only")
    M = 0
    if gR is not None:
        M = R @ gR.mT
    if gQ is not None:
        M = M - gQ.mT @ Q
    if isinstance(M, int):
        return None, None
    low = tensorlib.tril(M, -1)
    copyltu = low + low.mT + tensorlib.diag_embed(M.diagonal(0, -2, -1))
    B = Q @ copyltu
    if gQ is not None:
        B = B + gQ
    gA = _la().solve_triangular(R, B.mT, upper=True).mT
    return gA, None


@formula("linalg_cholesky", save_output=True)
def linalg_cholesky(ctx, gL):
    """gA = sym(L^-T Phi(L^T gL) L^-1), Phi: the lower triangle with its diagonal halved."""
    upper = ctx.args[1]
    L = ctx.out.mT if upper else ctx.out
    gL = gL.mT if upper else gL
    P = tensorlib.tril(L.mT @ gL)
    P = P - 0.5 * tensorlib.diag_embed(P.diagonal(0, -2, -1))
    la = _la()
    gA = la.solve_triangular(L.mT, P, upper=True)
    gA = la.solve_triangular(L, gA, upper=False, left=False)
    return 0.5 * (gA + gA.mT), None


@formula("linalg_inv", save_output=True)
def linalg_inv(ctx, g):
    Ainv = ctx.out
    return (-(Ainv.mT @ g @ Ainv.mT),)


@formula("linalg_solve", save=(0, 1), save_output=True)
def linalg_solve(ctx, g):
    A, B, left = ctx.args
    X = ctx.out
    la = _la()
    vector = la._vector_rhs(A, B)
    gB = la.solve(A.mT, g, left=left)
    gA = None
    if ctx.needs_input_grad[0]:
        if vector:
            gA = -(gB.unsqueeze(-1) @ X.unsqueeze(-2))
        elif left:
            gA = -(gB @ X.mT)
        else:
            gA = -(X.mT @ gB)
    return gA, (gB if ctx.needs_input_grad[1] else None), None


@formula("linalg_solve_triangular", save=(0,), save_output=True)
def linalg_solve_triangular(ctx, g):
    A, B, upper, left, unitriangular = ctx.args
    X = ctx.out
    gB = _la().solve_triangular(A.mT, g, upper=not upper, left=left,
                                unitriangular=unitriangular)
    gA = None
    if ctx.needs_input_grad[0]:
        gA = -(gB @ X.mT) if left else -(X.mT @ gB)
        gA = tensorlib.triu(gA) if upper else tensorlib.tril(gA)
        if unitriangular:
            gA = gA - tensorlib.diag_embed(gA.diagonal(0, -2, -1))
    return gA, (gB if ctx.needs_input_grad[1] else None), None, None, None


@formula("linalg_det", save=(0,), save_output=True)
def linalg_det(ctx, g):
    """d det A = det A * A^-T (A must be invertible here)."""
    A = ctx.args[0]
    return ((g * ctx.out).unsqueeze(-1).unsqueeze(-1) * _la().inv(A).mT,)


@formula("linalg_slogdet", save=(0,))
def linalg_slogdet(ctx, g_sign=None, g_logabsdet=None):
    A = ctx.args[0]
    if g_logabsdet is None:
        return (None,)
    return (g_logabsdet.unsqueeze(-1).unsqueeze(-1) * _la().inv(A).mT,)
