"""torch.special's classical orthogonal polynomials of degree n at x, elementwise with
broadcasting: Chebyshev T, U, V, W (and shifted to [0, 1]: at 2x - 1), Hermite H (physicists') and He (probabilists'),
Laguerre L and Legendre P. PyTorch's kernels, vectorised: the three-term recurrence runs
to the largest degree present (one host read of it) and each element keeps its own degree's
value; the boundary values (|x| = 1) and the trigonometric closed forms PyTorch switches to
for high degrees inside (-1, 1) are selected with `where`. Degrees are truncated to
integers; a negative one gives 0. As PyTorch, there is no derivative: the result records no
graph."""
import math

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl

__all__ = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w"]

_HERMITE_LIMIT = {tensorlib.float32: 128, tensorlib.float64: 512}


def _operands(name, x, n):
    if not isinstance(x, TensorImpl) and not isinstance(n, TensorImpl):
        raise TypeError(f"special_{name}() received an invalid combination of arguments - got "
                        f"({type(x).__name__}, {type(n).__name__}), but expected one of: "
                        f"(Tensor x, Tensor n), (Number x, Tensor n), (Tensor x, Number n)")
    dtype = tensorlib.result_type(x, n)
    if not dtype.is_floating_point:
        dtype = tensorlib.get_default_dtype()
    if dtype not in (tensorlib.float32, tensorlib.float64):
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{dtype.scalar_name}'")
    device = (x if isinstance(x, TensorImpl) else n).device
    x = tensorlib.as_tensor(x, dtype=dtype, device=device)
    n = tensorlib.as_tensor(n, dtype=dtype, device=device)
    x, n = tensorlib.broadcast_tensors(x, n)
    finite = tensorlib.isfinite(n)
    degree = tensorlib.where(finite, n.trunc(), tensorlib.full_like(n, -1.0))
    return x, degree


def _recurrence(x, degree, first, step):
    """P_degree(x) per element from P_0 = 1, P_1 = first and P_m = step(m, P_m-2, P_m-1)."""
    top = int(degree.max().item()) if degree.numel() else 0
    p, q = tensorlib.ones_like(x), first
    result = tensorlib.where(degree == 1, q, p)
    for m in range(2, top + 1):
        p, q = q, step(m, p, q)
        result = tensorlib.where(degree == m, q, result)
    return result


def _finish(degree, value):
    return tensorlib.where(degree < 0, tensorlib.zeros_like(value), value)


def _parity(degree, even, odd):
    return tensorlib.where(tensorlib.remainder(degree, 2) == 0, even, odd)


def _chebyshev(name, x, n, first, closed_from, closed, at_one, at_minus_one, shifted=False):
    with tensorlib.no_grad():
        x, degree = _operands(name, x, n)
        if shifted:
            x = x + x - 1
        value = _recurrence(x, degree, first(x),
                            lambda m, p, q: (x + x) * q - p)
        inside = (degree > closed_from) & (x.abs() < 1)
        if inside.any():
            theta = tensorlib.acos(tensorlib.where(inside, x, tensorlib.zeros_like(x)))
            value = tensorlib.where(inside, closed(x, degree, theta), value)
        value = tensorlib.where(x == 1, at_one(degree), value)
        value = tensorlib.where(x == -1, at_minus_one(degree), value)
        return _finish(degree, value)


def chebyshev_polynomial_t(input, n, *, out=None):  # noqa: A002
    r"""T_n(x) (first kind): T_n(cos t) = cos(n t)."""
    return _result(_chebyshev("chebyshev_polynomial_t", input, n, lambda x: x, 6,
                              lambda x, d, t: tensorlib.cos(d * t),
                              lambda d: tensorlib.ones_like(d),
                              lambda d: _parity(d, 1.0, -1.0)), out)


def chebyshev_polynomial_u(input, n, *, out=None):  # noqa: A002
    r"""U_n(x) (second kind): U_n(cos t) = sin((n + 1) t) / sin t."""
    def closed(x, d, t):
        s = tensorlib.sin(t)
        return tensorlib.where(s != 0, tensorlib.sin((d + 1) * t) / s,
                               (d + 1) * tensorlib.cos((d + 1) * t) / x)
    return _result(_chebyshev("chebyshev_polynomial_u", input, n, lambda x: x + x, 8, closed,
                              lambda d: d + 1, lambda d: _parity(d, d + 1, -(d + 1))), out)


def chebyshev_polynomial_v(input, n, *, out=None):  # noqa: A002
    r"""V_n(x) (third kind): V_n(cos t) = cos((n + 1/2) t) / cos(t / 2)."""
    def closed(x, d, t):
        return tensorlib.where(tensorlib.sin(t / 2) != 1,
                               tensorlib.cos((d + 0.5) * t) / tensorlib.cos(t / 2),
                               _parity(d, d + d + 1, -(d + d + 1)))
    return _result(_chebyshev("chebyshev_polynomial_v", input, n, lambda x: x + x - 1, 8,
                              closed, lambda d: tensorlib.ones_like(d),
                              lambda d: _parity(d, d + d + 1, -(d + d + 1))), out)


def chebyshev_polynomial_w(input, n, *, out=None):  # noqa: A002
    r"""W_n(x) (fourth kind): W_n(cos t) = sin((n + 1/2) t) / sin(t / 2)."""
    def closed(x, d, t):
        return tensorlib.where(tensorlib.cos(t / 2) != 1,
                               tensorlib.sin((d + 0.5) * t) / tensorlib.sin(t / 2),
                               tensorlib.where(x > 0, d + d + 1, _parity(d, 1.0, -1.0)))
    return _result(_chebyshev("chebyshev_polynomial_w", input, n, lambda x: x + x + 1, 8,
                              closed, lambda d: d + d + 1, lambda d: _parity(d, 1.0, -1.0)),
                   out)


