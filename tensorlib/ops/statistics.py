"""Statistics with torch's names and rules: cov, corrcoef, quantile, nanquantile, histogram,
histogramdd.
Composites of existing ops (sort, gather, lerp, mm, searchsorted, scatter_add), so they run
on every backend and cov/corrcoef/quantile are differentiable through their parts."""
import builtins
import math
import numbers
from collections import namedtuple

import tensorlib._C.dtypes as dt
from tensorlib._C.tensor_impl import TensorImpl

__all__ = ["cov", "corrcoef", "quantile", "nanquantile", "histogram", "histogramdd"]

histogram_result = namedtuple("histogram", ["hist", "bin_edges"])
histogramdd_result = namedtuple("histogramdd", ["hist", "bin_edges"])



def _tl():
    import tensorlib
    return tensorlib


# ---- cov, corrcoef ---------------------------------------------------------------------------
def _check_weights(name, w, observations, integral):
    if w is None:
        return None
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.dim()} dimensions")
    if w.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {observations}")
    if integral and w.dtype.category >= 2:
        raise RuntimeError(f"cov(): expected fweights to have integral dtype but got "
                           f"fweights with {w.dtype.scalar_name} dtype")
    if not integral and not w.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got "
                           f"aweights with {w.dtype.scalar_name} dtype")
    if bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")
    return w


def cov(input, *, correction=1, fweights=None, aweights=None):  # noqa: A002
    """The covariance matrix of the variables in input's rows (observations in columns; a
    1-D input is one variable), ATen's formula: weights w = fweights * aweights, mean
    sum(x w) / sum(w), normalised by sum(w) - correction (sum(w) - correction sum(w
    aweights) / sum(w) with aweights)."""
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    n = x.shape[1]
    fw = _check_weights("fweights", fweights, n, True)
    aw = _check_weights("aweights", aweights, n, False)
    w = fw if aw is None else aw if fw is None else fw * aw
    if w is None:
        w_sum = float(n)
        mean = x.sum(1) / w_sum
        norm = w_sum - correction
    else:
        w_sum = w.sum()
        mean = (x * w).sum(1) / w_sum
        norm = w_sum - correction * (w * aw).sum() / w_sum if aw is not None and \
            correction != 0 else w_sum - correction
    if float(norm) <= 0:
        import warnings
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.")
        norm = norm * 0
    centred = x - mean.unsqueeze(1)
    c = centred @ (centred if w is None else centred * w).mT.conj()
    return (c / norm).squeeze()


def corrcoef(input):  # noqa: A002
    """Pearson's correlation coefficients: cov / (std_i std_j), clipped to [-1, 1] (the
    real and imaginary parts apart for complex input), as torch."""
    tl = _tl()
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    std = (tl.real(d) if d.dtype.is_complex else d).sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    if c.dtype.is_complex:
        return tl.complex(tl.real(c).clip(-1, 1), tl.imag(c).clip(-1, 1))
    return c.clip(-1, 1)


# ---- quantile ----------------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    tl = _tl()
    if not isinstance(input, TensorImpl):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not isinstance(q, (TensorImpl, float, int)) or isinstance(q, bool):
        raise TypeError(f"{name}() received an invalid combination of arguments: q must be a "
                        f"float or a Tensor, not {type(q).__name__}")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if input.dtype not in (dt.float32, dt.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, TensorImpl):
        if q.dim() > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q.device != input.device:
            raise RuntimeError(f"{name}() q tensor must be on the same device as the input "
                               f"tensor")
        if q.numel() and not bool(((q >= 0) & (q <= 1)).all()):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        scalar_q, qs = q.dim() == 0, q.reshape(-1)
    elif isinstance(q, numbers.Real):
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        scalar_q, qs = True, tl.tensor([float(q)], dtype=input.dtype, device=input.device)
    else:
        raise TypeError(f"{name}(): argument 'q' must be a number or a Tensor, not "
                        f"{type(q).__name__}")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if dim is None:
        x = input.reshape(-1)
    else:
        from tensorlib._C.views import wrap_dim
        dim = wrap_dim(dim, max(input.dim(), 1))
        x = (input.reshape(1) if input.dim() == 0 else input).movedim(dim, -1)
    ordered = x.sort(-1).values                              # nan sorts last
    nan = ordered.isnan()
    qs = qs.reshape((1,) * (ordered.dim() - 1) + (-1,))     # (..., Q)
    if ignore_nan:
        valid = (~nan).sum(-1, keepdim=True).to(input.dtype)
        ranks = (qs * (valid - 1)).clamp(min=0)
    else:
        last = ordered.shape[-1] - 1
        ranks = tl.where(nan.any(-1, keepdim=True), float(last), qs * last)
    ranks = ranks.expand(tuple(ordered.shape[:-1]) + (qs.shape[-1],))
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.to(dt.int64)
    result = ordered.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = ranks - below.to(ranks.dtype) if interpolation == "linear" else \
            tl.full_like(ranks, 0.5)
        above = ordered.gather(-1, ranks.ceil().to(dt.int64))
        result = tl.lerp(result, above, weights)
    result = result.movedim(-1, 0)                           # (Q, ...)
    if keepdim:
        if dim is None:
            result = result.reshape((result.shape[0],) + (1,) * input.dim())
        elif input.dim():
            result = result.unsqueeze(dim + 1)
    return result.squeeze(0) if scalar_q else result


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):  # noqa: A002
    """The q-th quantiles over dim (all elements when None): a nan in a slice gives nan."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):  # noqa: A002
    """quantile over the values that are not nan (nan where a slice has none)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# ---- histogram, histogramdd ---------------------------------------------------------------
