"""Matrix decompositions and solvers (torch.linalg's svd, qr, eigh, cholesky, inv, solve,
solve_triangular, det, slogdet, lstsq, eig), batched over leading dims.

The factorisations run in LAPACK through numpy/scipy on the host. On a device other than the
CPU the input is copied to the host, factorised there and the results are copied back to the
input's device (documented in docs/linalg.md): a LAPACK call is far cheaper to reuse than to
rewrite per backend. Everything around them (their derivatives in
autograd/formulas/decompositions.py, pinv, matrix_rank, matrix_power, multi_dot, cross,
vander, the spectral norms) is written in tensorlib ops and runs on the device."""
from collections import namedtuple

import numpy as np

import tensorlib._C.dtypes as dt
from tensorlib import _capture_state
from tensorlib.ops._opdef import differentiable

__all__ = ["det", "logdet", "slogdet", "inverse", "cholesky", "qr", "matrix_power",
           "pinverse", "svd", "cholesky_inverse", "cholesky_solve", "cross"]

svd_result = namedtuple("svd", ["U", "S", "Vh"])
torch_svd_result = namedtuple("svd", ["U", "S", "V"])
qr_result = namedtuple("qr", ["Q", "R"])
eigh_result = namedtuple("eigh", ["eigenvalues", "eigenvectors"])
eig_result = namedtuple("eig", ["eigenvalues", "eigenvectors"])
slogdet_result = namedtuple("slogdet", ["sign", "logabsdet"])
lstsq_result = namedtuple("lstsq", ["solution", "residuals", "rank", "singular_values"])
cholesky_ex_result = namedtuple("cholesky_ex", ["L", "info"])
inv_ex_result = namedtuple("inv_ex", ["inverse", "info"])


class LinAlgError(RuntimeError):
    """A matrix for which the decomposition does not exist (torch.linalg.LinAlgError)."""


# ---- host round trip -----------------------------------------------------------------------
def _host(x):
    """x as a numpy array on the host (a copy when x lives on another device). Under
    tensorlib.compile this ends the recorded segment, as a part of the op, not a break in
    the program (fullgraph=True allows it)."""
    with _capture_state.internal_reads():
        return x.detach().cpu().numpy()


def _back(array, like, dtype=None):
    import tensorlib
    array = np.ascontiguousarray(array).reshape(np.shape(array))   # (which makes 0-d 1-d)
    out = tensorlib.from_numpy(array) if array.size else \
        tensorlib.zeros(array.shape, dtype=dtype or like.dtype)
    if dtype is not None:
        out = out.to(dtype)
    return out if like.device.type == "cpu" else out.to(like.device)


# the ops that take complex matrices (their LAPACK routines are numpy's complex ones)
_COMPLEX_OK = {"linalg.svd", "linalg.svdvals", "svd", "linalg.eigh", "linalg.eigvalsh",
               "linalg.eig", "linalg.eigvals", "linalg.qr", "linalg.inv", "linalg.inv_ex",
               "linalg.solve", "linalg.solve_triangular", "linalg.slogdet", "linalg.det",
               "linalg.pinv", "linalg.cholesky", "linalg.cholesky_ex", "linalg.lstsq",
               "linalg.matrix_rank", "cholesky_solve", "cholesky_inverse"}


def _check_float(name, A):
    if A.dtype.is_complex:
        if name not in _COMPLEX_OK:
            raise NotImplementedError(f"{name}: complex inputs ({A.dtype.scalar_name}) are "
                                      f"not supported yet")
        if A.device.type != "cpu":
            raise RuntimeError(f"{name}: complex tensors ({A.dtype}) are only supported on "
                               f"the cpu so far")
        return
    if A.dtype not in (dt.float32, dt.float64):
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got "
                           f"{A.dtype.scalar_name}" if A.dtype.is_floating_point else
                           f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype.scalar_name}")


def _check_matrix(name, A, square=False):
    _check_float(name, A)
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


