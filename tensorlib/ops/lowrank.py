"""svd_lowrank and pca_lowrank: randomized low-rank SVD (Halko, Martinsson and Tropp, 2009).
A Gaussian test matrix drawn from the global generator is pushed through A and A^H `niter`
times, orthonormalised by QR each time; the SVD of the small projection gives the factors."""
__all__ = ["pca_lowrank", "svd_lowrank"]


def _basis(A, q, niter, M):
    """Q with orthonormal columns such that Q Q^H (A - M) approximates A - M."""
    from tensorlib import linalg
    from tensorlib.ops.random import randn
    dtype = A.dtype if A.dtype.is_floating_point or A.dtype.is_complex else None
    R = randn(A.shape[-1], q, dtype=dtype, device=A.device)

    def times(X, Y):
        return X @ Y if M is None else X @ Y - M @ Y

    def times_h(X, Y):
        return X.mH @ Y if M is None else X.mH @ Y - M.mH @ Y
    Q = linalg.qr(times(A, R)).Q
    for _ in range(niter):
        Q = linalg.qr(times_h(A, Q)).Q
        Q = linalg.qr(times(A, Q)).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    from tensorlib import linalg
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    wide = m < n
    if wide:
        A = A.mH
        M = None if M is None else M.mH
    Q = _basis(A, q, niter, M)
    B = Q.mH @ A if M is None else Q.mH @ A - Q.mH @ M
    U, S, Vh = linalg.svd(B, full_matrices=False)
    U, V = Q @ U, Vh.mH
    return (V, S, U) if wide else (U, S, V)


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^H, of rank q (q a slight overestimate of A's)."""
    return _svd_lowrank(A, 6 if q is None else q, 2 if niter is None else niter, M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """The low-rank SVD of A with its column means removed (when `center`)."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter, None)