def _bin_edges(values, bins, bounds, dtype, device, d):
    """One dimension's edges: given, or bins equal bins over bounds (the data's min and max
    by default, widened by 0.5 each way when they meet)."""
    tl = _tl()
    if isinstance(bins, TensorImpl):
        if bins.dim() != 1 or bins.numel() < 1:
            raise RuntimeError("torch.histogramdd(): bins tensor should have one dimension "
                               "and at least 1 element")
        return bins.to(dtype)
    if not isinstance(bins, int) or bins <= 0:
        raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {bins} for "
                           f"dimension {d}")
    if bounds is not None:
        lo, hi = float(bounds[0]), float(bounds[1])
    elif values.numel():
        lo, hi = float(values.min()), float(values.max())
    else:
        lo, hi = 0.0, 1.0
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd(): for dim {d}, the leftmost edge {lo} must "
                           f"not exceed the rightmost edge {hi}")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd(): dimension {d}'s range [{lo}, {hi}] is not "
                           f"finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return tl.linspace(lo, hi, bins + 1, dtype=dtype, device=device)


def histogramdd(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """(hist, bin_edges) of the points in input's last dim (one coordinate per dim): bins
    is a count, a count per dim, or a sequence of 1-D edge tensors; range the flat
    [lo0, hi0, lo1, hi1, ...]. Each bin holds [edge_i, edge_i+1), the last one its right
    edge too; points outside are left out. density divides by the total and the bin
    volumes."""
    tl = _tl()
    if input.dtype not in (dt.float32, dt.float64):
        raise RuntimeError(f"\"histogramdd\" not implemented for '{input.dtype.scalar_name}'")
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 "
                           "dimensions")
    dims = input.shape[-1]
    points = input.detach().reshape(-1, dims)
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * dims
    if len(per_dim) != dims:
        raise RuntimeError(f"torch.histogramdd(): expected {dims} sequences of bin edges for "
                           f"a {dims}-dimensional histogram but got {len(per_dim)}")
    if range is not None and len(range) != 2 * dims:
        raise RuntimeError(f"torch.histogramdd(): for a {dims}-dimensional histogram range "
                           f"should have {2 * dims} elements, but got {len(range)}")
    edges = [_bin_edges(points[:, d], per_dim[d], None if range is None else
                        range[2 * d:2 * d + 2], input.dtype, input.device, d)
             for d in builtins.range(dims)]
    counts = [e.numel() - 1 for e in edges]
    w = None
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape[:-1]):
            raise RuntimeError("torch.histogramdd(): if weight tensor is provided it should "
                               "have the same shape as the input tensor excluding its "
                               "innermost dimension")
        w = weight.detach().reshape(-1).to(input.dtype)
    total = 1
    for c in counts:
        total *= max(c, 0)
    hist = tl.zeros(total, dtype=input.dtype, device=input.device)
    if total and points.shape[0]:
        flat = tl.zeros(points.shape[0], dtype=dt.int64, device=input.device)
        inside = tl.ones(points.shape[0], dtype=dt.bool_, device=input.device)
        for d, (e, c) in enumerate(zip(edges, counts)):
            v = points[:, d]
            inside = inside & (v >= e[0]) & (v <= e[-1])
            flat = flat * c + (tl.searchsorted(e, v, right=True) - 1).clamp(0, c - 1)
        weights = inside.to(input.dtype) if w is None else tl.where(inside, w, 0.0)
        hist = hist.scatter_add(0, flat, weights)
    hist = hist.reshape([max(c, 0) for c in counts])
    if density:
        volume = None
        for d, e in enumerate(edges):
            shape = [1] * dims
            shape[d] = -1
            width = (e[1:] - e[:-1]).reshape(shape)
            volume = width if volume is None else volume * width
        hist = hist / (hist.sum() * volume)
    return histogramdd_result(hist, tuple(edges))


def histogram(input, bins=100, *, range=None, weight=None, density=False):  # noqa: A002
    """(hist, bin_edges) of input's values: bins is a count of equal bins over `range`
    (the data's min and max by default) or a 1-D tensor of increasing edges."""
    hist, edges = histogramdd(input.reshape(-1, 1), [bins],
                              range=None if range is None else list(range),
                              weight=None if weight is None else weight.reshape(-1),
                              density=density)
    return histogram_result(hist, edges[0])


TENSOR_METHODS = {"cov": cov, "corrcoef": corrcoef, "quantile": quantile,
                  "nanquantile": nanquantile, "histogram": histogram}