# ---- SVD -----------------------------------------------------------------------------------
@differentiable("linalg_svd")
def _svd(A, full_matrices):
    a = _host(A)
    if a.size == 0:
        m, n = a.shape[-2:]
        k = min(m, n)
        batch = a.shape[:-2]
        u = np.zeros(batch + (m, m if full_matrices else k), a.dtype)
        s = np.zeros(batch + (k,), a.real.dtype)
        vh = np.zeros(batch + (n if full_matrices else k, n), a.dtype)
        if full_matrices:
            u[...] = np.eye(m, dtype=a.dtype)
            vh[...] = np.eye(n, dtype=a.dtype)
    else:
        _check_svd_input(a)
        infinite = _infinite_matrices(a)
        if infinite is not None:
            a = np.where(infinite[..., None, None], 0, a)
        try:
            u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
        except np.linalg.LinAlgError:
            raise LinAlgError("linalg.svd: The algorithm failed to converge because the input "
                              "matrix is ill-conditioned or has too many repeated singular "
                              "values.") from None
        if infinite is not None:
            for part in (u, s, vh):
                part[infinite] = np.nan
    return svd_result(_back(u, A), _back(s, A), _back(vh, A))


def _infinite_matrices(a):
    """Which matrices of the batch hold an infinity (a bool array of the batch shape, or None
    where none does). LAPACK's SVD iterates forever on some of them (numpy's batched float32
    svd hung); PyTorch's gives NaN singular values for them. They are decomposed as zeros
    here and their U, S and Vh set to NaN (PyTorch's U and Vh are whatever LAPACK left)."""
    inf = np.isinf(a)
    if not inf.any():
        return None
    return inf.any(axis=(-2, -1))


def _check_svd_input(a):
    """A NaN makes LAPACK's SVD fail to converge: PyTorch's LinAlgError (a RuntimeError, which
    callers catch), naming the first batch element that has one."""
    nan = np.isnan(a)
    if not nan.any():
        return
    per_matrix = nan.reshape(-1, a.shape[-2] * a.shape[-1]).any(-1)
    where = "" if a.ndim == 2 else f" (Batch element {int(np.flatnonzero(per_matrix)[0])}):"
    raise LinAlgError(f"linalg.svd:{where} The algorithm failed to converge because the input "
                      f"matrix contained non-finite values.")


def linalg_svd(A, full_matrices=True, *, driver=None):
    """A = U diag(S) Vh, singular values descending."""
    _check_matrix("linalg.svd", A)
    return _svd(A, bool(full_matrices))


def svdvals(A, *, driver=None):
    _check_matrix("linalg.svdvals", A)
    return _svd(A, False).S


def svd(input, some=True, compute_uv=True):  # noqa: A002
    """torch.svd: (U, S, V) with V (not Vh); reduced unless some=False."""
    _check_matrix("svd", input)
    U, S, Vh = _svd(input, not some)
    if not compute_uv:
        import tensorlib
        return torch_svd_result(tensorlib.zeros_like(U), S, tensorlib.zeros_like(Vh.mT))
    return torch_svd_result(U, S, Vh.mT)


# ---- symmetric eigendecomposition ---------------------------------------------------------
@differentiable("linalg_eigh")
def _eigh(A, uplo):
    a = _host(A)
    if a.size == 0:
        w, v = np.zeros(a.shape[:-1], a.real.dtype), np.zeros(a.shape, a.dtype)
    else:
        w, v = np.linalg.eigh(a, UPLO=uplo)
    return eigh_result(_back(w, A), _back(v, A))


