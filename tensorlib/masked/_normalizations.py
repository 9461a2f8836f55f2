"""Masked normalizations and scans (torch.masked): softmax, log_softmax and softmin over
the masked-in elements (a masked-out element gets 0 probability; a fully masked slice
is nan), normalize (masked-out elements are 0), cumsum/cumprod (masked-out elements add
0 / multiply by 1) and the two-mask logaddexp."""
import tensorlib
import tensorlib.nn.functional as F
from tensorlib.masked._common import canonical_dim, check_strided, fill_masked
from tensorlib.masked._reductions import norm

__all__ = ["softmax", "log_softmax", "softmin", "normalize", "cumsum", "cumprod",
           "logaddexp"]


def _normalization(name, fill, function, input, dim, dtype, mask):  # noqa: A002
    check_strided(name, input)
    dtype = input.dtype if dtype is None else dtype
    dim_ = canonical_dim(dim, input.dim())[0]
    return function(fill_masked(fill, input, mask), dim_, dtype=dtype)


def softmax(input, dim, *, dtype=None, mask=None):  # noqa: A002
    """Softmax over the masked-in elements of `dim` (masked-out ones count as -inf)."""
    return _normalization("softmax", "amax", F.softmax, input, dim, dtype, mask)


def log_softmax(input, dim, *, dtype=None, mask=None):  # noqa: A002
    """log of the masked softmax (-inf at the masked-out elements)."""
    return _normalization("log_softmax", "amax", F.log_softmax, input, dim, dtype, mask)


def softmin(input, dim, *, dtype=None, mask=None):  # noqa: A002
    """Softmin over the masked-in elements of `dim` (masked-out ones count as +inf)."""
    return _normalization("softmin", "amin", F.softmin, input, dim, dtype, mask)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):  # noqa: A002
    """The input divided by the masked norm along `dim` (at least eps); 0 where masked out."""
    check_strided("normalize", input)
    dtype = input.dtype if dtype is None else dtype
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    denom = tensorlib.maximum(nrm, nrm.new_full([], eps))
    return tensorlib.divide(fill_masked("sum", input, mask), denom)


def cumsum(input, dim, *, dtype=None, mask=None):  # noqa: A002
    """Running sum along `dim` in which the masked-out elements add 0."""
    check_strided("cumsum", input)
    dtype = input.dtype if dtype is None else dtype
    dim_ = canonical_dim(dim, input.dim())[0]
    return tensorlib.cumsum(fill_masked("sum", input, mask), dim_, dtype=dtype).to(dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None):  # noqa: A002
    """Running product along `dim` in which the masked-out elements multiply by 1."""
    check_strided("cumprod", input)
    dtype = input.dtype if dtype is None else dtype
    dim_ = canonical_dim(dim, input.dim())[0]
    return tensorlib.cumprod(fill_masked("prod", input, mask), dim_,
                             dtype=dtype).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):  # noqa: A002
    """logaddexp with each operand's masked-out elements as -inf."""
    check_strided("logaddexp", input)
    check_strided("logaddexp", other)
    dtype = input.dtype if dtype is None else dtype
    return tensorlib.logaddexp(fill_masked("amax", input, input_mask),
                               fill_masked("amax", other, other_mask)).to(dtype=dtype)
