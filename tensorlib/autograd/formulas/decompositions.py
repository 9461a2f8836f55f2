"""Derivatives of the matrix decompositions (tensorlib/ops/decompositions.py), as PyTorch's
FunctionsManual.cpp writes them, for real and complex matrices (transposes are conjugate
transposes, mH, which is the plain transpose for real ones); in tensorlib ops, so they run
on the device and are differentiable again (the solves inside call the decompositions' own
ops)."""
import tensorlib
from tensorlib.autograd.formulas.complex import conj
from tensorlib.autograd.recording import formula


def _la():
    from tensorlib.ops import decompositions
    return decompositions


def _skew(X):
    return X - X.mH


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
    if gU is None and gVh is None:
        return (U[..., :k] * gS.unsqueeze(-2)) @ Vh[..., :k, :], None
    # with full_matrices, the columns past k are any basis of the complement: PyTorch
    # narrows the factors and their gradients to the first k (what they get is dropped)
    U, Vh = U[..., :k], Vh[..., :k, :]
    if gU is not None:
        gU = gU[..., :k]
    if gVh is not None:
        gVh = gVh[..., :k, :]
    S2 = S * S
    E = _safe_gap(S2)
    gA = 0
    if gU is not None:
        UhgU = _skew(U.mH @ gU)
        gA = UhgU * S.unsqueeze(-2)
    if gVh is not None:
        gA = gA + S.unsqueeze(-1) * _skew(Vh @ gVh.mH)
    gA = gA / E
    if gS is not None:
        gA = gA + tensorlib.diag_embed(gS).to(gA.dtype)
    if A.dtype.is_complex and gU is not None:     # the phase of U's columns (torch's term)
        gA = gA + tensorlib.diag_embed(UhgU.diagonal(0, -2, -1) / (2 * S))
    if m > n and gU is not None:
        gA = U @ gA
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - U @ (U.mH @ gUSinv)
        gA = gA @ Vh
    elif m < n and gVh is not None:
        gA = gA @ Vh
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA + SinvgVh - (SinvgVh @ Vh.mH) @ Vh
        gA = U @ gA
    else:
        gA = U @ gA @ Vh
    return gA, None


@formula("linalg_eigh", save_output=True)
def linalg_eigh(ctx, gL=None, gQ=None):
    """gA = Q (diag(gL) + (Q^H gQ) / E) Q^H with E[i, j] = l_j - l_i off the diagonal,
    made Hermitian (A is read as a Hermitian matrix; PyTorch's convention)."""
    L, Q = ctx.out
    inner = 0
    if gQ is not None:
        n = L.shape[-1]
        off = 1 - tensorlib.eye(n, dtype=L.dtype, device=L.device)
        inner = (Q.mH @ gQ) / _safe_gap(L) * off
    if gL is not None:
        inner = inner + tensorlib.diag_embed(gL)
    gA = Q @ (inner.to(Q.dtype) if Q.dtype.is_complex else inner) @ Q.mH
    return 0.5 * (gA + gA.mH), None


@formula("linalg_eig", save_output=True)
def linalg_eig(ctx, gL=None, gV=None):
    """torch's linalg_eig_backward: with V's columns of unit norm, the part of V^H gV that
    renormalisation removes is projected out, then gA = V^-H (diag(gL) + (V^H gV) /
    conj(E)) V^H, E[i, j] = l_j - l_i. The result is complex; a real A keeps its real part."""
    L, V = ctx.out
    n = L.shape[-1]
    if gV is None:
        inner = tensorlib.diag_embed(gL)
    else:
        VhgV = V.mH @ gV
        VhgV = VhgV - V.mH @ (V * tensorlib.real(VhgV.diagonal(0, -2, -1)).unsqueeze(-2))
        eye = tensorlib.eye(n, dtype=L.dtype, device=L.device)
        E = (L.unsqueeze(-2) - L.unsqueeze(-1)).conj() + eye
        inner = VhgV / E * (1 - eye)
        if gL is not None:
            inner = inner + tensorlib.diag_embed(gL)
    return (_la().solve(V.mH, inner @ V.mH),)


