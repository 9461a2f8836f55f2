r"""The matrix maps the orthogonal parametrization needs, composed from tensorlib ops (so
they run on every backend and autograd differentiates them): the matrix exponential, the
product of Householder reflectors, and QR in LAPACK's compact (geqrf) form."""
import math

import tensorlib

_TAYLOR_DEGREE = 18
_SCALED_NORM = 0.5     # ||A / 2^s||_1 at most this: the Taylor tail is below 1e-22


def _eye_like(a):
    n = a.shape[-1]
    return tensorlib.eye(n, dtype=a.dtype, device=a.device).expand(a.shape)


def matrix_exp(a):
    r"""exp(A) of a square matrix or batch, by scaling and squaring over a degree-18 Taylor
    polynomial (Horner); accurate to float64 rounding, differentiable."""
    with tensorlib.no_grad():
        norm = float(a.abs().sum(-2).amax()) if a.numel() else 0.0
    squarings = max(0, math.ceil(math.log2(norm / _SCALED_NORM))) if norm > 0 else 0
    scaled = a / (2.0 ** squarings)
    eye = _eye_like(a)
    result = eye
    for k in range(_TAYLOR_DEGREE, 0, -1):
        result = eye + tensorlib.matmul(scaled, result) / k
    for _ in range(squarings):
        result = tensorlib.matmul(result, result)
    return result


def householder_product(a, tau):
    r"""The first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^H, v_i the i-th
    column of `a` below the diagonal with a 1 on it (torch.linalg.householder_product)."""
    m, n = a.shape[-2], a.shape[-1]
    k = tau.shape[-1]
    reflectors = a.tril(-1) + tensorlib.eye(m, n, dtype=a.dtype, device=a.device)
    q = tensorlib.eye(m, dtype=a.dtype, device=a.device).expand(a.shape[:-2] + (m, m))
    for i in range(k):
        v = reflectors[..., :, i:i + 1]
        v_h = v.mT.conj() if v.is_complex() else v.mT
        q = q - tensorlib.matmul(tensorlib.matmul(q, v), v_h) * tau[..., i:i + 1, None]
    return q[..., :n]


def geqrf(a):
    r"""QR in LAPACK's compact form (torch.geqrf) of a real matrix or batch: R on and above
    the diagonal of the first result, the reflectors below it, and their scales tau.
    Householder's method (LAPACK's dlarfg conventions) in tensorlib ops, so it runs on the
    tensor's device; not differentiable."""
    m, n = a.shape[-2], a.shape[-1]
    with tensorlib.no_grad():
        packed = a.detach().clone()
        taus = []
        for j in range(min(m, n)):
            alpha, tail = packed[..., j, j], packed[..., j + 1:, j]
            tail_norm = tail.norm(dim=-1) if m - j > 1 else tensorlib.zeros_like(alpha)
            untouched = tail_norm == 0     # nothing below the diagonal: H = I, tau = 0
            beta = -tensorlib.copysign(tensorlib.hypot(alpha, tail_norm), alpha)
            tau = tensorlib.where(untouched, 0.0, (beta - alpha) / beta.masked_fill(untouched, 1.0))
            v_tail = tail / (alpha - beta).masked_fill(untouched, 1.0).unsqueeze(-1)
            v = tensorlib.cat([tensorlib.ones_like(alpha).unsqueeze(-1), v_tail], dim=-1)
            rest = packed[..., j:, j + 1:]
            if rest.shape[-1]:
                w = tensorlib.matmul(v.unsqueeze(-2), rest)
                rest.sub_(tau[..., None, None] * v.unsqueeze(-1) * w)
            packed[..., j, j] = tensorlib.where(untouched, alpha, beta)
            packed[..., j + 1:, j] = v_tail
            taus.append(tau)
        tau = (tensorlib.stack(taus, dim=-1) if taus
               else tensorlib.zeros(a.shape[:-2] + (0,), dtype=a.dtype, device=a.device))
    return packed, tau
