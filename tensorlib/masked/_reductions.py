"""Masked reductions (torch.masked): the masked-out elements take the reduction's
identity, so they do not count; a fully masked slice gives that identity (sum 0, prod 1,
amax -inf, logsumexp -inf, norm 0) or nan where there is none (mean, median, var, std)."""
import tensorlib
from tensorlib.masked._common import (canonical_dim, check_strided, fill_masked, input_mask,
                                      sum_dtype)

__all__ = ["sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median", "norm",
           "var", "std", "logsumexp"]


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A001,A002
    """Sum of the masked-in elements over `dim` (all dims when None)."""
    check_strided("sum", input)
    dtype = sum_dtype(input, dtype)
    dims = canonical_dim(dim, input.dim())
    return tensorlib.sum(fill_masked("sum", input, mask), dims, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """Product of the masked-in elements over `dim` (all dims when None)."""
    check_strided("prod", input)
    dtype = sum_dtype(input, dtype)
    dims = canonical_dim(dim, input.dim())
    result = fill_masked("prod", input, mask).to(dtype=dtype)
    for d in reversed(dims):
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def _extremum(name, input, dim, keepdim, dtype, mask):  # noqa: A002
    check_strided(name, input)
    dtype = input.dtype if dtype is None else dtype
    filled = fill_masked(name, input, mask)
    reduce = tensorlib.amax if name == "amax" else tensorlib.amin
    return reduce(filled, canonical_dim(dim, filled.dim()), bool(keepdim)).to(dtype=dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """Largest masked-in element over `dim`; -inf (the dtype's min) where all are masked."""
    return _extremum("amax", input, dim, keepdim, dtype, mask)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """Smallest masked-in element over `dim`; +inf (the dtype's max) where all are masked."""
    return _extremum("amin", input, dim, keepdim, dtype, mask)


def _arg_extremum(name, input, dim, keepdim, dtype, mask):  # noqa: A002
    check_strided(name, input)
    dtype = input.dtype if dtype is None else dtype   # as torch: the index in input's dtype
    filled = fill_masked("amax" if name == "argmax" else "amin", input, mask)
    reduce = tensorlib.argmax if name == "argmax" else tensorlib.argmin
    return reduce(filled, dim, bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """Index of the largest masked-in element (cast to `dtype`, default the input's)."""
    return _arg_extremum("argmax", input, dim, keepdim, dtype, mask)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """Index of the smallest masked-in element (cast to `dtype`, default the input's)."""
    return _arg_extremum("argmin", input, dim, keepdim, dtype, mask)


def _count(input, mask, dims, keepdim):  # noqa: A002
    """How many elements are masked in per output element (int64)."""
    if mask is None:
        ones = tensorlib.ones(input.shape, dtype=tensorlib.int64, device=input.device)
        return tensorlib.sum(ones, dims, keepdim)
    return tensorlib.sum(mask, dims, keepdim, dtype=tensorlib.int64)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """Mean of the masked-in elements; nan where all are masked (0 / 0)."""
    check_strided("mean", input)
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be "
                         f"either a floating point or complex dtype. Got: {dtype}")
    dims = canonical_dim(dim, input.dim())
    inmask = None if mask is None else input_mask(input, mask)
    count = _count(input, inmask, dims, bool(keepdim))
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """Median of the masked-in elements along one dim (nanmedian over the input with the
    masked-out elements as nan); nan where all are masked, which integer inputs refuse."""
    check_strided("median", input)
    dtype = input.dtype if dtype is None else dtype
    dim_ = canonical_dim(dim, input.dim())[0]
    is_float = input.is_floating_point()
    if not is_float:
        input = input.to(dtype=tensorlib.float32)  # noqa: A001
    output = tensorlib.nanmedian(fill_masked("median", input, mask), dim_, keepdim).values
    if is_float:
        return output
    if not bool(tensorlib.isnan(output).any()):
        return output.to(dtype=dtype)
    raise ValueError("masked median expects no fully masked out rows if dtype is not "
                     "floating point")


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """Vector norm of the masked-in elements (they count as 0; as +inf for ord=-inf)."""
    check_strided("norm", input)
    dtype = input.dtype if dtype is None else dtype
    filled = fill_masked("norm", input, mask, ord)
    return tensorlib.linalg.vector_norm(filled, ord, canonical_dim(dim, input.dim()),
                                        bool(keepdim), dtype=dtype)


def _real_dtype(dtype):
    return {tensorlib.complex64: tensorlib.float32,
            tensorlib.complex128: tensorlib.float64}.get(dtype, dtype)


def _std_var(input, dim, unbiased, correction_opt, keepdim, dtype, mask, take_sqrt):  # noqa: A002
    check_strided("std" if take_sqrt else "var", input)
    if unbiased is not None and correction_opt is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    correction = 1.0
    if unbiased is not None:
        correction = 1.0 if unbiased else 0.0
    if correction_opt is not None:
        correction = float(correction_opt)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = tensorlib.float32
    compute_dtype = dtype
    if not (compute_dtype.is_floating_point or compute_dtype.is_complex):
        compute_dtype = tensorlib.float32
    dims = canonical_dim(dim, input.dim())
    inmask = None if mask is None else input_mask(input, mask)
    count = _count(input, inmask, dims, True)
    sample_mean = tensorlib.divide(sum(input, dim, keepdim=True, dtype=dtype, mask=inmask),
                                   count)
    x = tensorlib.subtract(input, sample_mean)
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute_dtype, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if correction != 0:
        count = count.to(_real_dtype(compute_dtype))
        count = tensorlib.subtract(count, correction)
        count = tensorlib.maximum(count, count.new_zeros([]))
    output = tensorlib.divide(total, count).to(dtype=dtype)
    return tensorlib.sqrt(output) if take_sqrt else output


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,  # noqa: A002
        mask=None):
    """Variance of the masked-in elements (correction 1 by default); nan where the
    masked-in count is at most the correction."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,  # noqa: A002
        mask=None):
    """Standard deviation of the masked-in elements: sqrt of the masked var."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """log(sum(exp)) of the masked-in elements; -inf where all are masked."""
    check_strided("logsumexp", input)
    dtype = input.dtype if dtype is None else dtype
    filled = fill_masked("amax", input, mask)
    return tensorlib.logsumexp(filled, canonical_dim(dim, input.dim()),
                               keepdim=keepdim).to(dtype=dtype)