def _check_uplo(name, UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"{name}: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors of a symmetric matrix, read from
    its UPLO triangle."""
    _check_matrix("linalg.eigh", A, square=True)
    _check_uplo("linalg.eigh", UPLO)
    return _eigh(A, UPLO)


def eigvalsh(A, UPLO="L"):
    _check_matrix("linalg.eigvalsh", A, square=True)
    _check_uplo("linalg.eigvalsh", UPLO)
    return _eigh(A, UPLO).eigenvalues


# ---- general eigendecomposition ------------------------------------------------------------
@differentiable("linalg_eig")
def _eig(A):
    """LAPACK geev through numpy: eigenvectors of unit norm, each scaled so that its
    largest component is real (LAPACK's normalisation, which torch's results share)."""
    a = _host(A)
    whole = dt.complex64 if A.dtype in (dt.float32, dt.complex64) else dt.complex128
    if a.size == 0:
        w, v = np.zeros(a.shape[:-1], whole.np), np.zeros(a.shape, whole.np)
    else:
        w, v = np.linalg.eig(a)
    return eig_result(_back(w.astype(whole.np), A, whole), _back(v.astype(whole.np), A, whole))


def _check_cpu_result(name, A):
    if A.device.type != "cpu":
        whole = "complex64" if A.dtype in (dt.float32, dt.complex64) else "complex128"
        raise RuntimeError(f"{name}: its complex results ({whole}) are only supported on the "
                           f"cpu so far (the input is on {A.device}); move it with .cpu() "
                           f"first")


def eig(A):
    """Eigenvalues and eigenvectors of a general square matrix: complex results, in the
    order LAPACK returns them (no sorting, as torch)."""
    _check_matrix("linalg.eig", A, square=True)
    _check_cpu_result("linalg.eig", A)
    return _eig(A)


def eigvals(A):
    _check_matrix("linalg.eigvals", A, square=True)
    _check_cpu_result("linalg.eigvals", A)
    return _eig(A).eigenvalues


# ---- QR --------------------------------------------------------------------------------------
@differentiable("linalg_qr")
def _qr(A, mode):
    a = _host(A)
    m, n = a.shape[-2:]
    if a.size == 0:
        k = m if mode == "complete" else min(m, n)
        q = np.broadcast_to(np.eye(m, k, dtype=a.dtype), a.shape[:-2] + (m, k)).copy()
        r = np.zeros(a.shape[:-2] + (k, n), a.dtype)
    else:
        q, r = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        import tensorlib
        return qr_result(tensorlib.empty(0, dtype=A.dtype, device=A.device), _back(r, A))
    return qr_result(_back(q, A), _back(r, A))


def linalg_qr(A, mode="reduced"):
    _check_matrix("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    return _qr(A, mode)


def qr(input, some=True):  # noqa: A002
    return linalg_qr(input, "reduced" if some else "complete")


# ---- Cholesky --------------------------------------------------------------------------------
def _potrf(a, upper):
    """(factor, info) per matrix of a batch: info 0, or the order of the first leading minor
    that is not positive-definite (LAPACK's potrf)."""
    from scipy.linalg import lapack
    flat = a.reshape((int(np.prod(a.shape[:-2])),) + a.shape[-2:])
    out = np.zeros_like(flat)
    info = np.zeros(flat.shape[0], np.int32)
    potrf = lapack.get_lapack_funcs("potrf", (a,))          # s/d/c/z by dtype
    for i, m in enumerate(flat):
        c, inf = potrf(m, lower=not upper, clean=True)
        out[i], info[i] = c, max(inf, 0)
    return out.reshape(a.shape), info.reshape(a.shape[:-2])


@differentiable("linalg_cholesky")
def _cholesky(A, upper):
    factor, info = _potrf(_host(A), upper)
    if info.any():
        order = int(info[info > 0].flat[0])
        where = "" if info.ndim == 0 else \
            f" (Batch element {int(np.flatnonzero(info.reshape(-1))[0])})"
        raise LinAlgError(f"linalg.cholesky:{where} The factorization could not be completed "
                          f"because the input is not positive-definite (the leading minor of "
                          f"order {order} is not positive-definite).")
    return _back(factor, A)


def linalg_cholesky(A, *, upper=False):
    """L with A = L L^H (or U with A = U^H U when upper), from A's lower (upper) triangle."""
    _check_matrix("linalg.cholesky", A, square=True)
    return _cholesky(A, bool(upper))


def cholesky(input, upper=False):  # noqa: A002
    return linalg_cholesky(input, upper=upper)


def cholesky_ex(A, *, upper=False, check_errors=False):
    """(L, info): info > 0 marks the order of the failing leading minor instead of raising."""
    _check_matrix("linalg.cholesky_ex", A, square=True)
    factor, info = _potrf(_host(A), bool(upper))
    if check_errors and info.any():
        return cholesky_ex_result(_cholesky(A, bool(upper)), None)
    import tensorlib
    if A.requires_grad and tensorlib.is_grad_enabled() and not info.any():
        L = _cholesky(A, bool(upper))
    else:
        L = _back(factor, A)
    return cholesky_ex_result(L, _back(info, A, dt.int32))


# ---- inverse, solve, determinant -------------------------------------------------------------
def _getrf_info(a):
    """Per matrix: 0, or the 1-based index of the first zero pivot of LU (LAPACK getrf)."""
    from scipy.linalg import lapack
    flat = a.reshape((-1,) + a.shape[-2:])
    getrf = lapack.get_lapack_funcs("getrf", (a,))         # s/d/c/z by dtype
    info = np.array([max(getrf(m)[2], 0) for m in flat], np.int32)
    return info.reshape(a.shape[:-2])


def _singular_error(name, info):
    k = int(info[info > 0].flat[0])
    where = "" if info.ndim == 0 else \
        f" (Batch element {int(np.flatnonzero(info.reshape(-1))[0])})"
    return LinAlgError(f"{name}:{where} The diagonal element {k} is zero, the inversion could "
                       f"not be completed because the input matrix is singular.")


@differentiable("linalg_inv")
def _inv(A):
    a = _host(A)
    if a.size == 0:
        return _back(a.copy(), A)
    info = _getrf_info(a)
    if info.any():
        raise _singular_error("linalg.inv", info)
    return _back(np.linalg.inv(a), A)


def inv(A):
    _check_matrix("linalg.inv", A, square=True)
    return _inv(A)


def inverse(input):  # noqa: A002
    return inv(input)


def inv_ex(A, *, check_errors=False):
    _check_matrix("linalg.inv_ex", A, square=True)
    info = _getrf_info(_host(A)) if A.numel() else np.zeros(A.shape[:-2], np.int32)
    if info.any():
        if check_errors:
            raise _singular_error("linalg.inv_ex", info)
        import tensorlib
        return inv_ex_result(tensorlib.full(A.shape, float("nan"), dtype=A.dtype,
                                            device=A.device), _back(info, A, dt.int32))
    return inv_ex_result(_inv(A), _back(info, A, dt.int32))


def _vector_rhs(A, B):
    """torch's rule: B is a batch of vectors when it is 1-D or has A's shape minus the last
    dim."""
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


@differentiable("linalg_solve")
def _solve(A, B, left):
    a, b = _host(A), _host(B)
    vector = _vector_rhs(A, B)
    if not left:                   # X A = B  <=>  A^T X^T = B^T
        a = np.swapaxes(a, -1, -2)
        b = b if vector else np.swapaxes(b, -1, -2)
    info = _getrf_info(a) if a.size else np.zeros(a.shape[:-2], np.int32)
    if info.any():
        k = int(info[info > 0].flat[0])
        raise LinAlgError(f"linalg.solve: The solver failed because the input matrix is "
                          f"singular. (U[{k},{k}] is zero)")
    if vector:
        x = np.linalg.solve(a, b[..., None])[..., 0]
    else:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        x = np.linalg.solve(np.broadcast_to(a, batch + a.shape[-2:]),
                            np.broadcast_to(b, batch + b.shape[-2:]))
        if not left:
            x = np.swapaxes(x, -1, -2)
    return _back(x, A)


def solve(A, B, *, left=True):
    """X with A X = B (X A = B when left=False); B may be a batch of vectors."""
    _check_matrix("linalg.solve", A, square=True)
    _check_same("linalg.solve", A, B)
    n = A.shape[-1]
    vector = _vector_rhs(A, B)
    if vector and B.shape[-1] != n or not vector and \
            (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} "
                           f"and {'x'.join(str(s) for s in B.shape[-2:])})")
    return _solve(A, B, bool(left))


def _check_same(name, A, B):
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{name}: Expected A and B to have the same dtype, but found A of "
                           f"type {A.dtype.scalar_name} and B of type {B.dtype.scalar_name} "
                           f"instead")
    if A.device != B.device:
        raise RuntimeError(f"{name}: Expected all tensors to be on the same device, but found "
                           f"at least two devices, {A.device} and {B.device}!")