def _qr_tall_backward(Q, R, gQ, gR):
    """m >= n: gA = (gQ + Q syminvadj(triu(gR R^H - Q^H gQ))) R^-H (torch's formula), with
    syminvadj(X) = X + X^H, its diagonal's real part halved."""
    M = 0
    if gR is not None:
        M = gR @ R.mH
    if gQ is not None:
        M = M - Q.mH @ gQ
    M = tensorlib.triu(M)
    M = M + M.mH
    M = M - 0.5 * tensorlib.diag_embed(tensorlib.real(M.diagonal(0, -2, -1))).to(M.dtype)
    B = Q @ M
    if gQ is not None:
        B = B + gQ
    return _la().solve_triangular(R.mH, B, upper=False, left=False)


@formula("linalg_qr", save_output=True)
def linalg_qr(ctx, gQ=None, gR=None):
    """m >= n (reduced, or complete with m == n): the tall formula. m < n: A = [X | Y] with
    X = Q U square and Y = Q V, so V = Q^H Y sends Y the gradient Q gV and adds Y gV^H to
    Q's, and X takes the square formula."""
    A, mode = ctx.args
    Q, R = ctx.out
    m, n = A.shape[-2:]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols.")
    if gQ is None and gR is None:
        return None, None
    if m >= n:
        return _qr_tall_backward(Q, R, gQ, gR), None
    gU = gV = None
    if gR is not None:
        gU, gV = gR[..., :m], gR[..., m:]
        Y = Q @ R[..., m:]
        gQ = Y @ gV.mH if gQ is None else gQ + Y @ gV.mH
    gX = _qr_tall_backward(Q, R[..., :m], gQ, gU)
    gY = Q @ gV if gV is not None else \
        tensorlib.zeros(tuple(A.shape[:-1]) + (n - m,), dtype=gX.dtype, device=gX.device)
    return tensorlib.cat([gX, gY], -1), None


@formula("linalg_cholesky", save_output=True)
def linalg_cholesky(ctx, gL):
    """torch's cholesky_backward (Murray 2016): with T = tril(L^H gL), gA = L^-H Phi L^-1,
    Phi = (T + tril(T, -1)^H) / 2, the Hermitian matrix whose lower triangle is T with its
    diagonal halved."""
    upper = ctx.args[1]
    L = ctx.out.mH if upper else ctx.out
    gL = gL.mH if upper else gL
    T = tensorlib.tril(L.mH @ gL)
    phi = 0.5 * (T + tensorlib.tril(T, -1).mH)
    la = _la()
    gA = la.solve_triangular(L.mH, phi, upper=True)
    return la.solve_triangular(L, gA, upper=False, left=False), None


@formula("linalg_inv", save_output=True)
def linalg_inv(ctx, g):
    Ainv = ctx.out
    return (-(Ainv.mH @ g @ Ainv.mH),)


@formula("linalg_solve", save=(0, 1), save_output=True)
def linalg_solve(ctx, g):
    A, B, left = ctx.args
    X = ctx.out
    la = _la()
    vector = la._vector_rhs(A, B)
    gB = la.solve(A.mH, g, left=left)
    gA = None
    if ctx.needs_input_grad[0]:
        if vector:
            gA = -(gB.unsqueeze(-1) @ conj(X).unsqueeze(-2))
        elif left:
            gA = -(gB @ X.mH)
        else:
            gA = -(X.mH @ gB)
    return gA, (gB if ctx.needs_input_grad[1] else None), None


