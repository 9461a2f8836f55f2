"""tensorlib.special (torch.special). The functions live in tensorlib/ops/special.py (the
gamma, error-function and Bessel families) and are re-exported here with the aliases
PyTorch gives them (gammaln = lgamma, psi = digamma, expit = sigmoid, ...)."""
from tensorlib.ops import pointwise as _pointwise
from tensorlib.ops.pointwise import erf, erfc, exp2, expm1, log1p  # noqa: F401
from tensorlib.ops.reduction import log_softmax, logsumexp, softmax  # noqa: F401
from tensorlib.ops.special_polynomials import (  # noqa: F401
    chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v,
    chebyshev_polynomial_w, hermite_polynomial_h, hermite_polynomial_he, laguerre_polynomial_l,
    legendre_polynomial_p, shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v, shifted_chebyshev_polynomial_w)
from tensorlib.ops.special_bessel import (  # noqa: F401
    airy_ai, bessel_y0, bessel_y1, erfcx, modified_bessel_k0, modified_bessel_k1,
    scaled_modified_bessel_k0, scaled_modified_bessel_k1)
from tensorlib.ops.special import (bessel_j0, bessel_j1, digamma, entr, erfinv,  # noqa: F401
                                   expit, gammainc, gammaincc, i0, i0e, i1, i1e, lgamma,
                                   log_ndtr, logit, mvlgamma, ndtr, ndtri, polygamma, sinc,
                                   spherical_bessel_j0, xlog1py, xlogy, zeta)

gammaln = lgamma
psi = digamma


def round(input, *, decimals=0):  # noqa: A001,A002
    """torch.special.round always passes decimals: integers raise, as PyTorch's."""
    return _pointwise.round(input, decimals=decimals)


def modified_bessel_i0(input):  # noqa: A002
    """I_0(x): i0's values; as PyTorch's, no derivative (the result records no graph) and no
    half kernel."""
    return _no_graph("modified_bessel_i0", i0, input)


def modified_bessel_i1(input):  # noqa: A002
    """I_1(x): i1's values, without a derivative (as PyTorch's)."""
    return _no_graph("modified_bessel_i1", i1, input)


def _no_graph(name, fn, input):  # noqa: A002
    import tensorlib
    dtype = getattr(input, "dtype", None)
    if dtype in (tensorlib.float16, tensorlib.bfloat16):
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{dtype.scalar_name}'")
    with tensorlib.no_grad():
        return fn(input)


def multigammaln(input, p):  # noqa: A002
    return mvlgamma(input, p)


__all__ = ["bessel_j0", "bessel_j1", "digamma", "entr", "erf", "erfc", "erfinv", "exp2",
           "expit", "expm1", "gammainc", "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e",
           "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr",
           "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy", "zeta",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "spherical_bessel_j0", "modified_bessel_i0",
           "modified_bessel_i1", "airy_ai", "bessel_y0", "bessel_y1", "erfcx",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1"]

from tensorlib.ops import _out  # noqa: E402 - out= on the functions that take it in PyTorch
_out.install(globals(), _out.SPECIAL_RULE, "special.")