@differentiable("linalg_solve_triangular")
def _solve_triangular(A, B, upper, left, unitriangular):
    a, b = _host(A), _host(B)
    if not left:                    # X A = B  <=>  A^T X^T = B^T, lower <-> upper
        a, b, upper = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not upper
    a = np.triu(a) if upper else np.tril(a)            # only that triangle is read
    if unitriangular:
        a = a.copy()
        np.einsum("...ii->...i", a)[...] = 1
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    # numpy's batched LU solve: exact for a triangular matrix (no fill-in), and it avoids
    # scipy's per-matrix trtrs calls (one Python round trip and BLAS wake-up each)
    try:
        x = np.linalg.solve(a, b) if b.size else np.zeros(b.shape, np.result_type(a, b))
    except np.linalg.LinAlgError:
        x = _substitute(a, b, upper)
    if not left:
        x = np.swapaxes(x, -1, -2)
    return _back(x, A)


def _substitute(a, b, upper):
    """Triangular solves by BLAS trsm, matrix by matrix: a zero on the diagonal gives inf and
    nan, as PyTorch's solve does, where LU refuses the singular matrix."""
    from scipy.linalg.blas import get_blas_funcs
    trsm = get_blas_funcs("trsm", (a, b))
    x = np.empty(b.shape, np.result_type(a, b))
    for index in np.ndindex(*b.shape[:-2]):
        x[index] = trsm(1.0, a[index], b[index], lower=not upper)
    return x


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with A X = B for triangular A (only its `upper` or lower triangle is read)."""
    _check_matrix("linalg.solve_triangular", A, square=True)
    _check_same("linalg.solve_triangular", A, B)
    if B.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    return _solve_triangular(A, B, bool(upper), bool(left), bool(unitriangular))


@differentiable("linalg_slogdet")
def _slogdet(A):
    a = _host(A)
    sign, logabs = np.linalg.slogdet(a)
    return slogdet_result(_back(np.asarray(sign, a.dtype), A),
                          _back(np.asarray(logabs, a.real.dtype), A))


def slogdet(A):
    """(sign, log|det A|)."""
    _check_matrix("linalg.slogdet", A, square=True)
    return _slogdet(A)


@differentiable("linalg_det")
def _det(A):
    return _back(np.asarray(np.linalg.det(_host(A))), A)


def det(A):
    _check_matrix("linalg.det", A, square=True)
    return _det(A)


def logdet(input):  # noqa: A002
    """log det A: nan for a negative determinant, -inf for zero."""
    import tensorlib
    sign, logabs = slogdet(input)
    return tensorlib.where(sign < 0, float("nan"), logabs)


# ---- built from the factorisations (tensorlib ops, on the device) -----------------------------
def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """Moore-Penrose inverse V diag(1/s) U^H over the singular values above
    max(atol, rtol * s_max) (rtol defaults to eps * max(m, n) when atol is not given).
    hermitian: from eigh of A's lower triangle, Q diag(1/l) Q^H over |l| above the cutoff.
    rcond is the older NumPy-style signature's relative tolerance (atol 0): it may be given
    positionally, never together with atol or rtol."""
    import tensorlib
    if rcond is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg.pinv(): rcond (the relative tolerance of the (A, rcond, "
                            "hermitian) signature) cannot be combined with atol or rtol")
        rtol = rcond
    _check_matrix("linalg.pinv", A)
    if hermitian:
        L, Q = _eigh(A, "L")
        S = L.abs()
        keep = S > _cutoff(A, S, atol, rtol)
        l_inv = tensorlib.where(keep, 1.0 / tensorlib.where(keep, L, 1.0), 0.0)
        return (Q * l_inv.to(Q.dtype).unsqueeze(-2)) @ Q.mH
    U, S, Vh = _svd(A, False)
    cutoff = _cutoff(A, S, atol, rtol)
    keep = S > cutoff
    s_inv = tensorlib.where(keep, 1.0 / tensorlib.where(keep, S, 1.0), 0.0)
    return (Vh.mH * s_inv.to(U.dtype).unsqueeze(-2)) @ U.mH


def _cutoff(A, S, atol, rtol):
    single = A.dtype in (dt.float32, dt.complex64)
    eps = float(np.finfo(np.float32 if single else np.float64).eps)
    if rtol is None:
        rtol = eps * max(A.shape[-2:]) if atol is None or atol == 0 else 0.0
    s_max = S.amax(-1, keepdim=True) if S.shape[-1] else S.sum(-1, keepdim=True)
    tol = s_max * (rtol.unsqueeze(-1) if hasattr(rtol, "shape") else rtol)
    if atol is not None:
        tol = tol.clamp(min=float(atol)) if not hasattr(atol, "shape") else \
            __import__("tensorlib").maximum(tol, atol.unsqueeze(-1))
    return tol


def pinverse(input, rcond=1e-15):  # noqa: A002
    return pinv(input, rtol=rcond)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None):
    """The number of singular values (|eigenvalues| when hermitian) above the tolerance (as
    pinv)."""
    _check_matrix("linalg.matrix_rank", A)
    if hermitian and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_rank: A must be batches of square matrices, but "
                           f"they are {A.shape[-2]} by {A.shape[-1]} matrices")
    if tol is not None:
        atol, rtol = tol, 0.0
    S = _eigh(A.detach(), "L").eigenvalues.abs() if hermitian else svdvals(A.detach())
    return (S > _cutoff(A, S, atol, rtol)).sum(-1)


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")
_PART_OF = {dt.complex64: dt.float32, dt.complex128: dt.float64}


def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares X minimising ||A X - B||: the solution is pinv(A) @ B (differentiable,
    on the device). What else is returned follows the driver as in torch (default gelsy):
    rank for all but gels, singular values for gelsd/gelss, residuals (squared moduli
    summed) for all but gelsy when A is tall and of full rank."""
    import tensorlib
    _check_matrix("linalg.lstsq", A)
    _check_same("linalg.lstsq", A, B)
    if driver is None:
        driver = "gelsy"
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    vector = B.dim() == A.dim() - 1
    rhs = B.unsqueeze(-1) if vector else B
    if rhs.shape[-2] != A.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2), "
                           f"but got {A.shape[-2]} and {rhs.shape[-2]}")
    part = _PART_OF.get(A.dtype, A.dtype)
    rtol = rcond if rcond is not None else None
    X = pinv(A, rtol=rtol) @ rhs
    S = svdvals(A.detach())
    rank = (S > _cutoff(A, S, None, rtol)).sum(-1)
    m, n = A.shape[-2:]
    residuals = tensorlib.empty(0, dtype=part, device=A.device)
    if driver != "gelsy" and m > n and bool((rank == n).all()):
        residuals = ((A @ X - rhs).abs() ** 2).sum(-2)
    if vector:
        X = X.squeeze(-1)
    if driver == "gels":
        rank = tensorlib.empty(0, dtype=tensorlib.int64, device=A.device)
    if driver not in ("gelsd", "gelss"):
        S = tensorlib.empty(0, dtype=part, device=A.device)
    return lstsq_result(X, residuals, rank, S)