def shifted_chebyshev_polynomial_t(input, n, *, out=None):  # noqa: A002
    r"""T*_n(x) = T_n(2x - 1), on [0, 1]."""
    return _result(_chebyshev("shifted_chebyshev_polynomial_t", input, n, lambda x: x, 6,
                              lambda x, d, t: tensorlib.cos(d * t),
                              lambda d: tensorlib.ones_like(d),
                              lambda d: _parity(d, 1.0, -1.0), shifted=True), out)


def shifted_chebyshev_polynomial_u(input, n, *, out=None):  # noqa: A002
    r"""U*_n(x) = U_n(2x - 1)."""
    def closed(x, d, t):
        s = tensorlib.sin(t)
        return tensorlib.where(s != 0, tensorlib.sin((d + 1) * t) / s,
                               (d + 1) * tensorlib.cos((d + 1) * t) / x)
    return _result(_chebyshev("shifted_chebyshev_polynomial_u", input, n, lambda x: x + x, 6,
                              closed, lambda d: d + 1, lambda d: _parity(d, d + 1, -(d + 1)),
                              shifted=True), out)


def shifted_chebyshev_polynomial_v(input, n, *, out=None):  # noqa: A002
    r"""V*_n(x) = V_n(2x - 1)."""
    def closed(x, d, t):
        return tensorlib.where(tensorlib.sin(t / 2) != 1,
                               tensorlib.cos((d + 0.5) * t) / tensorlib.cos(t / 2),
                               _parity(d, d + d + 1, -(d + d + 1)))
    return _result(_chebyshev("shifted_chebyshev_polynomial_v", input, n,
                              lambda x: x + x - 1, 6, closed, lambda d: tensorlib.ones_like(d),
                              lambda d: _parity(d, d + d + 1, -(d + d + 1)), shifted=True),
                   out)


def shifted_chebyshev_polynomial_w(input, n, *, out=None):  # noqa: A002
    r"""W*_n(x) = W_n(2x - 1) (PyTorch's closed form from degree 5 on)."""
    def closed(x, d, t):
        return tensorlib.where(tensorlib.cos(t / 2) != 1,
                               tensorlib.sin((d + 0.5) * t) / tensorlib.sin(t / 2),
                               _parity(d, 1.0, -1.0))
    return _result(_chebyshev("shifted_chebyshev_polynomial_w", input, n,
                              lambda x: x + x + 1, 4, closed, lambda d: d + d + 1,
                              lambda d: _parity(d, 1.0, -1.0), shifted=True), out)


def _hermite(name, x, n, first, step):
    with tensorlib.no_grad():
        x, degree = _operands(name, x, n)
        limit = _HERMITE_LIMIT[x.dtype]
        capped = tensorlib.where(degree > limit, tensorlib.zeros_like(degree), degree)
        value = _recurrence(x, capped, first(x), step(x))
        value = tensorlib.where(degree > limit, math.nan, value)
        return _finish(degree, value)


def hermite_polynomial_h(input, n, *, out=None):  # noqa: A002
    r"""H_n(x), physicists': H_m = 2x H_m-1 - 2(m - 1) H_m-2 (NaN past degree 128 in float32,
    512 in float64, as PyTorch)."""
    return _result(_hermite("hermite_polynomial_h", input, n, lambda x: x + x,
                            lambda x: lambda m, p, q: (x + x) * q - (2 * (m - 1)) * p), out)


def hermite_polynomial_he(input, n, *, out=None):  # noqa: A002
    r"""He_n(x), probabilists': He_m = x He_m-1 - (m - 1) He_m-2."""
    return _result(_hermite("hermite_polynomial_he", input, n, lambda x: x,
                            lambda x: lambda m, p, q: x * q - (m - 1) * p), out)


def laguerre_polynomial_l(input, n, *, out=None):  # noqa: A002
    r"""L_n(x): L_m = ((2m - 1 - x) L_m-1 - (m - 1) L_m-2) / m; L_n(0) = 1."""
    with tensorlib.no_grad():
        x, degree = _operands("laguerre_polynomial_l", input, n)
        value = _recurrence(x, degree, 1 - x,
                            lambda m, p, q: ((2 * (m - 1) + (1 - x)) * q - (m - 1) * p) / m)
        value = tensorlib.where(x == 0, tensorlib.ones_like(value), value)
        return _result(_finish(degree, value), out)


def legendre_polynomial_p(input, n, *, out=None):  # noqa: A002
    r"""P_n(x): P_m = ((2m - 1) x P_m-1 - (m - 1) P_m-2) / m; P_n(+-1) = (+-1)^n."""
    with tensorlib.no_grad():
        x, degree = _operands("legendre_polynomial_p", input, n)
        value = _recurrence(x, degree, x,
                            lambda m, p, q: ((2 * (m - 1) + 1) * x * q - (m - 1) * p) / m)
        value = tensorlib.where(x == 1, tensorlib.ones_like(value), value)
        value = tensorlib.where(x == -1, _parity(degree, 1.0, -1.0), value)
        return _result(_finish(degree, value), out)


def _result(value, out):
    if out is None:
        return value
    return out.resize_(value.shape).copy_(value)