@formula("linalg_solve_triangular", save=(0,), save_output=True)
def linalg_solve_triangular(ctx, g):
    A, B, upper, left, unitriangular = ctx.args
    X = ctx.out
    gB = _la().solve_triangular(A.mH, g, upper=not upper, left=left,
                                unitriangular=unitriangular)
    gA = None
    if ctx.needs_input_grad[0]:
        gA = -(gB @ X.mH) if left else -(X.mH @ gB)
        gA = tensorlib.triu(gA) if upper else tensorlib.tril(gA)
        if unitriangular:
            gA = gA - tensorlib.diag_embed(gA.diagonal(0, -2, -1))
    return gA, (gB if ctx.needs_input_grad[1] else None), None, None, None


@formula("cholesky_solve", save=(1,), save_output=True)
def cholesky_solve(ctx, g):
    """PyTorch's cholesky_solve_backward: gB = A^-1 g and, with C = gB X^H + X gB^H,
    gL = -C L (lower) or -U C (upper); L is not masked to its triangle."""
    B, L, upper = ctx.args
    X = ctx.out
    gB = _la().cholesky_solve(g, L, upper=upper)
    gL = None
    if ctx.needs_input_grad[1]:
        C = gB @ X.mH
        C = C + C.mH
        gL = -(L @ C) if upper else -(C @ L)
    return (gB if ctx.needs_input_grad[0] else None), gL, None


def _prod_others(S):
    """P[..., i] = prod_{j != i} S[..., j], exact when some S are zero."""
    n = S.shape[-1]
    eye = tensorlib.eye(n, dtype=tensorlib.bool, device=S.device)
    return tensorlib.where(eye, tensorlib.ones((), dtype=S.dtype, device=S.device),
                           S.unsqueeze(-2)).prod(-1)


@formula("linalg_det", save=(0,), save_output=True)
def linalg_det(ctx, g):
    """gA = g conj(det A) A^-H where A is invertible; at (near) singular matrices torch's
    SVD form of the cofactor matrix, g conj(det U det Vh) U diag(prod_{j != i} s_j) Vh,
    which stays exact when the rank drops."""
    A, det = ctx.args[0], ctx.out
    la = _la()
    scale = (g * conj(det)).unsqueeze(-1).unsqueeze(-1)
    n = A.shape[-1]
    if n == 0:
        return (A * 0,)
    eps = 1e-7 if A.dtype in (tensorlib.float32, tensorlib.complex64) else 1e-15
    size = tensorlib.abs(A).amax((-2, -1)).detach()
    singular = tensorlib.abs(det).detach() <= eps * size ** n
    if not bool(singular.any()):
        return (scale * la.inv(A).mH,)
    U, S, Vh = la.linalg_svd(A)
    alpha = conj(la.det(U) * la.det(Vh))
    cofactor = (U * _prod_others(S).to(U.dtype).unsqueeze(-2)) @ Vh
    by_svd = (g * alpha).unsqueeze(-1).unsqueeze(-1) * cofactor
    if bool(singular.all()):
        return (by_svd,)
    eye = tensorlib.eye(n, dtype=A.dtype, device=A.device)
    mask = singular.unsqueeze(-1).unsqueeze(-1)
    safe = tensorlib.where(mask, eye, A)                # no inverse of the singular ones
    return (tensorlib.where(mask, by_svd, scale * la.inv(safe).mH),)


@formula("linalg_slogdet", save=(0,), save_output=True)
def linalg_slogdet(ctx, g_sign=None, g_logabsdet=None):
    """gA = g A^-H with g = g_logabsdet (and, complex, + i Im(conj(sign) g_sign): the
    sign moves with the imaginary part of tr(A^-1 dA)); real signs have no gradient."""
    A, sign = ctx.args[0], ctx.out[0]
    g = g_logabsdet
    if g_sign is not None and A.dtype.is_complex:
        turn = 1j * tensorlib.imag(conj(sign) * g_sign)
        g = turn if g is None else g + turn
    if g is None:
        return (None,)
    return (g.unsqueeze(-1).unsqueeze(-1) * _la().inv(A).mH,)