def matrix_power(A, n):
    """A^n by repeated squaring; n < 0 inverts first; n = 0 gives the identity."""
    import tensorlib
    _check_matrix("linalg.matrix_power", A, square=True)
    if not isinstance(n, int):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if n == 0:
        eye = tensorlib.eye(A.shape[-1], dtype=A.dtype, device=A.device)
        return eye.expand(A.shape).clone()
    base = inv(A) if n < 0 else A
    n = abs(n)
    result = None
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


def multi_dot(tensors):
    """The product of a chain of matrices (the first may be 1-D, the last too), multiplied in
    the order that costs the fewest flops."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first_vec, last_vec = tensors[0].dim() == 1, tensors[-1].dim() == 1
    mats = list(tensors)
    if first_vec:
        mats[0] = mats[0].unsqueeze(0)
    if last_vec:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i, m in enumerate(mats):
        if m.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {m.dim()}D")
    dims = [mats[0].shape[0]] + [m.shape[1] for m in mats]
    order = _chain_order(dims)
    out = _chain_product(mats, order, 0, len(mats) - 1)
    if first_vec:
        out = out.squeeze(0)
    if last_vec:
        out = out.squeeze(-1)
    return out


def _chain_order(dims):
    """The classic matrix-chain dynamic programme: split[i][j] of the cheapest product."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain_product(mats, split, i, j):
    if i == j:
        return mats[i]
    k = split[i][j]
    return _chain_product(mats, split, i, k) @ _chain_product(mats, split, k + 1, j)


def linalg_cross(input, other, *, dim=-1):  # noqa: A002
    """The 3-vector cross product along dim, broadcasting."""
    import tensorlib
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    a, b = tensorlib.broadcast_tensors(input, other)
    if a.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim] if input.dim() else 0} and "
                           f"{other.shape[dim] if other.dim() else 0}")
    a0, a1, a2 = (a.narrow(dim, i, 1) for i in range(3))
    b0, b1, b2 = (b.narrow(dim, i, 1) for i in range(3))
    return tensorlib.cat([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)


def cross(input, other, dim=None):  # noqa: A002
    """torch.cross: dim defaults to the first dim of size 3."""
    if dim is None:
        shape = tuple(__import__("tensorlib").broadcast_shapes(input.shape, other.shape))
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim)


def vander(x, *, N=None):
    """Columns x^0, x^1, ..., x^(N-1) (increasing powers, torch.linalg.vander)."""
    import tensorlib
    if x.dim() < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    ones = tensorlib.ones(tuple(x.shape) + (1,), dtype=x.dtype, device=x.device)
    powers = tensorlib.cumprod(x.unsqueeze(-1).expand(tuple(x.shape) + (n - 1,)), -1)
    return tensorlib.cat([ones, powers], -1)


def cholesky_inverse(input, upper=False):  # noqa: A002
    """(L L^H)^-1 from its Cholesky factor L (U^H U when upper)."""
    import tensorlib
    _check_matrix("cholesky_inverse", input, square=True)
    L = input.mH if upper else input
    eye = tensorlib.eye(L.shape[-1], dtype=L.dtype, device=L.device).expand(L.shape)
    Linv = solve_triangular(L, eye, upper=False)
    return Linv.mH @ Linv


def cholesky_solve(B, L, upper=False):
    """X with (L L^H) X = B (U^H U X = B when upper) from the Cholesky factor, by two
    triangular solves (batch dims broadcast)."""
    _check_float("cholesky_solve", B)
    if B.dim() < 2 or L.dim() < 2:
        raise RuntimeError(f"cholesky_solve: u should have at least 2 dimensions, but has "
                           f"{L.dim()} dimensions instead" if L.dim() < 2 else
                           f"cholesky_solve: b should have at least 2 dimensions, but has "
                           f"{B.dim()} dimensions instead")
    if B.dtype is not L.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{B.dtype.scalar_name} and A of type {L.dtype.scalar_name} "
                           f"instead.")
    if L.shape[-1] != L.shape[-2] or B.shape[-2] != L.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{L.shape[-2]} by {L.shape[-1]} but each b matrix is "
                           f"{B.shape[-2]} by {B.shape[-1]}")
    return _cholesky_solve(B, L, bool(upper))


@differentiable("cholesky_solve")
def _cholesky_solve(B, L, upper):
    """One recorded node: L is a factor of A = L L^H, and its gradient is A's chain rule
    through it, the whole matrix (PyTorch's), where two recorded triangular solves would
    keep only L's triangle."""
    lower = L.mH if upper else L
    Y = solve_triangular(lower, B, upper=False)
    return solve_triangular(lower.mH, Y, upper=True)


TENSOR_METHODS = {"det": det, "logdet": logdet, "slogdet": slogdet, "inverse": inverse,
                  "cholesky": cholesky, "qr": qr, "svd": svd, "pinverse": pinverse,
                  "matrix_power": matrix_power, "cholesky_inverse": cholesky_inverse,
                  "cholesky_solve": cholesky_solve,
                  "cross": cross}
